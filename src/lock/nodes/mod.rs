//! Talking to N servers at once: one request per server per round, all in parallel, each bounded
//! by the per-server timeout, so one stopped or black-holed server costs `timeout`, never more,
//! and never delays the others.
//!
//! Two ways to run a round, with the same properties: when every server is plain (TCP or a Unix
//! socket), one thread and one poll(2) over all their sockets (poll.rs); otherwise (a Sentinel
//! group, a cluster, TLS) a thread per server, each with the redis crate's blocking connection
//! (threads.rs). A round's requests are the same closures either way (server/replay.rs).
//! - round.rs: a round's vocabulary: the request, a server's reply, a node's error, a clean-up.
//! - threads.rs: the thread-per-server rounds; ask.rs: one server's request on its thread;
//!   kept.rs: its connection, kept between rounds; late.rs: a round decided before every server
//!   answered, and the workers left waiting for the others.
//! - poll.rs: the one-thread rounds; behind.rs: the late replies they stopped waiting for;
//!   listen.rs: a waiter listening on their connections between rounds.

mod ask;
mod behind;
mod kept;
mod late;
mod listen;
mod poll;
mod round;
mod threads;

use crate::clock::BootInstant;
// cluster: requests go out on a `Session` (server/session.rs), a plain connection or a
// cluster's nodes routed by key; `keys::Layout::of(session)` names the keys for it.
use crate::server::{Server, Session};
use late::Late;
pub(crate) use listen::Heard;
use poll::{Loop, Unfinished};
use redis::RedisResult;
pub(crate) use round::{Cleanup, NodeError, Op, Reply};
use std::os::fd::BorrowedFd;
use std::time::Duration;
use threads::Threads;

/// The servers, and our connections to them: on one thread with poll(2) when every server is
/// plain, otherwise a thread per server (threads.rs), whose connections are kept between rounds
/// (waits, renewals) and replaced after any error (see `Kept`).
pub(crate) struct Nodes {
    servers: Vec<Server>,
    timeout: Duration,
    /// The thread-per-server rounds' connections and workers: empty when `poll` runs the rounds.
    threads: Threads,
    /// The poll loop's wires, when every server is plain.
    poll: Option<Loop>,
}

/// The servers a round decided early did not wait for: `Nodes::settle` says what their late
/// replies need; dropped, nothing.
pub(crate) enum Pending<T> {
    Threads(Late<T>),
    /// Their requests, still on their wires, and the closure that sent them (behind.rs).
    Poll(Vec<Unfinished>, Op<T>),
}

impl Nodes {
    pub(crate) fn new(servers: Vec<Server>, timeout: Duration) -> Nodes {
        Nodes {
            poll: Loop::new(&servers),
            threads: Threads::new(&servers),
            servers,
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
        F: Fn(&mut Session) -> RedisResult<T> + Sync,
    {
        self.round_reaching(op, false)
    }

    /// `round`, also sent to the masters a Sentinel group's run used before the one it uses
    /// now (`Server::former`), their answers not counted: a release or an extension, so that
    /// no copy of the lock is left where the sentinels once pointed.
    pub(crate) fn round_everywhere<T, F>(&mut self, op: F) -> Vec<Reply<T>>
    where
        T: Send,
        F: Fn(&mut Session) -> RedisResult<T> + Sync,
    {
        self.round_reaching(op, true)
    }

    fn round_reaching<T, F>(&mut self, op: F, former: bool) -> Vec<Reply<T>>
    where
        T: Send,
        F: Fn(&mut Session) -> RedisResult<T> + Sync,
    {
        if let Some(poll) = &mut self.poll {
            // A request still in flight from a round decided without it goes out first on
            // its wire, and is answered first: nothing to wait for here.
            poll.retire_stalled();
            let everyone = vec![true; self.servers.len()];
            let (replies, _) = poll.round(&everyone, self.timeout, (&op, None), |_| false);
            return replies.into_iter().flatten().collect();
        }
        // A request still in flight from a round decided without it (a late SET of ours) must
        // reach its server before this one: a release overtaking it would leave that copy of
        // the key behind.
        self.threads.join_late();
        self.threads.drop_late();
        let everyone = vec![true; self.servers.len()];
        let timing = (self.timeout, former);
        let replies = self.threads.round_on(&self.servers, timing, &everyone, op);
        replies.into_iter().flatten().collect()
    }

    /// A follow-up to the last round, on the servers whose entry in `targets` is true only: it
    /// goes out on the connection that carried that round's request even if the reply to it is
    /// late (see `Kept`). The others are neither connected to nor asked; their reply is `None`.
    pub(crate) fn round_on<T, F>(&mut self, targets: &[bool], op: F) -> Vec<Option<Reply<T>>>
    where
        T: Send,
        F: Fn(&mut Session) -> RedisResult<T> + Sync,
    {
        if let Some(poll) = &mut self.poll {
            return poll.round(targets, self.timeout, (&op, None), |_| false).0;
        }
        self.threads
            .round_on(&self.servers, (self.timeout, false), targets, op)
    }
}

impl Nodes {
    /// Runs `op` against every server at once, like `round`, but returns as soon as `decided`
    /// says the replies in hand settle the outcome, without waiting for the slowest servers
    /// (their entry is `None`, and the `Pending` names them). A reply that arrives later is
    /// never counted. With `listen` (only where `listens`), every connection also subscribes
    /// to that channel behind the request, for `listen` to hear.
    pub(crate) fn round_until<T: Send + 'static>(
        &mut self,
        op: Op<T>,
        decided: impl Fn(&[Option<Reply<T>>]) -> bool,
        listen: Option<&str>,
    ) -> (Vec<Option<Reply<T>>>, Pending<T>) {
        let Some(poll) = &mut self.poll else {
            let (replies, late) =
                self.threads
                    .round_until(&self.servers, self.timeout, op, decided);
            return (replies, Pending::Threads(late));
        };
        poll.retire_stalled();
        let everyone = vec![true; self.servers.len()];
        let (replies, late) = poll.round(&everyone, self.timeout, (&*op, listen), decided);
        (replies, Pending::Poll(late, op))
    }

    /// Whether a waiter can listen on the rounds' own connections (`listen`): every server is
    /// plain. Otherwise it subscribes on connections of its own (queue::Subscriptions).
    pub(crate) fn listens(&self) -> bool {
        self.poll.is_some()
    }

    /// Listens for messages on `channel` on every server's connection until one comes, `bell`
    /// is readable, or `until` (see poll.rs's `Loop::listen`). Without `listens`, just waits.
    pub(crate) fn listen(
        &mut self,
        channel: &str,
        until: BootInstant,
        bell: Option<BorrowedFd<'_>>,
    ) -> Heard {
        match &mut self.poll {
            Some(poll) => poll.listen(channel, until, bell),
            None => {
                std::thread::sleep(until.remaining());
                Heard::default()
            }
        }
    }

    /// What the late replies of a round decided early need: `cleanup` goes out behind each
    /// late request, on its connection, given the late reply (`None` if none came in time).
    /// With `at_once`, the caller goes on without another round soon (it holds a grant), so
    /// on the one-thread rounds a clean-up whose reply is not in yet goes out now, given `None`,
    /// rather than when the loop next runs; a thread of a round sends it as soon as it can.
    pub(crate) fn settle<T: Send + 'static>(
        &mut self,
        pending: Pending<T>,
        cleanup: Option<Cleanup<T>>,
        at_once: bool,
    ) {
        match pending {
            Pending::Threads(late) => late.settle(cleanup),
            Pending::Poll(late, op) => {
                if let Some(poll) = &mut self.poll {
                    poll.adopt(late, op, cleanup, (self.timeout, at_once));
                }
            }
        }
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        if let Some(poll) = &mut self.poll {
            poll.finish();
        }
        self.threads.join_late();
    }
}
