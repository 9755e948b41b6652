//! Talking to N servers at once: one request per server per round, all in parallel, each bounded
//! by the per-server timeout, so one stopped or black-holed server costs `timeout`, never more,
//! and never delays the others.
//!
//! Two ways to run a round, with the same properties: when every server is plain (TCP or a Unix
//! socket), one thread and one poll(2) over all their sockets (poll.rs); otherwise (a Sentinel
//! group, a cluster, TLS) a thread per server, each with the redis crate's blocking connection
//! (below; a round decided before every server answered is late.rs's, one server's request
//! ask.rs's). A round's requests are the same closures either way (server/replay.rs).

mod ask;
mod behind;
mod late;
mod listen;
mod poll;

use crate::clock::BootInstant;
// cluster: requests go out on a `Session` (server/session.rs), a plain connection or a
// cluster's nodes routed by key; `keys::Layout::of(session)` names the keys for it.
use crate::server::{Server, Session};
use ask::ask;
use late::Late;
pub(crate) use listen::Heard;
use poll::{Loop, Unfinished};
use redis::RedisResult;
use std::os::fd::BorrowedFd;
use std::sync::Arc;
use std::thread::JoinHandle;
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
    /// Workers of rounds decided without them, still waiting for their server's late reply
    /// (and cleaning up after it); joined before we go, so that no clean-up is cut short.
    /// A worker hands back its connection once the late reply (and clean-up) was read from it.
    workers: Vec<JoinHandle<Option<(usize, Kept)>>>,
    /// The poll loop's wires, when every server is plain: then the fields above stay empty.
    poll: Option<Loop>,
}

/// The servers a round decided early did not wait for: `Nodes::settle` says what their late
/// replies need; dropped, nothing.
pub(crate) enum Pending<T> {
    Threads(Late<T>),
    /// Their requests, still on their wires, and the closure that sent them (behind.rs).
    Poll(Vec<Unfinished>, Op<T>),
}

/// A request that can outlive the round that sent it (`round_until`).
pub(crate) type Op<T> = Arc<dyn Fn(&mut Session) -> RedisResult<T> + Send + Sync>;
/// What to send after a late answer (`None`: the request timed out, and may still be applied),
/// on the connection that carried the request.
pub(crate) type Cleanup<T> = Arc<dyn Fn(&mut Session, Option<&T>) -> RedisResult<()> + Send + Sync>;

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
    connection: Session,
    late: bool,
}

impl Nodes {
    pub(crate) fn new(servers: Vec<Server>, timeout: Duration) -> Nodes {
        let connections = servers.iter().map(|_| None).collect();
        Nodes {
            poll: Loop::new(&servers),
            servers,
            connections,
            timeout,
            workers: Vec::new(),
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
        self.join_late();
        self.drop_late();
        let everyone = vec![true; self.servers.len()];
        self.round_on(&everyone, op).into_iter().flatten().collect()
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
                replies[index] = Some(reply.unwrap_or_else(no_worker));
            }
        });
        replies
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
            let (replies, late) = self.round_until_threads(op, decided);
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

    /// Waits for the workers of earlier rounds (each is bounded by its round's deadline, plus one
    /// clean-up request), taking back the connections they hand back.
    fn join_late(&mut self) {
        self.reclaim(true);
    }

    /// Takes back the connections of the late workers that are done (all of them, waiting for
    /// each, with `wait`), where we have none to that server meanwhile.
    fn reclaim(&mut self, wait: bool) {
        let (done, running): (Vec<_>, Vec<_>) = self
            .workers
            .drain(..)
            .partition(|worker| wait || worker.is_finished());
        self.workers = running;
        for worker in done {
            if let Ok(Some((index, kept))) = worker.join() {
                let slot = &mut self.connections[index];
                if slot.is_none() {
                    *slot = Some(kept);
                }
            }
        }
    }

    /// A new round does not reuse a connection whose last reply is late (see `Kept`), nor a
    /// Sentinel group's: its master may have changed since the last round, so ask again.
    fn drop_late(&mut self) {
        for (slot, server) in self.connections.iter_mut().zip(&self.servers) {
            if slot.as_ref().is_some_and(|kept| kept.late) || !server.keeps_connections() {
                *slot = None;
            }
        }
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        if let Some(poll) = &mut self.poll {
            poll.finish();
        }
        self.join_late();
    }
}

fn no_worker<T>() -> Reply<T> {
    Reply {
        result: Err(NodeError::Down(
            "internal error: no worker thread for this server".into(),
        )),
        at: BootInstant::now(),
        latency: Duration::ZERO,
    }
}
