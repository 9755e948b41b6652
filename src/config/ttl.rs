//! Whether a TTL leaves a lock its validity: after one full per-server timeout and the
//! clock-drift allowance, and for `exec`, with room for its renewals.

use super::servers::Config;
use crate::exit::usage;
use crate::lock::quorum;
use crate::schedule::Schedule;
use std::time::Duration;

impl Config {
    /// Checks that `ttl` leaves validity after the drift allowance and one full per-server
    /// timeout, the slowest an acquisition that counts can take.
    pub(super) fn check_ttl(&self, ttl: Duration) -> anyhow::Result<()> {
        if !ttl.subsec_nanos().is_multiple_of(1_000_000) {
            return Err(usage(format!(
                "--ttl {} is not a whole number of milliseconds; expected e.g. 1500ms",
                humantime::format_duration(ttl)
            )));
        }
        let minimum = quorum::shortest_ttl_leaving(self.timeout);
        if ttl < minimum {
            return Err(usage(format!(
                "--ttl {} leaves no validity after the {} per-server timeout and the clock-drift allowance; expected at least {} ms",
                humantime::format_duration(ttl),
                humantime::format_duration(self.timeout),
                minimum.as_millis()
            )));
        }
        Ok(())
    }

    /// `exec`'s renewal schedule for a lock taken for `ttl`, whose command gets `kill_after`
    /// (`--kill-after`) between SIGTERM and SIGKILL, if the TTL leaves its renewals time.
    pub(super) fn renewal_schedule(
        &self,
        ttl: Duration,
        kill_after: Duration,
    ) -> anyhow::Result<Schedule> {
        let schedule = Schedule {
            ttl,
            timeout: self.timeout,
            kill_after,
        };
        if !schedule.is_workable() {
            // A TTL too short for the renewal schedule would report the lock lost at the first
            // renewal.
            return Err(usage(format!(
                "--ttl {} is too short for exec with a {} per-server timeout; expected at least {} ms so renewals have time",
                humantime::format_duration(schedule.ttl),
                humantime::format_duration(schedule.timeout),
                Schedule::minimum_ttl(schedule.timeout).as_millis()
            )));
        }
        Ok(schedule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::servers::tests::args;

    #[test]
    fn ttl_must_leave_validity_after_the_timeout() {
        let config = Config::from_args(&args(&[])).unwrap();
        assert!(config.check_ttl(Duration::from_secs(30)).is_ok());
        let err = config.check_ttl(Duration::from_millis(150)).unwrap_err();
        assert!(err.to_string().contains("--ttl 150ms"), "{err}");
        assert!(config.check_ttl(Duration::from_micros(1_500_500)).is_err());
    }
}
