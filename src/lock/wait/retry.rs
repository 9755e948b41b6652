//! How long a waiter pauses before it asks again: the jittered retry delay stretched by its place
//! in the queue, cut short for the head when the holder's observed TTL runs out, and the back-off
//! after a split vote.

use crate::lock::vote::Seen;
use std::time::Duration;

/// How to retry while waiting.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RetryPolicy {
    /// Mean pause between attempts; each pause is drawn uniformly from [delay/2, 3·delay/2].
    pub(crate) delay: Duration,
}

/// After the holder's observed TTL runs out, a random part of this before asking again.
const EXPIRY_SPREAD: Duration = Duration::from_millis(5);
/// A queued waiter's own schedule (for a lost notification) is the retry delay times its place
/// in the queue plus one, up to this factor: the crowd's polls add up to about ln(W) per retry
/// delay instead of W.
const RANK_STRETCH_MAX: u32 = 16;
/// A one-shot acquire that found the lock free but lost a split vote tries this many more times.
const SPLIT_RETRIES: u32 = 2;

impl RetryPolicy {
    /// The longest pause of a queued waiter's schedule: the top of the jitter, stretched as far
    /// as a place in the queue stretches it. The queue keeps a waiter's place for a few of these.
    pub(super) fn longest_pause(self) -> Duration {
        self.delay.mul_f64(1.5) * RANK_STRETCH_MAX
    }

    /// The pause after an attempt that saw `seen`, the `splits`-th split vote in a row, by a
    /// waiter that is `head` of the queue (or not queued: the schedule of a waiter without a
    /// queue). The head also wakes when the holder's observed TTL runs out, since an expiry
    /// announces nothing.
    pub(super) fn pause(self, seen: &Seen, splits: u32, head: bool) -> Duration {
        let mut pause = if seen.split && head {
            split_backoff(seen, splits)
        } else {
            let stretch = seen
                .rank
                .map_or(1, |rank| (rank + 1).min(u64::from(RANK_STRETCH_MAX)) as u32);
            jitter(self.delay) * stretch
        };
        if let Some(left) = seen.ttl.filter(|_| head) {
            pause = pause.min(left + spread(EXPIRY_SPREAD));
        }
        pause
    }
}

/// The pause before a one-shot acquire (no `--wait`) tries again after an attempt that saw
/// `seen`, the `splits`-th split vote in a row: only when it found the lock free but lost a
/// split vote, up to `SPLIT_RETRIES` times.
pub(super) fn one_shot_retry(seen: &Seen, splits: u32) -> Option<Duration> {
    (seen.split && splits <= SPLIT_RETRIES).then(|| split_backoff(seen, splits))
}

/// After a split vote: the contender that won the most servers (the same one in everybody's
/// view, ties going to the smallest token) asks again once the others' clean-ups are through,
/// about one round later; the others back off for a random, growing multiple of a round, by
/// which time the favourite normally holds the lock.
fn split_backoff(seen: &Seen, splits: u32) -> Duration {
    let round = seen.round.max(Duration::from_millis(1));
    if seen.favourite {
        round
    } else {
        round * 2 + spread(round * (4 << splits.min(6)))
    }
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
