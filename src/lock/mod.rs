//! The Redlock algorithm over N independent servers: acquire, release, extend, keep and inspect
//! a `Target` (a mutex or a semaphore). Everything here returns values and typed errors; it
//! never prints and never exits.
//!
//! - target.rs: what is locked; keys.rs: every key name, built and parsed; limit.rs: the number
//!   of slots a semaphore remembers, checked at each grant.
//! - attempt.rs: one attempt and its safety argument; vote.rs: what its servers said;
//!   withdraw.rs: its clean-up;
//!   wait.rs: retrying until `--wait` runs out.
//! - queue/: the waiters' queue and its hand-over protocol, and the wake-up listeners.
//! - shared.rs: shared holders (`--shared`) and why they exclude writers.
//! - holder.rs: release and extend; keep.rs: `--hold-at-least`; fence.rs: fencing numbers.
//! - inspect.rs: reading what the servers hold; verdict.rs: the quorum's verdict on it.
//! - nodes/: one round of requests to every server; quorum.rs: the arithmetic of a round;
//!   script.rs: the Lua scripts' cache; observe.rs: rounds shown to `-v`.

mod attempt;
mod fence;
mod holder;
mod inspect;
mod keep;
pub(crate) mod keys;
mod limit;
mod nodes;
mod observe;
mod queue;
pub(crate) mod quorum;
mod script;
mod shared;
mod target;
mod verdict;
mod vote;
mod wait;
mod withdraw;

use crate::clock::BootInstant;
use crate::server::Server;
pub(crate) use fence::holder_fence;
pub(crate) use holder::Released;
pub(crate) use inspect::{Inspection, Waiting as QueuedWaiter};
pub(crate) use keep::{Keep, Kept};
pub(crate) use limit::Limit;
pub(crate) use nodes::NodeError;
use nodes::{Nodes, Reply};
pub(crate) use observe::{Observer, Round};
use std::time::Duration;
pub(crate) use target::{Kind, Target};
pub(crate) use verdict::{
    describe_foreign, describe_shared, describe_token, holding, Holding, KeyState, ServerState,
    SharedHolder,
};
pub(crate) use wait::{jitter, RetryPolicy, WaitProgress, Waiting, Wake};

/// A lock this process holds.
#[derive(Debug, Clone)]
pub(crate) struct Held {
    /// The key the grant holds: the lock's, or a semaphore's slot.
    pub(crate) key: String,
    pub(crate) token: String,
    pub(crate) ttl: Duration,
    /// How long the lock is certainly ours, counted from `since`.
    pub(crate) validity: Duration,
    pub(crate) since: BootInstant,
    /// Servers that confirmed it.
    pub(crate) votes: usize,
    /// The fencing number of this grant (`--fence`).
    pub(crate) fence: Option<u64>,
    /// The semaphore slot this grant holds.
    pub(crate) slot: Option<usize>,
}

impl Held {
    /// A grant (or an extension) of `key` by `votes` servers, valid for `validity` from
    /// `since`; plain, with no fence and no slot.
    fn granted(
        key: &str,
        token: &str,
        ttl: Duration,
        (validity, since): (Duration, BootInstant),
        votes: usize,
    ) -> Held {
        Held {
            key: key.to_string(),
            token: token.to_string(),
            ttl,
            validity,
            since,
            votes,
            fence: None,
            slot: None,
        }
    }

    /// When the lock may no longer be ours.
    pub(crate) fn deadline(&self) -> BootInstant {
        self.since.add(self.validity)
    }
}

/// Why an operation did not succeed, in the terms the exit codes need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LockError {
    /// Enough servers answered, and someone else holds the lock on too many of them.
    Busy { holder: Option<String> },
    /// Too few servers answered properly to decide; `detail` names them and why.
    Unavailable { detail: String },
    /// The token does not hold the lock on a quorum (expired, released or taken over). It still
    /// held it on `acted` servers (a minority), and was deleted or extended there; `undone` of
    /// those extensions were put back.
    NotHeld { acted: usize, undone: usize },
    /// The token holds the lock, but in the other mode: shared when `holds_shared`, for a
    /// request made without `--shared`, or exclusively for one made with it. Nothing was done.
    OtherMode { holds_shared: bool },
    /// A signal arrived while waiting; nothing is held.
    Interrupted(i32),
    /// The name is a semaphore of `slots` slots, not of the number asked for (limit.rs). Nothing
    /// was done, or what an attempt set was withdrawn.
    LimitMismatch { slots: usize },
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Busy { holder: Some(h) } => write!(f, "held by {h}"),
            LockError::Busy { holder: None } => write!(f, "held by someone else"),
            LockError::Unavailable { detail } => f.write_str(detail),
            LockError::NotHeld { .. } => {
                f.write_str("the token does not hold the lock on a quorum of servers")
            }
            LockError::OtherMode { holds_shared: true } => {
                f.write_str("the token holds the lock shared: add --shared")
            }
            LockError::OtherMode {
                holds_shared: false,
            } => f.write_str("the token holds the lock exclusively: leave out --shared"),
            LockError::Interrupted(sig) => write!(f, "interrupted by signal {sig} while waiting"),
            LockError::LimitMismatch { slots } => write!(f, "it is a semaphore of {slots} slots"),
        }
    }
}

/// The engine over one set of servers, with our connections to them.
pub(crate) struct Redlock {
    nodes: Nodes,
    observer: Option<Observer>,
    /// The queue entry this engine last won a lock with: a release never hands the lock back to
    /// it (queue/mod.rs, step 3).
    waited_as: Option<String>,
}

impl Redlock {
    pub(crate) fn new(servers: Vec<Server>, timeout: Duration) -> Redlock {
        Redlock {
            nodes: Nodes::new(servers, timeout),
            observer: None,
            waited_as: None,
        }
    }

    pub(crate) fn servers(&self) -> &[Server] {
        self.nodes.servers()
    }

    pub(crate) fn quorum(&self) -> usize {
        quorum::quorum(self.nodes.len())
    }

    fn failures<T>(&self, replies: &[Reply<T>]) -> Vec<(String, NodeError)> {
        self.servers()
            .iter()
            .zip(replies)
            .filter_map(|(server, reply)| match &reply.result {
                Err(NodeError::Down(why)) => {
                    Some((server.display.clone(), NodeError::Down(why.clone())))
                }
                _ => None,
            })
            .collect()
    }

    /// `server: why` for each server that did not answer.
    fn reasons<T>(&self, replies: &[Reply<T>]) -> Vec<String> {
        self.failures(replies)
            .into_iter()
            .map(|(server, why)| format!("{server}: {why}"))
            .collect()
    }

    fn unavailable<T>(&self, replies: &[Reply<T>], answered: usize) -> LockError {
        let reasons = self.reasons(replies);
        LockError::Unavailable {
            detail: format!(
                "no quorum: {answered} of {} servers answered, {} needed ({})",
                self.nodes.len(),
                self.quorum(),
                reasons.join("; ")
            ),
        }
    }
}
