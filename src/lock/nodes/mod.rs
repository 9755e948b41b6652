//! Talking to N servers at once: one request per server per round, all in parallel, each bounded
//! by the per-server timeout, so one stopped or black-holed server costs `timeout`, never more,
//! and never delays the others.
//!
//! **A round is decided the moment its outcome is certain**, not when the slowest server
//! answers: an acquire as soon as a quorum granted one key (validity counted to that moment) or
//! no key can reach one (`round_until`); a release once a quorum deleted, an extension, a
//! hold's give-back (keep.rs), a waiter's leave and a fence's write-back once a quorum did it
//! (`round_decided`, `round_on_decided`; a refusal waits for every server, so that what a
//! failure reports matches what it did). Every server is still sent its request before the
//! round returns (to a server yet to accept the connection, or over TLS to answer the
//! handshake, it is queued behind it, and written when the server does: server/wire.rs's
//! `sending`); what the ones not waited for answer is never counted. So a stopped
//! minority, which is what Redlock has N servers to tolerate, costs an operation nothing, where
//! waiting for it cost every acquire, release and hand-over the whole `--timeout`. (With -v every
//! answer is shown, so the round waits for all; a status, a history and the latch's rounds read
//! every server's copy and wait for all too.)
//!
//! Why deciding early is safe. A late answer can only add to what the round concluded, and what
//! it may leave is cleaned up as a failed attempt's is:
//! - **Exclusion never depends on the servers not waited for.** Every grant rests on a quorum's
//!   yes and on validity counted from before the first request to the vote that completed that
//!   quorum (lock/attempt.rs, steps 1–2); a later vote would only move T2 later, so stopping at
//!   the quorum counts no validity the lock does not have. For a mutex, a shared lock (its
//!   readers' set is written by the same script as the grant) and a semaphore (a quorum on one
//!   slot's key) alike, two quorums share a server, which is all the exclusion argument uses.
//! - **A late grant is our own token on a minority.** It blocks no quorum (the others still
//!   make one without it), is deleted by our release (sent to every server; on the same
//!   connection behind the SET when the same process releases, as `exec` does), and otherwise
//!   expires with the ttl. A late grant of a semaphore slot other than the one we won, a place
//!   in the queue, or any yes to a failed attempt, is withdrawn behind the late request on its
//!   connection (`settle`, lock/withdraw.rs), as before: the clean-up for "no answer" is the
//!   widest, so it is sent at once when we cannot wait (`at_once`, and before we go).
//! - **A release, an extension, a keep or a leave needs nothing back.** A late
//!   compare-and-delete removes our own key or nothing; a late compare-and-pexpire lengthens our
//!   own key on a minority, which no validity we count relies on; a late keep swaps our own
//!   token for the kept value, which expires with the hold; a late leave removes a place that
//!   would lapse with its lease. A refused extension waits for every server, because it puts
//!   back what a minority extended (holder.rs's `restore`).
//! - **Fences.** The write-back counts once a quorum W1 confirmed it (fence.rs's argument needs
//!   a quorum and no more); a late write-back raises a counter to a number already issued, and
//!   counters only grow, so it can never lower a later grant's fence.
//! - **The latch** decides on the union over a quorum (lock/latch/mod.rs, rule 3), and treats a
//!   server not heard from as one that is down; deciding its rounds on the first quorum of
//!   answers would be the same as the rest being down, which its argument covers. Its rounds
//!   still wait for every server: a repair needs a majority of *all* servers, which a later
//!   answer can complete, so "certain" needs its own rule there.
//! - **Before we go**, the poll loop sends every clean-up still due and writes everything we
//!   owe, but does not wait for replies (behind.rs's `finish`; a connection still connecting,
//!   and over TLS one no reply has come back on yet, is given a little time: server/socket.rs):
//!   a server applies a connection's commands in order and before it reads the end of the
//!   connection, so what we wrote reaches a stopped server when it runs again. What is lost
//!   anyway (a reset by something in between; what a connection held for a server that had
//!   not accepted it yet, a stopped one whose listen queue is full or a host that is down; over
//!   TLS, what a connection held for a handshake its server had not answered yet, or what a
//!   resumed server had not read when its answer to the first record met our closed socket)
//!   leaves our token on a minority until the ttl, or sets nothing there, as a server that
//!   stays away longer than the wait did before: a liveness cost, never an exclusion one.
//! - **A request written after its round** (held by a connection its server accepted late)
//!   is a request its server reads late, which the points above cover: what it sets is our
//!   token on a minority, and the clean-up settled for it goes out behind it on the same wire.
//! - **TLS** changes none of the rest: a TLS wire is a plain wire with rustls's state machine
//!   between its queue and its socket (server/socket.rs), so its server still applies our
//!   requests in the order we queued them, on one connection, and a late reply is still read
//!   and dropped behind the request, in order, before any reply that follows it.
//!
//! - **Relays** change none of it: a server only the redis crate's session reaches (a Sentinel
//!   group, a cluster, RESP3) is a wire whose requests a thread of its own carries, in the
//!   order handed over, on one session (server/relay.rs); the round, its decision, the late
//!   replies and their clean-ups are the loop's, as for any wire. Before we go, what such a
//!   wire still owes is waited for as an unanswered TLS handshake is (behind.rs's `finish`):
//!   its thread goes with the process and may not have written it yet, so a server that is
//!   merely slower is waited for, a stopped one not to the end; what is lost with it is a
//!   liveness cost, as above.
//!
//! One way to run a round, for every kind of server: one thread and one poll(2) over every
//! server's wire (poll.rs), a socket of ours (TCP, TLS, a Unix socket) or a relay's. A round's
//! requests are closures run over the replies so far (server/replay.rs), so the same closure
//! serves any server; a relay sends each whole, by key (on a cluster, also to each master by
//! name: `Session::each_node`). Why not a thread per server, the way before: a round's
//! decision, its late replies and their clean-ups would be argued, built and tested twice, and
//! a round decided early would leave threads behind to be joined; and why not the poll loop
//! speaking Sentinel and Cluster itself: discovery, slot maps and redirections are the redis
//! crate's and ours already (server/sentinel, server/cluster), and a relay reuses them as they
//! are for the cost of one thread per such server.
//! - round.rs: a round's vocabulary: the request, a server's reply, a node's error, a clean-up.
//! - poll.rs: the rounds; behind.rs: the late replies they stopped waiting for; listen.rs: a
//!   waiter listening on their connections between rounds.

mod behind;
mod listen;
mod poll;
mod round;

use crate::clock::BootInstant;
// cluster: requests go out on a `Session` (server/session.rs), a plain connection or a
// cluster's nodes routed by key; `keys::Layout::of(session)` names the keys for it.
use crate::server::{Server, Session};
pub(crate) use listen::Heard;
use poll::Loop;
use redis::RedisResult;
use round::Unfinished;
pub(crate) use round::{Cleanup, NodeError, Op, Reply};
use std::os::fd::BorrowedFd;
use std::time::Duration;

/// The servers, and our wires to them, kept between rounds (waits, renewals) and replaced after
/// any error (poll.rs).
pub(crate) struct Nodes {
    /// The wires, and the servers and per-server timeout they serve (poll.rs).
    poll: Loop,
}

/// The servers a round decided early did not wait for: `Nodes::settle` says what their late
/// replies need; dropped, nothing. Their requests, still on their wires, and the closure that
/// sent them (behind.rs).
pub(crate) struct Pending<T> {
    late: Vec<Unfinished>,
    op: Op<T>,
}

impl Nodes {
    pub(crate) fn new(servers: Vec<Server>, timeout: Duration) -> Nodes {
        Nodes {
            poll: Loop::new(servers, timeout),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.poll.servers.len()
    }

    pub(crate) fn servers(&self) -> &[Server] {
        &self.poll.servers
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.poll.timeout
    }

    /// Runs `op` against every server concurrently and returns the replies in server order.
    /// Every reply is back, or given up on, by `timeout` after the call.
    pub(crate) fn round<T, F>(&mut self, op: F) -> Vec<Reply<T>>
    where
        F: Fn(&mut Session) -> RedisResult<T>,
    {
        self.round_reaching(op, false)
    }

    /// `round`, each wire also subscribing to `channel` behind the request, in the same burst,
    /// for `listen` to hear what is published there after the server read the request.
    pub(crate) fn round_listening<T, F>(&mut self, op: F, channel: &str) -> Vec<Reply<T>>
    where
        F: Fn(&mut Session) -> RedisResult<T>,
    {
        self.poll.retire_stalled();
        let everyone = vec![true; self.len()];
        let ask = (&op, Some(channel), false);
        let (replies, _) = self
            .poll
            .round(&everyone, self.poll.timeout, ask, |_| false);
        replies.into_iter().flatten().collect()
    }

    /// `round`, also sent to the masters a Sentinel group's run used before the one it uses
    /// now (`Server::former`), their answers not counted: a release or an extension, so that
    /// no copy of the lock is left where the sentinels once pointed.
    pub(crate) fn round_everywhere<T, F>(&mut self, op: F) -> Vec<Reply<T>>
    where
        F: Fn(&mut Session) -> RedisResult<T>,
    {
        self.round_reaching(op, true)
    }

    fn round_reaching<T, F>(&mut self, op: F, everywhere: bool) -> Vec<Reply<T>>
    where
        F: Fn(&mut Session) -> RedisResult<T>,
    {
        // A request still in flight from a round decided without it goes out first on its
        // wire, and is answered first: nothing to wait for here.
        self.poll.retire_stalled();
        let everyone = vec![true; self.len()];
        let ask = (&op, None, everywhere);
        let (replies, _) = self
            .poll
            .round(&everyone, self.poll.timeout, ask, |_| false);
        replies.into_iter().flatten().collect()
    }

    /// `round_everywhere`, ended as soon as `decided` says the replies in hand settle its
    /// outcome (the module comment says why that is safe): the servers it did not wait for are
    /// `None`. Their request has gone out, and what they answer is read and dropped when their
    /// connection is next used, or left unread when we go. For a request that needs no clean-up
    /// whatever it answers: a release, an extension, a fence's write-back.
    pub(crate) fn round_decided<T, F>(
        &mut self,
        op: F,
        decided: impl Fn(&[Option<Reply<T>>]) -> bool,
    ) -> Vec<Option<Reply<T>>>
    where
        F: Fn(&mut Session) -> RedisResult<T>,
    {
        let everyone = vec![true; self.len()];
        self.round_reaching_until(&everyone, op, decided, true)
    }

    /// `round_on`, ended like `round_decided`: the follow-up to the last round on the servers
    /// whose entry in `targets` is true, decided once `decided` says so.
    pub(crate) fn round_on_decided<T, F>(
        &mut self,
        targets: &[bool],
        op: F,
        decided: impl Fn(&[Option<Reply<T>>]) -> bool,
    ) -> Vec<Option<Reply<T>>>
    where
        F: Fn(&mut Session) -> RedisResult<T>,
    {
        self.round_reaching_until(targets, op, decided, false)
    }

    fn round_reaching_until<T, F>(
        &mut self,
        targets: &[bool],
        op: F,
        decided: impl Fn(&[Option<Reply<T>>]) -> bool,
        everywhere: bool,
    ) -> Vec<Option<Reply<T>>>
    where
        F: Fn(&mut Session) -> RedisResult<T>,
    {
        if everywhere {
            self.poll.retire_stalled();
        }
        let ask = (&op, None, everywhere);
        let (replies, late) = self.poll.round(targets, self.poll.timeout, ask, decided);
        self.poll.let_go(late, self.poll.timeout);
        replies
    }

    /// A follow-up to the last round, on the servers whose entry in `targets` is true only: it
    /// goes out on the wire that carried that round's request even if the reply to it is late
    /// (poll.rs). The others are neither connected to nor asked; their reply is `None`.
    pub(crate) fn round_on<T, F>(&mut self, targets: &[bool], op: F) -> Vec<Option<Reply<T>>>
    where
        F: Fn(&mut Session) -> RedisResult<T>,
    {
        let ask = (&op, None, false);
        self.poll
            .round(targets, self.poll.timeout, ask, |_| false)
            .0
    }

    /// Runs `op` against every server at once, like `round`, but returns as soon as `decided`
    /// says the replies in hand settle the outcome, without waiting for the slowest servers
    /// (their entry is `None`, and the `Pending` names them). A reply that arrives later is
    /// never counted. With `listen`, every wire also subscribes to that channel behind the
    /// request, for `listen` to hear.
    pub(crate) fn round_until<T: Send + 'static>(
        &mut self,
        op: Op<T>,
        decided: impl Fn(&[Option<Reply<T>>]) -> bool,
        listen: Option<&str>,
    ) -> (Vec<Option<Reply<T>>>, Pending<T>) {
        self.poll.retire_stalled();
        let everyone = vec![true; self.len()];
        let ask = (&*op, listen, false);
        let (replies, late) = self.poll.round(&everyone, self.poll.timeout, ask, decided);
        (replies, Pending { late, op })
    }

    /// Listens for messages on `channel` on every server's wire until one comes, `bell` is
    /// readable, or `until` (see listen.rs's `Loop::listen`).
    pub(crate) fn listen(
        &mut self,
        channel: &str,
        until: BootInstant,
        bell: Option<BorrowedFd<'_>>,
    ) -> Heard {
        self.poll.listen(channel, until, bell)
    }

    /// What the late replies of a round decided early need: `cleanup` goes out behind each
    /// late request, on its wire, given the late reply (`None` if none came in time). With
    /// `at_once`, the caller goes on without another round soon (it holds a grant), so a
    /// clean-up whose reply is not in yet goes out now, given `None`, rather than when the
    /// loop next runs.
    pub(crate) fn settle<T: Send + 'static>(
        &mut self,
        pending: Pending<T>,
        cleanup: Option<Cleanup<T>>,
        at_once: bool,
    ) {
        let timing = (self.poll.timeout, at_once);
        self.poll.adopt(pending.late, pending.op, cleanup, timing);
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        self.poll.finish(self.poll.timeout);
    }
}
