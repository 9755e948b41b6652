//! A monotonic clock that keeps counting while the machine is suspended.
//!
//! Redlock's safety argument subtracts elapsed time from the TTL the servers enforce. The servers'
//! clocks keep running while this host sleeps, so ours must too: `std::time::Instant` is
//! `CLOCK_MONOTONIC` on Linux, which stops during suspend and would overstate the validity left.
//! `CLOCK_BOOTTIME` does not stop, and it never jumps with the wall clock.

use std::time::Duration;

/// A point on the boot-time clock. Only differences between two of them mean anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct BootInstant(Duration);

impl BootInstant {
    pub(crate) fn now() -> Self {
        let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME)
            .expect("CLOCK_BOOTTIME is available on every supported Linux");
        BootInstant(Duration::from(now))
    }

    /// Time from `earlier` to `self`, zero if `earlier` is in fact later.
    pub(crate) fn since(self, earlier: BootInstant) -> Duration {
        self.0.saturating_sub(earlier.0)
    }

    pub(crate) fn elapsed(self) -> Duration {
        BootInstant::now().since(self)
    }

    /// Time left until `self`, zero once it has passed.
    pub(crate) fn remaining(self) -> Duration {
        self.since(BootInstant::now())
    }

    pub(crate) fn add(self, d: Duration) -> BootInstant {
        BootInstant(self.0.saturating_add(d))
    }

    /// `d` earlier, or the clock's zero.
    pub(crate) fn sub(self, d: Duration) -> BootInstant {
        BootInstant(self.0.saturating_sub(d))
    }

    pub(crate) fn has_passed(self) -> bool {
        BootInstant::now() >= self
    }

    /// The instant as a reading of `CLOCK_BOOTTIME`, for a timer set on that clock.
    pub(crate) fn since_boot(self) -> Duration {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_clock_moves_forward_and_never_underflows() {
        let a = BootInstant::now();
        std::thread::sleep(Duration::from_millis(2));
        let b = BootInstant::now();
        assert!(b.since(a) >= Duration::from_millis(2));
        assert_eq!(a.since(b), Duration::ZERO);
        assert_eq!(a.remaining(), Duration::ZERO);
        assert!(a.add(Duration::from_secs(60)).remaining() > Duration::from_secs(59));
    }
}
