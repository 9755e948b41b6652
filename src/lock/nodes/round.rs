//! The vocabulary of a round: the request every server is sent (`Op`), what one server
//! replied (`Reply`), why its vote did not count (`NodeError`, and `classify`, which turns what
//! went wrong into one), the clean-up sent behind a late reply (`Cleanup`), and what the loop
//! keeps of a request a round stopped waiting for (`Unfinished`, then a `Task`: behind.rs).

use crate::clock::BootInstant;
use crate::server::{Replay, Request, Session, WireAnswer};
use redis::{RedisError, RedisResult};
use std::sync::Arc;
use std::time::Duration;

/// Why one server's vote did not count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NodeError {
    /// Not reached, timed out, refused our credentials, or cannot serve (read-only, loading…).
    Down(String),
    /// The key exists with another type: a non-redlock client (Redisson's hash) holds it.
    ForeignType,
    /// The round was decided before this server answered (nodes/mod.rs): its request went out,
    /// and what it answers is not counted. Not a failure of the server.
    NotWaitedFor,
}

impl std::fmt::Display for NodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeError::Down(why) => f.write_str(why),
            NodeError::ForeignType => f.write_str("key holds a non-string value"),
            NodeError::NotWaitedFor => f.write_str("not waited for: the round was already decided"),
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

impl<T> Reply<T> {
    /// The reply of a server a round decided without, `started` being the round's start.
    pub(crate) fn not_waited_for(started: BootInstant) -> Reply<T> {
        Reply {
            result: Err(NodeError::NotWaitedFor),
            at: BootInstant::now(),
            latency: started.elapsed(),
        }
    }
}

/// A request that can outlive the round that sent it (`round_until`).
pub(crate) type Op<T> = Arc<dyn Fn(&mut Session) -> RedisResult<T> + Send + Sync>;
/// What to send after a late answer (`None`: the request timed out, and may still be applied),
/// on the connection that carried the request.
pub(crate) type Cleanup<T> = Arc<dyn Fn(&mut Session, Option<&T>) -> RedisResult<()> + Send + Sync>;

/// What went wrong with one server's request, as the reason its vote did not count.
pub(super) fn classify(err: RedisError, timeout: Duration) -> NodeError {
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
    if let Some(words) = crate::server::refusal(&err) {
        return NodeError::Down(words);
    }
    let text = err.to_string();
    let text = text.lines().next().unwrap_or("error").trim();
    NodeError::Down(crate::human::lowercase_first(text))
}

/// A server's request a round stopped waiting for.
pub(crate) struct Unfinished {
    pub(super) id: u64,
    pub(super) index: usize,
    pub(super) replay: Replay,
    /// The round's deadline: no answer by then is a time-out.
    pub(super) by: BootInstant,
}

/// What a task asks the loop to do next.
pub(super) enum Next {
    /// Send this, and give the task its answer.
    Ask(Request),
    /// Send this and forget it: the clean-up.
    Tell(Request),
    /// Its request is on the wire: wait for the answer.
    Wait,
    Done,
}

/// What a task is given.
pub(super) enum Feed {
    /// The answer to its request.
    Answer(WireAnswer),
    /// Nothing new: whether what it has finishes it.
    Check,
    /// Its deadline passed without an answer.
    Expired,
}

/// A late request in the loop's charge (behind.rs).
pub(super) struct Task {
    pub(super) id: u64,
    pub(super) index: usize,
    pub(super) by: BootInstant,
    /// The per-server timeout, for the clean-up's reply.
    pub(super) patience: Duration,
    pub(super) next: Box<dyn FnMut(Feed) -> Next + Send>,
}
