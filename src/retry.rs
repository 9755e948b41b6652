//! The one retry policy of the house: how long to pause before trying again, for everything
//! that tries again: a waiting acquire (lock/wait/), a latch's waiter reading the latch again
//! (lock/latch/wait.rs) and a renewal that failed (exec/renew.rs).
//!
//! A pause is a mean delay drawn uniformly from [delay/2, 3·delay/2], so that a crowd that
//! failed together does not try again together; and the next try is never later than the
//! caller's deadline, the last moment a try is of use (the end of `--wait`, or of a renewal's
//! window: schedule.rs).
//!
//! What each caller adds is its own and stays with it: the mean delays (`--retry-delay`, a
//! latch's re-read, a renewal's retry from the TTL in schedule.rs); a lock waiter's pause
//! stretched by its place in the queue, cut short when the holder's TTL runs out, and the back-off
//! after a split vote (lock/wait/backoff.rs), which are the queue's protocol. The renewals' own
//! cadence is not a retry and is not here: a renewal is due a third of the TTL after the last
//! confirmed one, with no jitter, because the margins that keep the command from running
//! unprotected are reckoned from exactly that (schedule.rs); only the retry of a failed renewal
//! is a pause of this policy, and its deadline is still the last moment that lets the command be
//! stopped in time.

use crate::clock::BootInstant;
use std::time::Duration;

/// How to pause between tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Retry {
    /// The mean pause; each pause is drawn uniformly from [delay/2, 3·delay/2].
    pub(crate) delay: Duration,
}

impl Retry {
    /// One pause before the next try.
    pub(crate) fn pause(self) -> Duration {
        self.delay.mul_f64(0.5 + random_fraction())
    }

    /// The longest pause `pause` draws.
    pub(crate) fn longest_pause(self) -> Duration {
        self.delay.mul_f64(1.5)
    }

    /// When to try next: one pause from now, but never after `deadline`.
    pub(crate) fn next(self, deadline: BootInstant) -> BootInstant {
        not_after(self.pause(), deadline)
    }
}

/// `pause` from now, but never after `deadline`: a pause of a caller's own making (a lock
/// waiter's, lock/wait/backoff.rs) bounded as `Retry::next` bounds its own.
pub(crate) fn not_after(pause: Duration, deadline: BootInstant) -> BootInstant {
    BootInstant::now().add(pause).min(deadline)
}

/// A uniformly random duration in [0, max].
pub(crate) fn spread(max: Duration) -> Duration {
    max.mul_f64(random_fraction())
}

fn random_fraction() -> f64 {
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    u64::from_le_bytes(bytes) as f64 / u64::MAX as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_stays_within_half_to_one_and_a_half_of_the_delay() {
        let retry = Retry {
            delay: Duration::from_millis(100),
        };
        assert_eq!(retry.longest_pause(), Duration::from_millis(150));
        for _ in 0..200 {
            let pause = retry.pause();
            assert!(pause >= Duration::from_millis(50) && pause <= retry.longest_pause());
        }
    }

    #[test]
    fn the_next_try_is_never_after_the_deadline() {
        let retry = Retry {
            delay: Duration::from_secs(10),
        };
        let deadline = BootInstant::now().add(Duration::from_millis(50));
        for _ in 0..20 {
            assert_eq!(retry.next(deadline), deadline);
        }
        let later = BootInstant::now().add(Duration::from_secs(60));
        let next = retry.next(later);
        assert!(next < later && next >= BootInstant::now().add(Duration::from_secs(4)));
    }
}
