//! Talking to N servers at once: one request per server per round, all in parallel, each bounded
//! by the per-server timeout, so one stopped or black-holed server costs `timeout`, never more,
//! and never delays the others.

use crate::clock::BootInstant;
use crate::server::Server;
use redis::{Connection, RedisError, RedisResult};
use std::time::Duration;

/// Stack of a per-server worker thread: plenty for the redis client, far below the 2 MiB default.
const WORKER_STACK: usize = 256 * 1024;

/// Why one server's vote did not count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NodeError {
    /// Not reached, timed out, refused our credentials, or cannot serve (read-only, loading…).
    Down(String),
    /// The key exists with another type: a non-redlock client (Redisson's hash) holds it.
    ForeignType,
}

impl std::fmt::Display for NodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeError::Down(why) => f.write_str(why),
            NodeError::ForeignType => f.write_str("key holds a non-string value"),
        }
    }
}

/// One server's answer to one round.
pub(crate) struct Reply<T> {
    pub(crate) result: Result<T, NodeError>,
    /// When the answer arrived, for the quorum's end time (T2).
    pub(crate) at: BootInstant,
    pub(crate) latency: Duration,
}

/// The servers and our open connection to each. Connections are kept between rounds (waits,
/// renewals) and replaced after any error, so the next round reconnects; after a late reply,
/// only once the follow-up to that round is done (see `Kept`).
pub(crate) struct Nodes {
    servers: Vec<Server>,
    connections: Vec<Option<Kept>>,
    timeout: Duration,
}

/// An open connection, and whether the reply to its last request is late.
///
/// A connection whose reply is late is kept for one follow-up (`round_on`) rather than
/// replaced, because the late request may still be applied: a failed attempt's SET, most of
/// all. The compare-and-delete that cleans up after it then goes out on the same connection at
/// once, without waiting for the late reply, and a server applies one connection's commands in
/// order, so the delete is applied after that SET whenever the SET is, however slow the network.
/// A new connection could not promise that (its delete may overtake the SET still on its way),
/// and needs a round trip of its own (AUTH, TLS) before it can send anything, which a slow
/// server may never give it in time: the failed attempt's key would then outlive it for the
/// whole TTL.
///
/// Reusing it is safe because the redis client counts the replies it gave up on and discards
/// them when they arrive, so no answer is taken for another's. And its timeout was the read's,
/// never a half-written request's: a write blocks only on a full send buffer, and a connection
/// carries at most two unanswered requests (the late one and its follow-up; the next ordinary
/// round replaces it), a few hundred bytes, far below the smallest send buffer the kernel allows.
pub(crate) struct Kept {
    connection: Connection,
    late: bool,
}

impl Nodes {
    pub(crate) fn new(servers: Vec<Server>, timeout: Duration) -> Nodes {
        let connections = servers.iter().map(|_| None).collect();
        Nodes {
            servers,
            connections,
            timeout,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.servers.len()
    }

    pub(crate) fn servers(&self) -> &[Server] {
        &self.servers
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Runs `op` against every server concurrently and returns the replies in server order.
    /// Every reply is back, or given up on, by `timeout` after the call.
    pub(crate) fn round<T, F>(&mut self, op: F) -> Vec<Reply<T>>
    where
        T: Send,
        F: Fn(&mut Connection) -> RedisResult<T> + Sync,
    {
        for (slot, server) in self.connections.iter_mut().zip(&self.servers) {
            // A Sentinel group's master may have changed since the last round: ask again.
            if slot.as_ref().is_some_and(|kept| kept.late) || !server.keeps_connections() {
                *slot = None;
            }
        }
        let everyone = vec![true; self.servers.len()];
        self.round_on(&everyone, op).into_iter().flatten().collect()
    }

    /// A follow-up to the last round, on the servers whose entry in `targets` is true only: it
    /// goes out on the connection that carried that round's request even if the reply to it is
    /// late (see `Kept`). The others are neither connected to nor asked; their reply is `None`.
    pub(crate) fn round_on<T, F>(&mut self, targets: &[bool], op: F) -> Vec<Option<Reply<T>>>
    where
        T: Send,
        F: Fn(&mut Connection) -> RedisResult<T> + Sync,
    {
        let deadline = BootInstant::now().add(self.timeout);
        let timeout = self.timeout;
        let op = &op;
        let mut jobs = self
            .servers
            .iter()
            .zip(self.connections.iter_mut())
            .zip(targets.iter().copied())
            .enumerate()
            .filter(|(_, (_, wanted))| *wanted)
            .map(|(index, ((server, slot), _))| (index, server, slot));
        let mut replies: Vec<Option<Reply<T>>> = (0..self.servers.len()).map(|_| None).collect();
        // The first target is served on this thread: one spawn fewer, and none at all when only
        // one server is asked.
        let Some((first_index, first_server, first_slot)) = jobs.next() else {
            return replies;
        };
        std::thread::scope(|scope| {
            let handles: Vec<_> = jobs
                .map(|(index, server, slot)| {
                    let work = move || ask(server, slot, deadline, timeout, op);
                    // A small stack: less to map, protect and unmap per server per round.
                    let handle = std::thread::Builder::new()
                        .stack_size(WORKER_STACK)
                        .spawn_scoped(scope, work);
                    (index, handle)
                })
                .collect();
            replies[first_index] = Some(ask(first_server, first_slot, deadline, timeout, op));
            for (index, handle) in handles {
                let reply = handle.ok().and_then(|handle| handle.join().ok());
                replies[index] = Some(reply.unwrap_or_else(|| Reply {
                    result: Err(NodeError::Down(
                        "internal error: no worker thread for this server".into(),
                    )),
                    at: BootInstant::now(),
                    latency: Duration::ZERO,
                }));
            }
        });
        replies
    }
}

fn ask<T>(
    server: &Server,
    slot: &mut Option<Kept>,
    deadline: BootInstant,
    timeout: Duration,
    op: &(impl Fn(&mut Connection) -> RedisResult<T> + Sync),
) -> Reply<T> {
    let started = BootInstant::now();
    let result = connect_and_run(server, slot, deadline, op);
    match (&result, slot.as_mut()) {
        // An answer: every late reply before it has arrived and been discarded.
        (Ok(_), Some(kept)) => kept.late = false,
        (Err(err), Some(kept)) if err.is_timeout() => kept.late = true,
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
    slot: &mut Option<Kept>,
    deadline: BootInstant,
    op: &impl Fn(&mut Connection) -> RedisResult<T>,
) -> RedisResult<T> {
    if let Some(kept) = slot.as_mut() {
        match run(&mut kept.connection, deadline, op) {
            // A kept connection may have died while idle (server restarted, idle timeout,
            // a NAT forgot it): that says nothing about the server now, so try a fresh one
            // within the same deadline. Retrying is safe: SET NX with our token, and the
            // compare-and-delete / compare-and-pexpire scripts, do no harm when repeated.
            Err(err) if went_stale(&err) => *slot = None,
            outcome => return outcome,
        }
    }
    // The connect timeout covers TCP, the TLS handshake and AUTH alike.
    let connection = server.connect(remaining(deadline)?)?;
    let kept = slot.insert(Kept {
        connection,
        late: false,
    });
    run(&mut kept.connection, deadline, op)
}

fn run<T>(
    connection: &mut Connection,
    deadline: BootInstant,
    op: &impl Fn(&mut Connection) -> RedisResult<T>,
) -> RedisResult<T> {
    let left = remaining(deadline)?;
    connection.set_read_timeout(Some(left))?;
    connection.set_write_timeout(Some(left))?;
    op(connection)
}

/// The connection was closed under us, as opposed to a server that is slow or refuses.
fn went_stale(err: &RedisError) -> bool {
    err.is_connection_dropped() && !err.is_timeout()
}

fn remaining(deadline: BootInstant) -> RedisResult<Duration> {
    let left = deadline.remaining();
    if left.is_zero() {
        Err(std::io::Error::from(std::io::ErrorKind::TimedOut).into())
    } else {
        Ok(left)
    }
}

fn classify(err: RedisError, timeout: Duration) -> NodeError {
    if err.code() == Some("WRONGTYPE") {
        return NodeError::ForeignType;
    }
    if err.is_timeout() {
        return NodeError::Down(format!(
            "no answer within {}",
            humantime::format_duration(timeout)
        ));
    }
    if err.is_connection_refusal() {
        return NodeError::Down("connection refused".into());
    }
    let text = err.to_string();
    let text = text.lines().next().unwrap_or("error").trim();
    NodeError::Down(crate::human::lowercase_first(text))
}
