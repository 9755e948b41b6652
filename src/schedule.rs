//! The renewal schedule, as arithmetic only: when `exec` renews, how long a command may take to
//! stop, and the last moment a renewal may still be tried. Every caller asks here, so the rule
//! "renew every TTL/3, and stop the command within TTL/3" is written once.
//!
//! Why these numbers: a renewal is due TTL/3 after the lock was confirmed and may take one
//! `--timeout`. If it fails, the command gets SIGTERM, then up to the grace period to stop, then
//! SIGKILL, and all of that must end before the last confirmed validity does. TTL/3 between
//! renewals leaves room for several quick retries before that point (Redisson's schedule: a 30 s
//! lease renewed every 10 s).

use crate::lock::quorum;
use crate::retry::Retry;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Schedule {
    pub(crate) ttl: Duration,
    /// The per-server budget of one round.
    pub(crate) timeout: Duration,
    /// `--kill-after`: how long a command gets between SIGTERM and SIGKILL, at most.
    pub(crate) kill_after: Duration,
}

impl Schedule {
    /// Time from a confirmed (re)acquisition to the next renewal.
    pub(crate) fn interval(&self) -> Duration {
        self.ttl / 3
    }

    /// How long a command that must stop gets after SIGTERM: `--kill-after`, but never more
    /// than a third of the TTL, so that the stop fits inside the validity.
    pub(crate) fn grace(&self) -> Duration {
        self.kill_after.min(self.ttl / 3)
    }

    /// What must be left of the validity when a renewal round starts: the round itself, then
    /// the grace of a command that must stop if it fails.
    pub(crate) fn reserve(&self) -> Duration {
        self.grace() + self.timeout
    }

    /// The last moment (as time since the lock was confirmed, with `validity` left then) to
    /// start a renewal round.
    pub(crate) fn give_up_after(&self, validity: Duration) -> Duration {
        validity.saturating_sub(self.reserve())
    }

    /// How to retry a failed renewal round (the house's one retry policy, `crate::retry`):
    /// quickly, but not so quickly that a down server's timeout is all we do.
    pub(crate) fn retry(&self) -> Retry {
        Retry {
            delay: (self.ttl / 20).clamp(Duration::from_millis(10), Duration::from_secs(1)),
        }
    }

    /// True when the TTL leaves room for the schedule: an acquisition (one `timeout`), the wait
    /// to the first renewal, its round, and the longest grace, all within the validity.
    pub(crate) fn is_workable(&self) -> bool {
        let acquire = self.timeout;
        let worst_grace = self.ttl / 3;
        let needed = acquire + self.interval() + self.timeout + worst_grace;
        quorum::validity(self.ttl, needed).is_some()
    }

    /// The shortest whole-millisecond TTL for which `is_workable` holds with this timeout.
    pub(crate) fn minimum_ttl(timeout: Duration) -> Duration {
        // Two thirds of the TTL go to the interval and the worst grace, so the last third must
        // cover two timeouts and the drift: start from that estimate and step up.
        let mut ttl = quorum::shortest_ttl_leaving(timeout * 2) * 3;
        let step = |ttl: Duration| Schedule {
            ttl,
            timeout,
            kill_after: Duration::MAX,
        };
        while step(ttl).is_workable() && ttl > Duration::from_millis(1) {
            ttl -= Duration::from_millis(1);
        }
        while !step(ttl).is_workable() {
            ttl += Duration::from_millis(1);
        }
        ttl
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(ttl_ms: u64, timeout_ms: u64, kill_after_ms: u64) -> Schedule {
        Schedule {
            ttl: Duration::from_millis(ttl_ms),
            timeout: Duration::from_millis(timeout_ms),
            kill_after: Duration::from_millis(kill_after_ms),
        }
    }

    #[test]
    fn renews_every_third_and_stops_within_a_third() {
        let s = schedule(30_000, 200, 5_000);
        assert_eq!(s.interval(), Duration::from_secs(10));
        assert_eq!(s.grace(), Duration::from_secs(5));
        let short_ttl = schedule(3_000, 200, 5_000);
        assert_eq!(short_ttl.grace(), Duration::from_secs(1));
        assert_eq!(short_ttl.reserve(), Duration::from_millis(1_200));
    }

    #[test]
    fn gives_up_early_enough_to_stop_the_command_in_time() {
        let s = schedule(30_000, 200, 5_000);
        // 29.5 s of validity: the last round starts 5.2 s before it ends.
        assert_eq!(
            s.give_up_after(Duration::from_millis(29_500)),
            Duration::from_millis(24_300)
        );
        assert_eq!(s.give_up_after(Duration::from_secs(1)), Duration::ZERO);
    }

    #[test]
    fn retries_quickly_but_not_in_a_tight_loop() {
        assert_eq!(schedule(100, 1, 1).retry().delay, Duration::from_millis(10));
        assert_eq!(schedule(30_000, 1, 1).retry().delay, Duration::from_secs(1));
        assert_eq!(
            schedule(3_000, 1, 1).retry().delay,
            Duration::from_millis(150)
        );
    }

    #[test]
    fn minimum_ttl_is_the_edge_of_workable() {
        for timeout_ms in [1, 200, 400, 1_000] {
            let timeout = Duration::from_millis(timeout_ms);
            let minimum = Schedule::minimum_ttl(timeout);
            let at = |ttl| Schedule {
                ttl,
                timeout,
                kill_after: Duration::MAX,
            };
            assert!(at(minimum).is_workable(), "{minimum:?}");
            assert!(!at(minimum - Duration::from_millis(1)).is_workable());
        }
        // With the default 200 ms timeout a TTL must be a little over 1.2 s.
        let default = Schedule::minimum_ttl(Duration::from_millis(200));
        assert!(default > Duration::from_millis(1_200) && default < Duration::from_millis(1_300));
    }
}
