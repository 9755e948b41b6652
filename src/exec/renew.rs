//! The watchdog: what keeps the lock alive while the command runs, as a schedule the supervise
//! loop asks when to wake (`due_at`) and a round it runs on the main thread when due (`renew`).
//!
//! It renews on the `Schedule`, over the same engine (and connections) that took the lock:
//! nothing else uses them while the command runs. A renewal counts only with a quorum and positive
//! validity; a failed one is retried quickly, but never past the point where the command could no
//! longer be stopped before the last confirmed validity runs out. Then, or as soon as a server
//! says the token is gone, it reports the lock lost: the supervisor must stop the command.
//!
//! The retries of a failed renewal pause as every retry of the house does (`crate::retry`, its
//! deadline that last point). The renewals themselves do not: each is due exactly a third of the
//! TTL after the last confirmed one, with no jitter and no back-off, because the margins that keep
//! the command from running unprotected (the grace, the round it may take, `is_workable`) are
//! reckoned from that cadence (schedule.rs); a random or growing delay would eat into them.
//!
//! A round runs inline, so the loop handles nothing else meanwhile: a signal is forwarded, and an
//! exited command noticed, up to one `--timeout` late. The schedule already reserves that round
//! before the grace a lost lock leaves the command (`Schedule::reserve`), and once the lock is
//! lost no round runs again, so the SIGKILL that ends the grace is never held up by one.

use crate::clock::BootInstant;
use crate::lock::{Held, LockError, Redlock, Target};
use crate::schedule::Schedule;
use std::time::Duration;

/// What a renewal round tells the supervisor.
pub(crate) enum Report {
    Renewed(Held),
    /// One renewal round failed; it is retried while `remaining` allows.
    RenewalFailed {
        reason: String,
        remaining: Duration,
    },
    /// The lock is no longer certainly ours. `grace` is how long the command may take to stop
    /// after SIGTERM: it ends before the last confirmed validity does.
    Lost {
        reason: String,
        grace: Duration,
    },
}

pub(crate) struct Watchdog<'a> {
    lock: &'a mut Redlock,
    target: &'a Target,
    key: &'a str,
    /// The last confirmed (re)acquisition.
    held: Held,
    schedule: Schedule,
    /// When to try next; `None` once the lock is lost.
    next: Option<BootInstant>,
    /// Why the last round failed, while retrying.
    failing: Option<String>,
}

impl<'a> Watchdog<'a> {
    /// Renews `held` (a grant of `key` in `target`) with `lock` on `schedule`.
    pub(crate) fn new(
        lock: &'a mut Redlock,
        (target, key): (&'a Target, &'a str),
        held: Held,
        schedule: Schedule,
    ) -> Watchdog<'a> {
        let next = Some(held.since.add(schedule.interval()));
        Watchdog {
            lock,
            target,
            key,
            held,
            schedule,
            next,
            failing: None,
        }
    }

    /// When `renew` is due next; `None` once the lock is lost.
    pub(crate) fn due_at(&self) -> Option<BootInstant> {
        self.next
    }

    /// Runs the renewal round that is due (one round, bounded by the per-server timeout), or
    /// gives the lock up when no round may start any more.
    pub(crate) fn renew(&mut self) -> Report {
        if self.give_up_at().has_passed() {
            return match self.failing.take() {
                Some(err) => self.lost(&format!("renewal failed: {err}")),
                // We slept through the whole window without trying: this process was stopped
                // (SIGSTOP, a debugger) or the machine suspended, past the lock's validity.
                None => self.lost(
                    "redlock was paused past the lock's validity (stopped or suspended); no renewal could be tried in time",
                ),
            };
        }
        let token = &self.held.token;
        match self
            .lock
            .extend(self.target, self.key, token, self.schedule.ttl)
        {
            Ok(held) => {
                self.next = Some(held.since.add(self.schedule.interval()));
                self.failing = None;
                self.held = held.clone();
                Report::Renewed(held)
            }
            Err(LockError::NotHeld { .. } | LockError::OtherMode { .. }) => self
                .lost("the key was deleted or taken over by another token on a quorum of servers"),
            Err(err) => {
                // The retry is never later than the last moment to start one: then, if it is
                // still failing, the lock is given up with the command's whole grace left.
                self.next = Some(self.schedule.retry().next(self.give_up_at()));
                let reason = err.to_string();
                self.failing = Some(reason.clone());
                Report::RenewalFailed {
                    reason,
                    remaining: self.held.deadline().remaining(),
                }
            }
        }
    }

    /// When the guardian starts stopping the command unless a renewal moves the deadline on:
    /// `grace` before the last confirmed validity ends (guardian.rs).
    pub(crate) fn guardian_stops_at(&self) -> BootInstant {
        self.held.deadline().sub(self.schedule.grace())
    }

    /// The last moment to start a renewal round and still, if it fails, stop the command (a
    /// round of `timeout`, then SIGTERM, grace, SIGKILL) before the validity runs out.
    fn give_up_at(&self) -> BootInstant {
        self.held
            .since
            .add(self.schedule.give_up_after(self.held.validity))
    }

    fn lost(&mut self, reason: &str) -> Report {
        self.next = None;
        Report::Lost {
            reason: reason.to_string(),
            grace: self.schedule.grace().min(self.held.deadline().remaining()),
        }
    }
}
