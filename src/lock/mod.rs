//! The Redlock algorithm over N independent servers: acquire, release, extend and inspect.
//!
//! Everything here returns values and typed errors; it never prints and never exits. The safety
//! argument, step by step, is in the comments of `attempt`.

pub(crate) mod fence;
mod holder;
mod inspect;
mod keep;
mod nodes;
mod observe;
pub(crate) mod quorum;
mod scripts;
pub(crate) mod semaphore;
mod wait;
mod wake;

use crate::clock::BootInstant;
use crate::server::Server;
pub(crate) use fence::holder_fence;
pub(crate) use holder::Released;
pub(crate) use inspect::{
    describe_foreign, describe_token, holding, Holding, KeyState, ServerState,
};
pub(crate) use keep::{Keep, Kept};
pub(crate) use nodes::NodeError;
use nodes::{Cleanup, Nodes, Op, Reply};
pub(crate) use observe::{Observer, Round};
use quorum::{verdict, Verdict};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use wait::Waiter;
pub(crate) use wait::{jitter, RetryPolicy, WaitProgress, Waiting, Wake};

/// A lock this process holds.
#[derive(Debug, Clone)]
pub(crate) struct Held {
    pub(crate) token: String,
    pub(crate) ttl: Duration,
    /// How long the lock is certainly ours, counted from `since`.
    pub(crate) validity: Duration,
    pub(crate) since: BootInstant,
    /// Servers that confirmed it.
    pub(crate) votes: usize,
    /// The fencing number of this grant (`--fence`).
    pub(crate) fence: Option<u64>,
    /// The semaphore slot this grant holds (`--limit`).
    pub(crate) slot: Option<usize>,
}

impl Held {
    /// A lock just granted (or extended) by `votes` servers, plain: no fence, no slot.
    fn granted(
        token: &str,
        ttl: Duration,
        validity: Duration,
        since: BootInstant,
        votes: usize,
    ) -> Held {
        Held {
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
    /// A signal arrived while waiting; nothing is held.
    Interrupted(i32),
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
            LockError::Interrupted(sig) => write!(f, "interrupted by signal {sig} while waiting"),
        }
    }
}

/// What a grant must give besides the lock: a fencing number (`--fence`), and whether the key
/// names a semaphore of `slots` slots (`--limit`, semaphore.rs) rather than a mutex.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Grant {
    pub(crate) fence: bool,
    pub(crate) slots: Option<usize>,
}

pub(crate) struct Redlock {
    nodes: Nodes,
    observer: Option<Observer>,
    grant: Grant,
}

impl Redlock {
    pub(crate) fn new(servers: Vec<Server>, timeout: Duration) -> Redlock {
        Redlock {
            nodes: Nodes::new(servers, timeout),
            observer: None,
            grant: Grant::default(),
        }
    }

    /// What every later acquisition must also give.
    pub(crate) fn set_grant(&mut self, grant: Grant) {
        self.grant = grant;
    }

    pub(crate) fn servers(&self) -> &[Server] {
        self.nodes.servers()
    }

    pub(crate) fn quorum(&self) -> usize {
        quorum::quorum(self.nodes.len())
    }

    /// One Redlock attempt. On any failure the key is deleted (compare-and-delete) on every
    /// server where the SET may have landed, including those that did not answer. Also returns
    /// what the refusing servers showed of the current holder: the holder's value and PTTL come
    /// back in the reply to the SET (one script), so they cost no round trip. With `--fence` the
    /// same script reads the fencing counter, and one more round writes the fence (fence.rs).
    fn attempt(
        &mut self,
        key: &str,
        token: &str,
        ttl: Duration,
        waiter: Option<&Waiter>,
    ) -> (Result<Held, LockError>, Seen) {
        if let Some(slots) = self.grant.slots {
            return self.attempt_slots(key, token, ttl, slots, waiter);
        }
        let ttl_ms = ttl.as_millis() as u64;
        let queue = scripts::queue_key(key);
        let (id, stamp, lease, queued) = Waiter::script_args(waiter);
        let counter_key = self.grant.fence.then(|| fence::fence_key(key));
        let op: Op<Vote> = {
            let (key, queue, token, id) =
                (key.to_string(), queue, token.to_string(), id.to_string());
            let counter_key = counter_key.clone();
            Arc::new(move |con| {
                let mut invocation = scripts::acquire().key(&key);
                invocation.key(&queue);
                // With --fence only: the counter, read in the same script as the SET.
                if let Some(counter_key) = &counter_key {
                    invocation.key(counter_key);
                }
                let (set, value, pttl, rank, foreign, counter): (
                    i64,
                    Option<String>,
                    Option<i64>,
                    i64,
                    Option<String>,
                    u64,
                ) = invocation
                    .arg(&token)
                    .arg(ttl_ms)
                    .arg(&id)
                    .arg(stamp)
                    .arg(lease)
                    .arg(if queued { "1" } else { "0" })
                    .invoke(con)?;
                Ok(Vote {
                    set: set == 1,
                    value,
                    pttl: pttl.unwrap_or(-1),
                    rank: u64::try_from(rank).ok(),
                    foreign,
                    counter,
                })
            })
        };
        // The round ends as soon as its outcome is certain: a quorum of yes, or so many no's
        // that a quorum is out of reach (from at least a quorum of answers, so that too few
        // answers still read as unavailable). Safe because a vote we did not wait for can only
        // add to what we concluded: a late yes to a grant is one more server holding our own
        // token (release and extend ask every server), and a late yes to a failed attempt is
        // deleted by the worker that got it, on the same connection, after the SET (see
        // `round_until`). T2 is still the arrival of the vote that completed the quorum. With an
        // observer (-v) every server's answer is shown, so the round waits for all of them.
        let (needed, servers) = (self.quorum(), self.nodes.len());
        let patient = self.observer.is_some();
        // T1 is taken before the first request is written.
        let started = BootInstant::now();
        let (replies, pending) = self.nodes.round_until(op, |replies| {
            let answers = replies.iter().flatten();
            let yes = answers
                .clone()
                .filter(|r| matches!(&r.result, Ok(v) if v.set))
                .count();
            let no = answers
                .filter(|r| {
                    matches!(&r.result, Ok(v) if !v.set)
                        || matches!(r.result, Err(NodeError::ForeignType))
                })
                .count();
            !patient && (yes >= needed || (no > servers - needed && yes + no >= needed))
        });
        let unasked: Vec<bool> = replies.iter().map(Option::is_none).collect();
        let replies: Vec<Reply<Vote>> = replies
            .into_iter()
            .map(|reply| {
                reply.unwrap_or_else(|| Reply {
                    result: Err(NodeError::Down(
                        "not waited for: the round was already decided".into(),
                    )),
                    at: BootInstant::now(),
                    latency: started.elapsed(),
                })
            })
            .collect();
        let outcome = tally(&replies, |vote| vote.set);
        // T2 is when the vote that completed the quorum arrived; later replies only add safety.
        let validity = outcome
            .quorum_reached_at(self.quorum())
            .and_then(|at| quorum::validity(ttl, at.since(started)));
        self.observe("acquire", key, &replies, started, validity, |vote| {
            (
                if vote.set {
                    "set"
                } else {
                    "refused (key exists)"
                }
                .into(),
                vote.set,
            )
        });
        let result = match (outcome.verdict(self.nodes.len()), validity) {
            (Verdict::Yes, Some(validity)) => {
                let held = Held::granted(token, ttl, validity, started, outcome.yes);
                if counter_key.is_some() {
                    // The counters of the servers that granted before the round was decided:
                    // a quorum, which is all the register needs (fence.rs).
                    let counters: Vec<Option<u64>> = replies
                        .iter()
                        .map(|reply| match &reply.result {
                            Ok(vote) if vote.set => Some(vote.counter),
                            _ => None,
                        })
                        .collect();
                    self.write_fence(key, held, &counters)
                } else {
                    Ok(held)
                }
            }
            (verdict, _) => Err(if outcome.answered() < self.quorum() {
                self.unavailable(&replies, outcome.answered())
            } else if verdict == Verdict::Yes {
                LockError::Unavailable {
                    detail: format!(
                        "the servers took {} ms of the {} ms ttl to answer; no validity left",
                        outcome
                            .last_at
                            .map_or(0, |at| at.since(started).as_millis()),
                        ttl_ms
                    ),
                }
            } else {
                LockError::Busy { holder: None }
            }),
        };
        if result.is_err() {
            // A server that said no holds someone else's key, not ours: only the others (yes,
            // or no answer: the SET may have landed) need the delete. The servers the round did
            // not wait for are cleaned up by their own worker, after their late answer. (A
            // fence that could not be written fails the grant here too, and is cleaned up alike.)
            let maybe_ours: Vec<bool> = replies
                .iter()
                .zip(&unasked)
                .map(|(reply, unasked)| !unasked && !matches!(&reply.result, Ok(vote) if !vote.set))
                .collect();
            pending.settle(Some(self.late_cleanup(key, token)));
            self.release_on(&maybe_ours, key, token);
        }
        let mut seen = Seen::from_votes(&replies, token);
        seen.round = started.elapsed();
        (result, seen)
    }

    /// The compare-and-delete a worker sends after a late yes (or no answer: the SET may still
    /// land) to a failed attempt, behind the SET on the same connection.
    fn late_cleanup(&self, key: &str, token: &str) -> Cleanup<Vote> {
        let (key, token) = (key.to_string(), token.to_string());
        Arc::new(move |con, vote| {
            if vote.is_none_or(|vote| vote.set) {
                let _: i64 = scripts::cleanup_eval(&key, &token).query(con)?;
            }
            Ok(())
        })
    }

    /// Compare-and-delete on the `targets` servers only, ignoring the answers. A server whose
    /// SET reply is late gets the delete on the connection that carried the SET, behind it,
    /// without waiting for that reply (see `nodes::Kept`): so the delete is applied after the
    /// SET whenever the SET is, and gets there whenever the server is reachable at all.
    fn release_on(&mut self, targets: &[bool], key: &str, token: &str) {
        if !targets.contains(&true) {
            return;
        }
        self.nodes.round_on(targets, |con| {
            let deleted: i64 = scripts::cleanup_eval(key, token).query(con)?;
            Ok(deleted)
        });
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

    /// Fills in who holds the lock, for the message people read when they are refused, from what
    /// the refusing servers returned with their answer to the SET: no further round.
    fn describe_busy(failure: LockError, seen: &Seen) -> LockError {
        match failure {
            LockError::Busy { holder: None } => LockError::Busy {
                holder: seen
                    .holder
                    .as_deref()
                    .map(describe_token)
                    .or_else(|| seen.foreign.as_deref().map(describe_foreign)),
            },
            other => other,
        }
    }
}

/// Counts of one round: yes votes (and when each came), no votes, and silent servers.
struct Tally {
    yes: usize,
    no: usize,
    yes_times: Vec<BootInstant>,
    last_at: Option<BootInstant>,
}

impl Tally {
    fn answered(&self) -> usize {
        self.yes + self.no
    }

    fn verdict(&self, servers: usize) -> Verdict {
        verdict(servers, self.yes, self.no)
    }

    fn quorum_reached_at(&self, needed: usize) -> Option<BootInstant> {
        let mut times = self.yes_times.clone();
        times.sort();
        times.get(needed.checked_sub(1)?).copied()
    }
}

fn tally<T>(replies: &[Reply<T>], is_yes: impl Fn(&T) -> bool) -> Tally {
    let mut tally = Tally {
        yes: 0,
        no: 0,
        yes_times: Vec::new(),
        last_at: None,
    };
    for reply in replies {
        tally.last_at = tally.last_at.max(Some(reply.at));
        match &reply.result {
            Ok(value) if is_yes(value) => {
                tally.yes += 1;
                tally.yes_times.push(reply.at);
            }
            Ok(_) | Err(NodeError::ForeignType) => tally.no += 1,
            Err(NodeError::Down(_)) => {}
        }
    }
    tally
}

/// One server's answer to an acquire attempt.
struct Vote {
    set: bool,
    /// The key's value after the SET: our token if we won there, else the holder's.
    value: Option<String>,
    pttl: i64,
    /// Our place in this server's queue of waiters (0: next), when we are queued there.
    rank: Option<u64>,
    /// The key's type when another client keeps a non-string there (Redisson's hash).
    foreign: Option<String>,
    /// With `--fence`: the fencing counter this server had when it granted.
    counter: u64,
}

/// What the refusing servers showed of the holder.
#[derive(Default)]
struct Seen {
    holder: Option<String>,
    /// The shortest remaining TTL of a key that is not ours; zero if one vanished meanwhile.
    ttl: Option<Duration>,
    /// Our best place in the servers' queues of waiters, when we joined one.
    rank: Option<u64>,
    /// The type of a non-string key that refused us, on the most servers.
    foreign: Option<String>,
    /// Nobody won: every server answered, but no token, ours or another's, is on a quorum of
    /// them. Contenders that asked at once split the votes.
    split: bool,
    /// After a split: whether we won the most servers (ties: the smallest token), which every
    /// contender that saw the same votes agrees on.
    favourite: bool,
    /// How long the round took.
    round: Duration,
}

impl Seen {
    fn from_votes(replies: &[Reply<Vote>], ours: &str) -> Seen {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let mut ttl: Option<Duration> = None;
        let mut rank: Option<u64> = None;
        let mut foreign: BTreeMap<&str, usize> = BTreeMap::new();
        let mut answered = 0;
        for reply in replies {
            let Ok(vote) = &reply.result else { continue };
            answered += 1;
            rank = match (rank, vote.rank) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if vote.set {
                *counts.entry(ours).or_default() += 1;
                continue;
            }
            if let Some(kind) = &vote.foreign {
                *foreign.entry(kind).or_default() += 1;
            }
            if let Some(value) = &vote.value {
                *counts.entry(value).or_default() += 1;
            }
            if vote.value.as_deref() == Some(ours) {
                continue;
            }
            // -2: the key went away between SET and PTTL; -1: it never expires.
            let left = match vote.pttl {
                -2 => Some(Duration::ZERO),
                ms => u64::try_from(ms).ok().map(Duration::from_millis),
            };
            if let Some(left) = left {
                ttl = Some(ttl.map_or(left, |t| t.min(left)));
            }
        }
        let widest = counts.values().copied().max().unwrap_or(0);
        // BTreeMap order: the first of the widest is the smallest token.
        let favourite = counts
            .iter()
            .find(|(_, count)| **count == widest)
            .is_some_and(|(token, _)| *token == ours);
        let holder = counts
            .into_iter()
            .filter(|(token, _)| *token != ours)
            .max_by_key(|(_, count)| *count)
            .map(|(token, _)| token.to_string());
        Seen {
            holder,
            ttl,
            rank,
            foreign: foreign
                .into_iter()
                .max_by_key(|(_, count)| *count)
                .map(|(kind, _)| kind.to_string()),
            // A server that did not answer could still complete someone's quorum.
            split: widest + (replies.len() - answered) < quorum::quorum(replies.len()),
            favourite,
            round: Duration::ZERO,
        }
    }
}
