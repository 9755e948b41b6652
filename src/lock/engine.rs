//! The engine: `Redlock`, our connections to one set of servers with what every operation
//! shares (the quorum, who did not answer, the observer), the grant it hands out (`Held`) and
//! the typed errors its operations end with. What each operation does is in its own file
//! (attempt.rs, holder.rs, keep.rs, fence.rs, inspect.rs…), as `impl Redlock` blocks.

use super::nodes::{NodeError, Nodes, Reply};
use super::observe::{Observer, Round, ServerReply};
use super::quorum;
use crate::clock::BootInstant;
use crate::server::Server;
use std::time::Duration;

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
    pub(super) fn granted(
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
    pub(super) nodes: Nodes,
    pub(super) observer: Option<Observer>,
    /// The queue entry this engine last won a lock with: a release never hands the lock back to
    /// it (queue/mod.rs, step 3).
    pub(super) waited_as: Option<String>,
    /// Each server's last failure in this run (`None`: its last answer counted, or it has not
    /// answered yet): the fault margin told once, when the run ends (`Margin`).
    failing: Vec<Option<String>>,
    /// Whether the last round that heard from the servers heard from a quorum of them.
    quorum_answered: bool,
    /// Told the margin when the engine goes, if some server could not vote while a quorum
    /// answered (config/servers.rs: the reporter's `margin`).
    margin_sink: Option<MarginSink>,
}

/// What a run's servers could do, told once when it ends: how many answered its last round,
/// and why each server that did not could not vote.
pub(crate) struct Margin {
    pub(crate) servers: usize,
    pub(crate) answered: usize,
    pub(crate) quorum: usize,
    /// Each server that could not vote: its redacted URL and why.
    pub(crate) failing: Vec<(String, String)>,
}

/// Where the margin goes at the end of a run.
pub(crate) type MarginSink = Box<dyn FnOnce(&Margin) + Send>;

impl Redlock {
    pub(crate) fn new(servers: Vec<Server>, timeout: Duration) -> Redlock {
        let failing = vec![None; servers.len()];
        Redlock {
            nodes: Nodes::new(servers, timeout),
            observer: None,
            waited_as: None,
            failing,
            quorum_answered: false,
            margin_sink: None,
        }
    }

    /// Has the margin told to `sink` when this engine goes: once per run, on whatever path the
    /// command ends, and only when a quorum answered (a run that lost its quorum ends with an
    /// error that already names every server that failed).
    pub(crate) fn set_margin_sink(&mut self, sink: MarginSink) {
        self.margin_sink = Some(sink);
    }

    /// Remembers what each server said in a round, for the margin: a failure, or an answer
    /// that clears the one before. A server the round did not wait for tells nothing.
    fn remember<T>(&mut self, replies: &[Reply<T>]) {
        let mut answered = 0;
        let mut heard = 0;
        for (failing, reply) in self.failing.iter_mut().zip(replies) {
            match &reply.result {
                Ok(_) | Err(NodeError::ForeignType) => {
                    *failing = None;
                    answered += 1;
                    heard += 1;
                }
                Err(NodeError::Down(why)) => {
                    *failing = Some(why.clone());
                    heard += 1;
                }
                Err(NodeError::NotWaitedFor) => {}
            }
        }
        if heard > 0 {
            self.quorum_answered = answered >= quorum::quorum(self.nodes.len());
        }
    }

    pub(crate) fn servers(&self) -> &[Server] {
        self.nodes.servers()
    }

    pub(crate) fn quorum(&self) -> usize {
        quorum::quorum(self.nodes.len())
    }

    pub(super) fn failures<T>(&self, replies: &[Reply<T>]) -> Vec<(String, NodeError)> {
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
    pub(super) fn reasons<T>(&self, replies: &[Reply<T>]) -> Vec<String> {
        self.failures(replies)
            .into_iter()
            .map(|(server, why)| format!("{server}: {why}"))
            .collect()
    }

    pub(super) fn unavailable<T>(&self, replies: &[Reply<T>], answered: usize) -> LockError {
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

impl Redlock {
    /// Reports every later round to `observer`.
    pub(crate) fn set_observer(&mut self, observer: Observer) {
        self.observer = Some(observer);
    }

    /// Hands a round to the observer, if there is one. `describe` puts one answer in words and
    /// says whether it counts as a yes.
    pub(super) fn observe<T>(
        &mut self,
        step: &'static str,
        key: &str,
        replies: &[Reply<T>],
        started: BootInstant,
        validity: Option<Duration>,
        describe: impl Fn(&T) -> (String, bool),
    ) {
        self.remember(replies);
        let Some(observer) = self.observer.as_mut() else {
            return;
        };
        let mut yes = 0;
        let mut last = started;
        let replies = self
            .nodes
            .servers()
            .iter()
            .zip(replies)
            .map(|(server, reply)| {
                last = last.max(reply.at);
                ServerReply {
                    server: server.display.clone(),
                    outcome: match &reply.result {
                        Ok(value) => {
                            let (text, counts) = describe(value);
                            yes += usize::from(counts);
                            Ok(text)
                        }
                        Err(err) => Err(err.clone()),
                    },
                    latency: reply.latency,
                }
            })
            .collect();
        observer(&Round {
            step,
            key,
            replies,
            yes,
            quorum: quorum::quorum(self.nodes.len()),
            elapsed: last.since(started),
            validity,
        });
    }
}

/// The end of a run: its margin, told once (`set_margin_sink`).
impl Drop for Redlock {
    fn drop(&mut self) {
        let Some(sink) = self.margin_sink.take() else {
            return;
        };
        if !self.quorum_answered {
            return;
        }
        let failing: Vec<(String, String)> = self
            .nodes
            .servers()
            .iter()
            .zip(&self.failing)
            .filter_map(|(server, why)| Some((server.display.clone(), why.clone()?)))
            .collect();
        if failing.is_empty() {
            return;
        }
        let servers = self.nodes.len();
        sink(&Margin {
            servers,
            answered: servers - failing.len(),
            quorum: quorum::quorum(servers),
            failing,
        });
    }
}
