//! A relay: the wire (wire.rs) to a server that only the redis crate's blocking session reaches
//! — a Sentinel group's master (found through its sentinels), a Redis Cluster's nodes (routed
//! by key, `MOVED` and `ASK` followed), a server spoken to in RESP3 — so that the poll loop
//! (lock/nodes/poll.rs) runs every round, whatever kind its servers are. A thread per such
//! server holds the session (session.rs) and runs, one after the other, the requests the wire
//! hands it; each answer comes back on a channel, and a byte on a socket pair wakes the loop's
//! poll(2) for it. So the loop decides a round, reads what a late server answers behind the
//! request and sends the clean-up behind it on the same wire, exactly as for a plain server;
//! only the carrying is different.
//!
//! What the rounds' argument (lock/nodes/mod.rs) needs of a wire holds here too:
//! - **Order.** One thread runs one wire's requests in the order they were handed over, on one
//!   session: a clean-up sent behind a late request reaches the server after it. A request
//!   that timed out leaves its reply owed on the session's connection, which the session skips
//!   when it comes (blocking.rs); any other failure drops the session, and the next request
//!   connects again (a connection that died while idle is replaced once, within the request's
//!   deadline, as the threads of a round did).
//! - **Bounds.** Each request is bounded by the server's budget (`Server::budget`: a Sentinel
//!   group that still has to be asked for its master gets twice the timeout) from when the
//!   thread takes it up; the loop bounds the round as for any wire, and a wire it gave up on is
//!   dropped. The thread then still runs what it was handed, in order, and ends: what we sent
//!   reaches the server while the process lives, as bytes written to a socket do.
//! - **Wake-ups.** A subscription (`subscribe`) is a connection of its own near the channel's
//!   key (on a cluster, the master of its slot, where the scripts that publish run), made
//!   before the requests handed over with it run, so that a release published right after the
//!   attempt it answers is not missed; its messages are handed on only after the subscription's
//!   own answer, and none after the answer to an `unsubscribe`, as a RESP2 connection does.

mod courier;
mod listener;

use super::endpoint::Server;
use super::failure::{WireAnswer, WireFailure};
use super::replay::Request;
use super::session::Session;
use crate::clock::BootInstant;
pub(in crate::server) use courier::Outcome;
use courier::{Courier, STACK};
use listener::Listener;
use redis::{RedisError, RedisResult, Value};
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

/// What the wire hands the relay's thread.
enum Order {
    Ask {
        request: Request,
        /// Also to the masters a Sentinel group's run used before (`Server::former`).
        everywhere: bool,
    },
    Subscribe {
        channel: String,
        near: String,
    },
    Unsubscribe,
}

/// The wire's end of a relay.
pub(super) struct Relay {
    server: Server,
    orders: Sender<Order>,
    outcomes: Receiver<Outcome>,
    bell: UnixStream,
}

impl Relay {
    /// Starts the thread that will carry requests to `server`, each bounded by its budget
    /// for `timeout`. Nothing is connected until the first request.
    pub(super) fn start(server: &Server, timeout: Duration) -> Result<Relay, WireFailure> {
        let (bell, ringer) = UnixStream::pair().map_err(|e| WireFailure::of(&e))?;
        for end in [&bell, &ringer] {
            end.set_nonblocking(true).map_err(|e| WireFailure::of(&e))?;
        }
        let (orders, taken) = mpsc::channel();
        let (sent, outcomes) = mpsc::channel();
        let courier = Courier {
            sent,
            ringer: Arc::new(ringer),
        };
        let served = server.clone();
        std::thread::Builder::new()
            .name("relay".into())
            .stack_size(STACK)
            .spawn(move || serve(&served, timeout, &taken, &courier))
            .map_err(|e| WireFailure::of(&e))?;
        Ok(Relay {
            server: server.clone(),
            orders,
            outcomes,
            bell,
        })
    }

    /// Hands `request` over; with `everywhere`, also for the former masters of a Sentinel
    /// group's run. True when it has some: the answer then comes once they were asked too,
    /// and is worth waiting for before we go (a release must reach them).
    pub(super) fn ask(&self, request: &Request, everywhere: bool) -> bool {
        let request = request.clone();
        // A thread that is gone answers nothing: `take` finds it so.
        let _ = self.orders.send(Order::Ask {
            request,
            everywhere,
        });
        everywhere && self.server.has_former()
    }

    pub(super) fn subscribe(&self, channel: &str, near: &str) {
        let _ = self.orders.send(Order::Subscribe {
            channel: channel.into(),
            near: near.into(),
        });
    }

    pub(super) fn unsubscribe(&self) {
        let _ = self.orders.send(Order::Unsubscribe);
    }

    /// What came back since last asked, in order; a failure once the thread is gone.
    pub(super) fn take(&mut self) -> Result<Vec<Outcome>, WireFailure> {
        let mut rung = [0u8; 64];
        while matches!((&self.bell).read(&mut rung), Ok(n) if n > 0) {}
        let mut outcomes = Vec::new();
        loop {
            match self.outcomes.try_recv() {
                Ok(outcome) => outcomes.push(outcome),
                Err(TryRecvError::Empty) => return Ok(outcomes),
                Err(TryRecvError::Disconnected) if outcomes.is_empty() => {
                    return Err(WireFailure::new(
                        io::ErrorKind::BrokenPipe,
                        "internal error: the relay to this server stopped",
                    ))
                }
                Err(TryRecvError::Disconnected) => return Ok(outcomes),
            }
        }
    }

    /// Readable when something came back.
    pub(super) fn fd(&self) -> BorrowedFd<'_> {
        self.bell.as_fd()
    }
}

/// The relay's thread: every order in turn, until the wire is dropped and all it handed over is
/// done.
fn serve(server: &Server, timeout: Duration, orders: &Receiver<Order>, courier: &Courier) {
    let mut session: Option<Session> = None;
    let mut listening: Option<Listener> = None;
    let mut queued = std::collections::VecDeque::new();
    loop {
        if queued.is_empty() {
            match orders.recv() {
                Ok(order) => queued.push_back(order),
                Err(_) => return,
            }
        }
        queued.extend(orders.try_iter());
        // A subscription handed over with requests is made before they run (module comment).
        let subscribing = queued.iter().find_map(|order| match order {
            Order::Subscribe { channel, near } => Some((channel.clone(), near.clone())),
            _ => None,
        });
        if let Some((channel, near)) = &subscribing {
            if listening.as_ref().is_none_or(|l| !l.serves(channel)) {
                listening = Listener::start(server, (channel, near), timeout, courier);
            }
            if let Some(listener) = &listening {
                listener.hold();
            }
        }
        let Some(order) = queued.pop_front() else {
            continue;
        };
        match order {
            Order::Ask {
                request,
                everywhere,
            } => {
                let deadline = BootInstant::now().add(server.budget(timeout));
                let answer = ask(server, &mut session, (deadline, timeout), &request);
                // The former masters are asked before the answer is handed on, so that the
                // wire owes it until they were: before we go, what a wire owes is waited for
                // (lock/nodes/behind.rs's `finish`), and a release must reach them too.
                if everywhere {
                    for mut former in server.former(deadline) {
                        let _ = run(&mut former, deadline, &request);
                    }
                }
                courier.hand(Outcome::Answer(answer));
            }
            Order::Subscribe { channel, .. } => {
                let confirmed = listening.as_ref().filter(|l| l.serves(&channel));
                match confirmed {
                    Some(listener) => listener.open(courier, &channel),
                    None => courier.hand(Outcome::Answer(Err(WireFailure::new(
                        io::ErrorKind::NotConnected,
                        "could not subscribe",
                    )))),
                }
            }
            Order::Unsubscribe => {
                let again = queued
                    .iter()
                    .any(|order| matches!(order, Order::Subscribe { .. }));
                let answer = Value::Array(vec![
                    Value::BulkString(b"unsubscribe".to_vec()),
                    Value::Nil,
                    Value::Int(0),
                ]);
                match &listening {
                    Some(listener) => listener.close(courier, again, answer),
                    None => courier.hand(Outcome::Answer(Ok(vec![answer]))),
                }
            }
        }
    }
}

/// One request on the session, connected first if need be, within `deadline`.
fn ask(
    server: &Server,
    session: &mut Option<Session>,
    (deadline, timeout): (BootInstant, Duration),
    request: &Request,
) -> WireAnswer {
    let result = connect_and_run(server, session, (deadline, timeout), request);
    if result.as_ref().is_err_and(|err| !err.is_timeout()) {
        // After any other error the connection's state is unknown, so it is not reused.
        *session = None;
    }
    result.map_err(WireFailure::of_redis)
}

fn connect_and_run(
    server: &Server,
    session: &mut Option<Session>,
    (deadline, timeout): (BootInstant, Duration),
    request: &Request,
) -> RedisResult<Vec<Value>> {
    if let Some(open) = session.as_mut() {
        match run(open, deadline, request) {
            // An open connection may have died while idle (server restarted, idle timeout,
            // a NAT forgot it): that says nothing about the server now, so try a fresh one
            // within the same deadline. Retrying is safe: SET NX with our token, and the
            // compare-and-delete / compare-and-pexpire scripts, do no harm when repeated.
            Err(err) if went_stale(&err) => *session = None,
            outcome => return outcome,
        }
    }
    // The deadline covers TCP, the TLS handshake and AUTH alike (and a Sentinel group's
    // asking, within `timeout` of now).
    let open = session.insert(server.session(deadline, timeout)?);
    run(open, deadline, request)
}

fn run(session: &mut Session, deadline: BootInstant, request: &Request) -> RedisResult<Vec<Value>> {
    session.bound(deadline)?;
    session.forward(request)
}

/// The connection was closed under us, as opposed to a server that is slow or refuses.
fn went_stale(err: &RedisError) -> bool {
    err.is_connection_dropped() && !err.is_timeout()
}
