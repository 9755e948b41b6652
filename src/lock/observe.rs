//! What each round of requests looked like, server by server: the engine hands every round to an
//! optional observer (engine.rs, `observe`) so that callers can report it (`-v`). The engine
//! itself never prints.

use super::nodes::NodeError;
use std::time::Duration;

/// One round: the same request sent to every server in parallel.
pub(crate) struct Round<'a> {
    /// `acquire`, `release`, `extend`, `force-release`, `inspect` or `list`.
    pub(crate) step: &'static str,
    /// The key, or the prefix for `list`.
    pub(crate) key: &'a str,
    pub(crate) replies: Vec<ServerReply>,
    /// Servers that said yes (set, deleted, extended, held).
    pub(crate) yes: usize,
    pub(crate) quorum: usize,
    /// From the first request written to the last reply (or time-out).
    pub(crate) elapsed: Duration,
    /// The validity obtained, for the steps that obtain one.
    pub(crate) validity: Option<Duration>,
}

/// One server's part in a round. `server` is the redacted URL.
pub(crate) struct ServerReply {
    pub(crate) server: String,
    /// What the server answered, in a word or two, or why it did not count.
    pub(crate) outcome: Result<String, NodeError>,
    pub(crate) latency: Duration,
}

/// Called once per round, after the round, with what happened.
pub(crate) type Observer = Box<dyn FnMut(&Round<'_>) + Send>;
