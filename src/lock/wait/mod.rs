//! Waiting for a busy lock: attempts until one wins or `--wait` runs out, with a place in each
//! server's queue of waiters (queue/), a retry schedule stretched by that place and bounded by
//! the holder's observed TTL, cut short by the release that wakes us (pub/sub) and by signals.
//!
//! - backoff.rs: how long each pause is (the house's one retry pause, `crate::retry`, stretched
//!   by the queue); pause.rs: what ends a pause early (a release that wakes us, a signal);
//!   progress.rs: what a progress display is told meanwhile.

mod backoff;
mod pause;
mod progress;

pub(crate) use pause::{Interrupt, Wake};
pub(crate) use progress::WaitProgress;

use super::engine::{Held, LockError, Redlock};
use super::queue::{self, Waiter};
use super::target::{Kind, Target};
use super::verdict::{describe_foreign, describe_token};
use super::vote::Seen;
use crate::clock::BootInstant;
use crate::retry::{self, Retry};
use pause::Listening;
use progress::Progress;
use std::time::Duration;

/// How a waiting acquire waits, and what it may report while it does.
pub(crate) struct Waiting<'a> {
    /// Keep trying this long; `None` means one attempt.
    pub(crate) wait: Option<Duration>,
    pub(crate) retry: Retry,
    /// What else ends a pause, beside a release heard on the rounds' own connections
    /// (`Nodes::listen`): a signal, as a polled fd.
    pub(crate) interrupt: Option<Interrupt<'a>>,
    /// Told where things stand before each pause, and about once a second during one.
    pub(crate) progress: Option<&'a mut dyn FnMut(&WaitProgress)>,
}

impl Redlock {
    /// Acquires `target`, retrying until `waiting.wait` has passed (once only without it, except
    /// that a split vote on a free lock is tried again a few times: backoff.rs).
    /// `new_token` makes a fresh token for every attempt.
    ///
    /// A waiter queues on every server (arrival order) and subscribes to its own wake-up
    /// channel; a release wakes only the first live waiter in the queue, which asks as soon as a
    /// quorum of servers woke it.
    /// Everyone else sleeps on their own schedule: the jittered retry delay stretched by their
    /// place in the queue; the head also wakes when the holder's observed TTL runs out (an
    /// expiry announces nothing). A one-shot acquire never subscribes. A waiter subscribes
    /// behind every attempt on the attempt's own wire and listens on those from this thread
    /// (queue, step 2).
    ///
    /// Safety does not depend on the queue: every grant is still a SET NX on a quorum with
    /// positive validity (`attempt`). The queue only decides whom a release wakes early; a
    /// waiter that is never woken (lost notification, dropped queue, a crashed server) still
    /// asks on its own schedule, and a waiter that crashed has no subscriber left, so a release
    /// skips it (PUBLISH reaches nobody) and wakes the next.
    pub(crate) fn acquire(
        &mut self,
        target: &Target,
        ttl: Duration,
        waiting: Waiting<'_>,
        new_token: &mut dyn FnMut() -> anyhow::Result<String>,
    ) -> anyhow::Result<Result<Held, LockError>> {
        let Waiting {
            wait,
            retry,
            interrupt,
            progress,
        } = waiting;
        let started = BootInstant::now();
        let give_up_at = wait.map(|wait| started.add(wait));
        // Only a waiter queues: one attempt's queue place is worth nothing to anyone. Its entry
        // is a token: who waits, for `status` to show.
        let mut waiter = match wait.is_some_and(|w| !w.is_zero()) {
            true => Some(Waiter::new(
                queue::entry(&new_token()?, target.is_shared()),
                backoff::longest_pause(retry),
                self.nodes.timeout(),
            )),
            false => None,
        };
        let mut listening = Listening::new(interrupt);
        let mut progress = Progress {
            report: progress,
            started,
        };
        // The waiter listens on the connections its attempts use (every attempt subscribes
        // behind its request), from this thread.
        if let Some(waiter) = &waiter {
            listening.on_wires(waiter.channel(target));
        }
        let mut splits = 0;
        loop {
            let token = new_token()?;
            let (result, seen) = self.attempt(target, &token, ttl, waiter.as_ref());
            let failure = match result {
                Ok(held) => {
                    // The attempt left the queue and told our listeners to stop (queue, step
                    // 5); dropping them stops any that did not hear it.
                    self.waited_as = waiter.map(|waiter| waiter.entry);
                    return Ok(Ok(held));
                }
                Err(failure) => failure,
            };
            if let Some(waiter) = waiter.as_mut() {
                waiter.queued |= seen.rank.is_some();
            }
            if let LockError::LimitMismatch { .. } = failure {
                // Waiting cannot change the semaphore's size: give up at once, leaving nothing.
                self.give_up(target, waiter.as_ref());
                return Ok(Err(failure));
            }
            splits = if seen.split { splits + 1 } else { 0 };
            let Some(give_up_at) = give_up_at.filter(|at| !at.has_passed()) else {
                if give_up_at.is_none() {
                    if let Some(pause) = backoff::one_shot_retry(&seen, splits) {
                        std::thread::sleep(pause);
                        continue;
                    }
                }
                self.give_up(target, waiter.as_ref());
                return Ok(Err(describe_busy(target, failure, &seen)));
            };
            // Not queued anywhere (no waiter, or every server refused the script) is treated
            // as first in line: the schedule of a waiter without a queue.
            let head = seen.rank.is_none_or(|rank| rank == 0);
            let pause = backoff::pause(retry, &seen, splits, head);
            let until = retry::not_after(pause, give_up_at);
            let status = WaitProgress {
                waited: started.elapsed(),
                holder: seen.holder,
                holder_ttl: seen.ttl,
            };
            let needed = self.quorum();
            if let Some(signal) =
                listening.pause(&mut self.nodes, until, needed, &mut progress, &status)
            {
                self.give_up(target, waiter.as_ref());
                return Ok(Err(LockError::Interrupted(signal)));
            }
        }
    }

    /// A waiter that gives up leaves the queues it joined, if it joined any (queue, step 5).
    fn give_up(&mut self, target: &Target, waiter: Option<&Waiter>) {
        if let Some(waiter) = waiter.filter(|waiter| waiter.queued) {
            self.leave(target, waiter);
        }
    }
}

/// Fills in who holds the lock, for the message people read when they are refused, from what
/// the refusing servers returned with their answer to the SET: no further round.
fn describe_busy(target: &Target, failure: LockError, seen: &Seen) -> LockError {
    match (failure, target.kind) {
        (LockError::Busy { holder: None }, Kind::Semaphore { slots }) => LockError::Busy {
            holder: Some(format!("someone in each of its {slots} slots")),
        },
        (LockError::Busy { holder: None }, Kind::Mutex) => LockError::Busy {
            holder: seen
                .holder
                .as_deref()
                .map(describe_token)
                .or_else(|| seen.foreign.as_deref().map(describe_foreign)),
        },
        (other, _) => other,
    }
}
