//! The watchdog: a thread that keeps the lock alive while the command runs.
//!
//! It renews on the `Schedule` over its own persistent connections. A renewal counts only with a
//! quorum and positive validity; a failed one is retried quickly, but never past the point where
//! the command could no longer be stopped before the last confirmed validity runs out. Then, or
//! as soon as a server says the token is gone, it reports the lock lost: the supervisor must stop
//! the command.

use crate::clock::BootInstant;
use crate::lock::{jitter, Held, LockError, Redlock, Target};
use crate::schedule::Schedule;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// What the watchdog tells the supervisor.
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

pub(crate) struct Watchdog {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Starts renewing `held` on `schedule`. Reports go through `report`, wrapped by `wrap`.
    pub(crate) fn start<E: Send + 'static>(
        lock: Redlock,
        (target, key): (Target, String),
        held: Held,
        schedule: Schedule,
        report: Sender<E>,
        wrap: fn(Report) -> E,
    ) -> std::io::Result<Watchdog> {
        let (stop, stopped) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("renewal".into())
            .spawn(move || {
                let mut renewal = Renewal {
                    lock,
                    target,
                    key,
                    held,
                    schedule,
                    stopped,
                    report: Box::new(move |outcome| report.send(wrap(outcome)).is_ok()),
                };
                while let Some(outcome) = renewal.next() {
                    let lost = matches!(outcome, Report::Lost { .. });
                    if renewal.report(outcome).is_none() || lost {
                        return;
                    }
                }
            })?;
        Ok(Watchdog {
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Stops renewing and waits for the thread (at most one renewal round, bounded by the
    /// per-server timeout).
    pub(crate) fn stop(mut self) {
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

struct Renewal {
    lock: Redlock,
    target: Target,
    key: String,
    held: Held,
    schedule: Schedule,
    stopped: Receiver<()>,
    /// Hands a report to the supervisor; false once it is gone.
    report: Box<dyn Fn(Report) -> bool + Send>,
}

impl Renewal {
    fn report(&self, outcome: Report) -> Option<()> {
        (self.report)(outcome).then_some(())
    }

    /// Waits for the next renewal and performs it. `None` once asked to stop.
    fn next(&mut self) -> Option<Report> {
        let due = self.held.since.add(self.schedule.interval());
        self.sleep_until(due)?;
        if self.give_up_at().has_passed() {
            // We slept through the whole window without trying: this process was stopped
            // (SIGSTOP, a debugger) or the machine suspended, past the lock's validity.
            return Some(self.lost(
                "redlock was paused past the lock's validity (stopped or suspended); no renewal could be tried in time",
            ));
        }
        loop {
            if self.give_up_at().has_passed() {
                return Some(self.lost("renewal could not reach a quorum of servers in time"));
            }
            match self
                .lock
                .extend(&self.target, &self.key, &self.held.token, self.schedule.ttl)
            {
                Ok(held) => {
                    self.held = held.clone();
                    return Some(Report::Renewed(held));
                }
                Err(LockError::NotHeld { .. } | LockError::OtherMode { .. }) => {
                    return Some(self.lost(
                        "the key was deleted or taken over by another token on a quorum of servers",
                    ));
                }
                Err(err) => {
                    self.report(Report::RenewalFailed {
                        reason: err.to_string(),
                        remaining: self.held.deadline().remaining(),
                    })?;
                    let next_try = BootInstant::now()
                        .add(jitter(self.schedule.retry_pause()))
                        .min(self.give_up_at());
                    self.sleep_until(next_try)?;
                    if self.give_up_at().has_passed() {
                        return Some(self.lost(&format!("renewal failed: {err}")));
                    }
                }
            }
        }
    }

    /// The last moment to start a renewal round and still, if it fails, stop the command (a
    /// round of `timeout`, then SIGTERM, grace, SIGKILL) before the validity runs out.
    fn give_up_at(&self) -> BootInstant {
        self.held
            .since
            .add(self.schedule.give_up_after(self.held.validity))
    }

    fn lost(&self, reason: &str) -> Report {
        Report::Lost {
            reason: reason.to_string(),
            grace: self.schedule.grace().min(self.held.deadline().remaining()),
        }
    }

    /// Sleeps until `at`; `None` when told to stop (or the supervisor is gone).
    fn sleep_until(&self, at: BootInstant) -> Option<()> {
        match self.stopped.recv_timeout(at.remaining()) {
            Err(RecvTimeoutError::Timeout) => Some(()),
            Ok(()) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }
}
