//! The one place that decides what each event means while the command runs: a loop on the main
//! thread. It forwards the signals we get to the command's group, renews the lock when a renewal
//! is due (and tells the guardian the new deadline), stops the command when the lock is lost or
//! it outlives `--max-runtime` (SIGKILL after `--kill-after`), and ends when the command exits.
//! Everything it waits for comes through one poll (events.rs), so exec needs no thread of its
//! own.
//!
//! A run ends lost whenever the lock was not certainly held for all of it: a renewal found it
//! gone, none could be confirmed in time, or we were paused or starved until the guardian's
//! moment to stop the command (`grace` before the deadline) and only then saw the command's end.
//! Such an end may be the guardian's doing, or the command's own while nobody renewed the lock
//! (the kernel does not say when a process exited): either way another holder may have run
//! beside it, and the run must not be reported as a success.

use super::child::Supervised;
use super::events::Events;
use super::renew::{Report, Watchdog};
use crate::clock::BootInstant;
use crate::lock::Held;
use crate::report::{event, token_id, Reporter};
use crate::schema::ms;
use std::time::Duration;

/// When the command must be stopped (`--max-runtime`), and how long it then gets to stop.
pub(super) struct Limits {
    pub(super) stop_at: Option<BootInstant>,
    pub(super) max_runtime: Duration,
    pub(super) kill_after: Duration,
}

/// What the lifecycle log says about this lock.
pub(super) struct Lifecycle<'a> {
    pub(super) name: &'a str,
    pub(super) key: &'a str,
    pub(super) token: &'a str,
    pub(super) servers: usize,
    pub(super) reporter: Reporter,
}

/// How the command's supervision ended.
#[derive(Default)]
pub(super) struct Ended {
    /// Why the lock was lost, if it was.
    pub(super) lost: Option<String>,
    /// The command outlived `--max-runtime` and was stopped.
    pub(super) timed_out: bool,
    /// The last renewal, if any.
    pub(super) renewed: Option<Held>,
    /// The first signal we got and passed on to the command, if any.
    pub(super) interrupted: Option<libc::c_int>,
}

/// Waits for the command to exit, forwarding signals (those that came before it ran are still
/// pending, blocked, and come first), renewing the lock, and stopping the command if the lock is lost or it outlives
/// `--max-runtime`.
pub(super) fn supervise(
    command: &Supervised,
    events: &mut Events,
    watchdog: &mut Watchdog<'_>,
    lock: &Lifecycle<'_>,
    mut limits: Limits,
) -> Ended {
    let mut ended = Ended::default();
    let mut kill_at: Option<BootInstant> = None;
    // Stops the command as a lost lock does; SIGKILL follows `grace` later, or sooner if a stop
    // is already under way.
    let stop = |kill_at: &mut Option<BootInstant>, grace| {
        command.signal_group(libc::SIGTERM);
        // A stopped (SIGSTOP) command must wake up to act on SIGTERM.
        command.signal_group(libc::SIGCONT);
        let at = BootInstant::now().add(grace);
        let at = kill_at.map_or(at, |earlier: BootInstant| earlier.min(at));
        *kill_at = Some(at);
        command.stopping(at);
    };
    loop {
        // Asked first, after every wake-up: an exit that came with a deadline ends the run as
        // an exit, whatever else was due.
        if command.has_exited() {
            if ended.lost.is_none() && watchdog.guardian_stops_at().has_passed() {
                let reason = "redlock was paused or starved until the lock's validity was about to run out; the command ended meanwhile (stopped by redlock's guardian, or on its own while the lock may no longer have been held)";
                lock.reporter.emit(&event::Lost {
                    name: lock.name,
                    key: lock.key,
                    token_id: token_id(lock.token),
                    reason,
                });
                ended.lost = Some(reason.to_string());
            }
            return ended;
        }
        if kill_at.is_some_and(BootInstant::has_passed) {
            command.signal_group(libc::SIGKILL);
            kill_at = None;
        }
        if limits.stop_at.is_some_and(BootInstant::has_passed) {
            limits.stop_at = None;
            ended.timed_out = true;
            lock.reporter.emit(&event::TimedOut {
                name: lock.name,
                key: lock.key,
                child_pid: command.pid() as u32,
                max_runtime_ms: ms(limits.max_runtime),
            });
            stop(&mut kill_at, limits.kill_after);
        }
        if watchdog.due_at().is_some_and(BootInstant::has_passed) {
            match watchdog.renew() {
                Report::Renewed(held) => {
                    lock.reporter.emit(&event::Renewed {
                        name: lock.name,
                        key: lock.key,
                        token_id: token_id(lock.token),
                        ttl_ms: ms(held.ttl),
                        validity_ms: ms(held.validity),
                        votes: held.votes,
                        servers: lock.servers,
                    });
                    command.renewed(held.deadline());
                    ended.renewed = Some(held);
                }
                Report::RenewalFailed { reason, remaining } => {
                    lock.reporter.emit(&event::RenewalFailed {
                        name: lock.name,
                        key: lock.key,
                        token_id: token_id(lock.token),
                        reason: &reason,
                        remaining_ms: ms(remaining),
                    });
                }
                Report::Lost { reason, grace } => {
                    lock.reporter.emit(&event::Lost {
                        name: lock.name,
                        key: lock.key,
                        token_id: token_id(lock.token),
                        reason: &format!("{reason}; stopping the command"),
                    });
                    stop(&mut kill_at, grace);
                    ended.lost = Some(reason);
                }
            }
            // The round took time: look at the command and the clock again before waiting.
            continue;
        }
        let next = [kill_at, limits.stop_at, watchdog.due_at()]
            .into_iter()
            .flatten()
            .min();
        for signal in events.wait(next) {
            ended.interrupted.get_or_insert(signal);
            command.signal_group(signal);
        }
    }
}
