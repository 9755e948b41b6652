//! Waiting for a busy lock: retry on a jittered schedule, bounded by the holder's observed TTL
//! and cut short by release notifications (pub/sub) and by signals.

use super::{release_channel, Held};
use super::{wake, LockError, Redlock};
use crate::clock::BootInstant;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// Something that may end a wait early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// A signal asked us to stop.
    Interrupted(i32),
    /// A holder announced a release: worth trying again now.
    Released,
}

impl Wake {
    /// The signal, if this wake-up is one.
    pub(crate) fn signal(self) -> Option<i32> {
        match self {
            Wake::Interrupted(signal) => Some(signal),
            Wake::Released => None,
        }
    }
}

/// How a waiting acquire waits, and what it may report while it does.
pub(crate) struct Waiting<'a> {
    /// Keep trying this long; `None` means one attempt.
    pub(crate) wait: Option<Duration>,
    pub(crate) retry: RetryPolicy,
    /// Signals and release notifications arrive here; either may end a pause.
    pub(crate) wakes: Option<&'a Receiver<Wake>>,
    /// The sending side of `wakes`, for the release subscriptions. Without it a waiter only
    /// retries on its schedule.
    pub(crate) notify: Option<Sender<Wake>>,
    /// Told where things stand before each pause, and about once a second during one.
    pub(crate) progress: Option<&'a mut dyn FnMut(&WaitProgress)>,
}

/// Where a waiting acquire stands, for a progress display.
#[derive(Debug, Clone)]
pub(crate) struct WaitProgress {
    pub(crate) waited: Duration,
    /// The token most refusing servers hold, if they showed one.
    pub(crate) holder: Option<String>,
    /// The shortest remaining TTL of the holder's key on the servers that showed it.
    pub(crate) holder_ttl: Option<Duration>,
}

/// How to retry while waiting.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RetryPolicy {
    /// Mean pause between attempts; each pause is drawn uniformly from [delay/2, 3·delay/2].
    pub(crate) delay: Duration,
}

/// After a release notification, each waiter waits a random part of this before it asks.
const WAKE_SPREAD: Duration = Duration::from_millis(1);
/// After the holder's observed TTL runs out, a random part of this before asking again.
const EXPIRY_SPREAD: Duration = Duration::from_millis(5);
/// How often a progress display is refreshed during a long pause.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

impl Redlock {
    /// Acquires `key`, retrying until `waiting.wait` has passed (once only without it).
    /// `new_token` makes a fresh token for every attempt.
    ///
    /// A waiter sleeps between attempts for the jittered retry delay, cut short by the remaining
    /// TTL it observed on the holder's key (an expiry announces nothing) and by a release
    /// notification, after which it retries within `WAKE_SPREAD`. Subscriptions are made only
    /// once the first attempt failed, so a one-shot acquire never pays for them.
    pub(crate) fn acquire(
        &mut self,
        key: &str,
        ttl: Duration,
        waiting: Waiting<'_>,
        new_token: &mut dyn FnMut() -> anyhow::Result<String>,
    ) -> anyhow::Result<Result<Held, LockError>> {
        let Waiting {
            wait,
            retry,
            wakes,
            notify,
            mut progress,
        } = waiting;
        let started = BootInstant::now();
        let give_up_at = wait.map(|wait| started.add(wait));
        let mut subscriptions = None;
        loop {
            let token = new_token()?;
            let (result, seen) = self.attempt(key, &token, ttl);
            let failure = match result {
                Ok(held) => return Ok(Ok(held)),
                Err(failure) => failure,
            };
            let Some(give_up_at) = give_up_at.filter(|at| !at.has_passed()) else {
                return Ok(Err(self.describe_busy(key, failure)));
            };
            if subscriptions.is_none() {
                if let Some(notify) = &notify {
                    subscriptions = Some(wake::Subscriptions::start(
                        self.servers(),
                        &release_channel(key),
                        self.nodes.timeout(),
                        notify.clone(),
                    ));
                    // A release between that attempt and the subscription was announced to
                    // nobody listening: look again now rather than after a full pause.
                    continue;
                }
            }
            let mut pause = jitter(retry.delay);
            if let Some(left) = seen.ttl {
                pause = pause.min(left + spread(EXPIRY_SPREAD));
            }
            pause = pause.min(give_up_at.remaining());
            let status = WaitProgress {
                waited: started.elapsed(),
                holder: seen.holder,
                holder_ttl: seen.ttl,
            };
            let report: Option<&mut dyn FnMut(&WaitProgress)> = match progress {
                Some(ref mut report) => Some(&mut **report),
                None => None,
            };
            match pause_reporting(wakes, pause, started, &status, report) {
                Some(Wake::Interrupted(signal)) => return Ok(Err(LockError::Interrupted(signal))),
                Some(Wake::Released) => {
                    // Every server announces the same release, and every waiter hears it:
                    // a random head start keeps the waiters from all asking at once.
                    std::thread::sleep(spread(WAKE_SPREAD));
                    if let Some(signal) = drain_released(wakes) {
                        return Ok(Err(LockError::Interrupted(signal)));
                    }
                }
                None => {}
            }
        }
    }
}

/// Pauses for `pause` unless woken, telling `progress` where things stand along the way.
fn pause_reporting(
    wakes: Option<&Receiver<Wake>>,
    pause: Duration,
    started: BootInstant,
    status: &WaitProgress,
    progress: Option<&mut dyn FnMut(&WaitProgress)>,
) -> Option<Wake> {
    let Some(progress) = progress else {
        return pause_until_woken(wakes, pause);
    };
    let until = BootInstant::now().add(pause);
    let mut status = status.clone();
    loop {
        status.waited = started.elapsed();
        progress(&status);
        let left = until.remaining();
        if left.is_zero() {
            return None;
        }
        let slice = left.min(PROGRESS_EVERY);
        if let Some(wake) = pause_until_woken(wakes, slice) {
            return Some(wake);
        }
        if let Some(ttl) = status.holder_ttl.as_mut() {
            *ttl = ttl.saturating_sub(slice);
        }
    }
}

fn pause_until_woken(wakes: Option<&Receiver<Wake>>, pause: Duration) -> Option<Wake> {
    let Some(wakes) = wakes else {
        std::thread::sleep(pause);
        return None;
    };
    match wakes.recv_timeout(pause) {
        Ok(wake) => Some(wake),
        Err(RecvTimeoutError::Timeout) => None,
        Err(RecvTimeoutError::Disconnected) => {
            std::thread::sleep(pause);
            None
        }
    }
}

/// Discards release notifications already queued (the same release, heard from other servers),
/// keeping an interrupt if one came in meanwhile.
fn drain_released(wakes: Option<&Receiver<Wake>>) -> Option<i32> {
    wakes?.try_iter().find_map(Wake::signal)
}

/// A uniformly random duration in [0, max].
fn spread(max: Duration) -> Duration {
    max.mul_f64(random_fraction())
}

fn random_fraction() -> f64 {
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    u64::from_le_bytes(bytes) as f64 / u64::MAX as f64
}

/// A uniformly random pause in [delay/2, 3·delay/2], so waiters do not retry in lockstep.
pub(crate) fn jitter(delay: Duration) -> Duration {
    delay.mul_f64(0.5 + random_fraction())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_half_to_one_and_a_half() {
        let delay = Duration::from_millis(100);
        for _ in 0..200 {
            let pause = jitter(delay);
            assert!(pause >= Duration::from_millis(50) && pause <= Duration::from_millis(150));
        }
    }
}
