//! One server's part in a round: connect if needed (within the round's deadline, which covers
//! TCP, TLS and AUTH), send the request, and turn what went wrong into a `NodeError`
//! (round.rs's `classify`); and for a release or an extension, the same request to the masters
//! a Sentinel group's run used before (`reach_former`).

use super::connection::OpenConnection;
use super::round::{classify, Reply};
use crate::clock::BootInstant;
use crate::server::{Server, Session};
use redis::{RedisError, RedisResult};
use std::time::Duration;

pub(super) fn ask<T>(
    server: &Server,
    slot: &mut Option<OpenConnection>,
    deadline: BootInstant,
    timeout: Duration,
    op: &(impl Fn(&mut Session) -> RedisResult<T> + Sync + ?Sized),
) -> Reply<T> {
    let started = BootInstant::now();
    let result = connect_and_run(server, slot, (deadline, timeout), op);
    match (&result, slot.as_mut()) {
        // An answer: every late reply before it has arrived and been discarded.
        (Ok(_), Some(open)) => open.late = false,
        (Err(err), Some(open)) if err.is_timeout() => open.late = true,
        // After any other error the connection's state is unknown, so it is not reused.
        (Err(_), _) => *slot = None,
        (Ok(_), None) => {}
    }
    let result = result.map_err(|err| classify(err, timeout));
    let at = BootInstant::now();
    Reply {
        result,
        at,
        latency: at.since(started),
    }
}

fn connect_and_run<T>(
    server: &Server,
    slot: &mut Option<OpenConnection>,
    (deadline, timeout): (BootInstant, Duration),
    op: &(impl Fn(&mut Session) -> RedisResult<T> + ?Sized),
) -> RedisResult<T> {
    if let Some(open) = slot.as_mut() {
        match run(&mut open.connection, deadline, op) {
            // An open connection may have died while idle (server restarted, idle timeout,
            // a NAT forgot it): that says nothing about the server now, so try a fresh one
            // within the same deadline. Retrying is safe: SET NX with our token, and the
            // compare-and-delete / compare-and-pexpire scripts, do no harm when repeated.
            Err(err) if went_stale(&err) => *slot = None,
            outcome => return outcome,
        }
    }
    // The deadline covers TCP, the TLS handshake and AUTH alike (and a Sentinel group's
    // asking, within `timeout` of now). cluster: `session` (a cluster's connects to the node
    // each request's key needs).
    let connection = server.session(deadline, timeout)?;
    let open = slot.insert(OpenConnection {
        connection,
        late: false,
    });
    run(&mut open.connection, deadline, op)
}

pub(super) fn run<T>(
    connection: &mut Session,
    deadline: BootInstant,
    op: &(impl Fn(&mut Session) -> RedisResult<T> + ?Sized),
) -> RedisResult<T> {
    // cluster: the session bounds every step by the deadline (a cluster's redirections too).
    connection.bound(deadline)?;
    op(connection)
}

/// Runs `op` by `deadline` on every master a Sentinel group's run used before the one it uses
/// now (`Server::former`), after the vote was taken: a release or an extension reaches them
/// too, so that no copy of the lock is left where the sentinels once pointed. What they answer
/// is not counted.
pub(super) fn reach_former<T>(
    server: &Server,
    deadline: BootInstant,
    op: &(impl Fn(&mut Session) -> RedisResult<T> + ?Sized),
) {
    for mut session in server.former(deadline) {
        let _ = run(&mut session, deadline, op);
    }
}

/// The connection was closed under us, as opposed to a server that is slow or refuses.
fn went_stale(err: &RedisError) -> bool {
    err.is_connection_dropped() && !err.is_timeout()
}
