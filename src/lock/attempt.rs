//! One Redlock attempt, the same for every target: one round in which every server tries the
//! target's keys (one for a mutex, the N slots of a semaphore) and SETs the first free one for
//! us, the grant when a quorum set the same key with validity left, and the clean-up of whatever
//! the round set and did not win.
//!
//! The safety argument, step by step:
//! 1. T1 is taken before the first request is written; each server runs the acquire script
//!    (`ACQUIRE`): `SET key token NX PX ttl` on the first free candidate key, or over a
//!    reservation that names us (the queue's take-over, queue/mod.rs). Each server sets at most
//!    one key per round.
//! 2. The grant is candidate k when a quorum of servers set k, and validity = ttl − (T2 − T1) −
//!    drift is positive, T2 being the arrival of the vote that completed the quorum. Two quorums
//!    share a server, and a key holds one token at a time there, so no two holders of k overlap:
//!    a mutex has one holder, a semaphore at most N (one per slot). Counting holders per server
//!    instead would not be safe for N >= 2: with servers A, B, C and N = 2, holders admitted on
//!    {A, B}, {B, C} and {A, C} leave 2 on every server and 3 in all.
//! 3. The round ends as soon as its outcome is certain: a quorum for one key, or so few possible
//!    votes left that no key can reach one (from at least a quorum of answers, so that too few
//!    answers still read as unavailable). A vote we did not wait for can only add to what we
//!    concluded: a late yes to a grant is one more server holding our own token (release and
//!    extend ask every server), and a late yes to a failed attempt is deleted by the worker that
//!    got it, on the same connection, after the SET (`Nodes::round_until`). With an observer
//!    (-v) every server's answer is shown, so the round waits for all of them.
//! 4. Whatever the round set and did not win is deleted by compare-and-delete (withdraw.rs): after
//!    a failure every key on every server that may have set one (a yes, or no answer: the SET
//!    may have landed), after a grant the other keys on the servers that set one. After a grant,
//!    a server that did not answer is left alone: asking it again would cost another full
//!    timeout on every grant while it is down, and what it may hold for us is on a minority and
//!    expires with the TTL. A server that said no holds someone else's key, not ours.
//!
//! attempt/candidates.rs: the order the servers try the keys in, when a round is decided and
//! which key won; attempt/acquire.lua: the script each server runs.

mod candidates;

use super::engine::{Held, LockError, Redlock};
use super::keys::{self, Layout};
use super::limit;
use super::list;
use super::nodes::{Op, Reply};
use super::queue::{self, HandOver, Waiter};
use super::quorum::{self, tally};
use super::script::{lua, lua_part, Lua};
use super::shared;
use super::target::{Kind, Target};
use super::vote::{Seen, Vote};
use crate::clock::BootInstant;
use candidates::{candidate_order, decided, winning_candidate};
use std::sync::Arc;
use std::time::Duration;

/// The acquire on one server (attempt/acquire.lua says its KEYS, ARGV and reply). A script
/// rather than a pipeline: a pipeline is several replies, and the client waits its full read
/// timeout for each one from a stopped server.
pub(super) static ACQUIRE: Lua = lua!(
    queue::FUNCTIONS,
    limit::FUNCTIONS,
    list::INDEX,
    lua_part!("attempt/acquire.lua"),
);

impl Redlock {
    /// One attempt at `target` with `token` (see the module comment). Also returns what the
    /// refusing servers showed of the holders, which costs no round trip: it comes back in the
    /// reply to the SET.
    pub(super) fn attempt(
        &mut self,
        target: &Target,
        token: &str,
        ttl: Duration,
        waiter: Option<&Waiter>,
    ) -> (Result<Held, LockError>, Seen) {
        let order = candidate_order(target.width());
        let candidates: Vec<String> = order.iter().map(|&i| target.key(i)).collect();
        let mut script_keys = candidates.clone();
        if target.is_shared() {
            script_keys.push(target.readers());
        }
        if target.fence {
            script_keys.extend(candidates.iter().map(|key| keys::fence(key)));
        }
        let semaphore = target.limit().is_some();
        if semaphore {
            script_keys.push(target.limit_key());
        }
        script_keys.push(target.queue());
        let index = target.keys.index();
        let ttl_ms = ttl.as_millis() as u64;
        let op: Op<Vote> = {
            let (token, fenced, order) = (token.to_string(), target.fence, order.clone());
            let (entry, stamp, queued, lease) = match waiter {
                Some(w) => (
                    w.entry.clone(),
                    w.stamp_ms,
                    w.queued,
                    w.lease.as_millis() as u64,
                ),
                None => Default::default(),
            };
            let trusted = queue::stamp_trusted(self.nodes.timeout()).as_millis() as u64;
            let hand_over = HandOver::new(target, self.nodes.timeout(), None);
            let script = if target.is_shared() {
                &shared::ACQUIRE
            } else {
                &ACQUIRE
            };
            Arc::new(move |con| {
                let layout = Layout::of(con);
                let mut invocation = script.prepare_invoke();
                for key in &script_keys {
                    invocation.key(&*layout.name(key));
                }
                // Not on a cluster: the index is in a hash slot of its own (list.rs).
                let indexed = layout == Layout::Plain;
                if indexed {
                    invocation.key(&index);
                }
                let (won, value, pttl, rank, foreign, counter, other_limit): (
                    usize,
                    Option<String>,
                    i64,
                    i64,
                    Option<String>,
                    u64,
                    usize,
                ) = invocation
                    .arg(&token)
                    .arg(ttl_ms)
                    .arg(order.len())
                    .arg(if fenced { "1" } else { "0" })
                    .arg(&entry)
                    .arg(stamp)
                    .arg(lease)
                    .arg(&hand_over.wake_prefix)
                    .arg(hand_over.reserve_ms)
                    .arg(if semaphore { "1" } else { "0" })
                    .arg(if queued { "1" } else { "0" })
                    .arg(trusted)
                    .arg(if indexed { "1" } else { "0" })
                    .invoke(con)?;
                Ok(Vote {
                    won: won.checked_sub(1).and_then(|i| order.get(i).copied()),
                    value,
                    pttl,
                    rank: u64::try_from(rank).ok(),
                    foreign,
                    counter,
                    other_limit: (other_limit > 0).then_some(other_limit),
                })
            })
        };
        let (needed, servers) = (self.quorum(), self.nodes.len());
        let patient = self.observer.is_some();
        let started = BootInstant::now();
        // A waiter that listens on the rounds' connections subscribes behind every attempt, in
        // the same burst: the server reads the SUBSCRIBE right after the script that queued
        // us, so a release that comes after our place in the queue finds us listening (wait.rs).
        let channel = waiter.map(|waiter| waiter.channel(target));
        let (replies, pending) = self.nodes.round_until(
            op,
            |replies| !patient && decided(replies, needed, servers, target.width()),
            channel.as_deref(),
        );
        let unasked: Vec<bool> = replies.iter().map(Option::is_none).collect();
        let replies: Vec<Reply<Vote>> = quorum::waited(replies, started);
        let winner = winning_candidate(&replies, needed, target.width());
        let outcome = tally(&replies, |vote| vote.won.is_some() && vote.won == winner);
        let validity = outcome
            .quorum_reached_at(needed)
            .and_then(|at| quorum::validity(ttl, at.since(started)));
        self.observe(
            "acquire",
            &target.stem(),
            &replies,
            started,
            validity,
            |vote| match (vote.won, target.kind) {
                (Some(_), Kind::Mutex) => ("set".into(), true),
                (Some(_), Kind::Shared) => ("joined the shared holders".into(), true),
                (None, Kind::Shared) => (
                    "refused (held exclusively, or a writer waits)".into(),
                    false,
                ),
                (Some(index), Kind::Semaphore { .. }) => {
                    (format!("set slot {index}"), Some(index) == winner)
                }
                (None, Kind::Mutex) => ("refused (key exists)".into(), false),
                (None, Kind::Semaphore { .. }) => match vote.other_limit {
                    Some(slots) => (format!("refused (a semaphore of {slots} slots)"), false),
                    None => ("refused (every slot taken)".into(), false),
                },
            },
        );
        // A semaphore of another size refuses the whole attempt, whatever the other servers
        // did: what they set is withdrawn below (limit.rs).
        let other_limit = replies
            .iter()
            .filter_map(|reply| reply.result.as_ref().ok()?.other_limit)
            .max();
        let result = match (other_limit, winner, validity) {
            (Some(slots), _, _) => Err(LockError::LimitMismatch { slots }),
            (None, Some(index), Some(validity)) => {
                let key = target.key(index);
                let granted = Held::granted(&key, token, ttl, (validity, started), outcome.yes);
                let held = Held {
                    slot: target.slot(index),
                    ..granted
                };
                if target.fence && target.is_shared() {
                    // A shared holder sees the current fence and raises none (shared.rs).
                    let current = replies
                        .iter()
                        .filter_map(|reply| match &reply.result {
                            Ok(vote) if vote.won == Some(index) => Some(vote.counter),
                            _ => None,
                        })
                        .max();
                    Ok(Held {
                        fence: current,
                        ..held
                    })
                } else if target.fence {
                    // The counters of the servers that granted before the round was decided:
                    // a quorum, which is all the register needs (fence.rs).
                    let counters: Vec<Option<u64>> = replies
                        .iter()
                        .map(|reply| match &reply.result {
                            Ok(vote) if vote.won == Some(index) => Some(vote.counter),
                            _ => None,
                        })
                        .collect();
                    self.write_fence(held, &counters)
                } else {
                    Ok(held)
                }
            }
            (None, Some(_), None) => Err(LockError::Unavailable {
                detail: format!(
                    "the servers took {} ms of the {ttl_ms} ms ttl to answer; no validity left",
                    outcome
                        .last_at
                        .map_or(0, |at| at.since(started).as_millis()),
                ),
            }),
            (None, None, _) if outcome.answered() < needed => {
                Err(self.unavailable(&replies, outcome.answered()))
            }
            (None, None, _) => Err(LockError::Busy { holder: None }),
        };
        let kept = result.as_ref().ok().map(|held| held.key.clone());
        self.tidy(
            target,
            token,
            waiter,
            kept.as_deref(),
            &replies,
            &unasked,
            pending,
        );
        let mut seen = Seen::from_votes(&replies, token, target.width());
        seen.round = started.elapsed();
        (result, seen)
    }
}
