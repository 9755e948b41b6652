//! d. 2 of 5 servers stopped (SIGSTOP): an acquire should cost one per-server timeout, not more.

use super::harness::{Bench, TIMEOUT};
use super::redis_server::Redis;
use super::report::Report;
use std::process::Stdio;
use std::time::{Duration, Instant};

impl Bench {
    /// d. 2 of 5 servers stopped: acquire should cost one timeout, not more.
    pub(super) fn part_d(&mut self, report: &mut Report, servers: &[Redis], runs: usize) {
        let healthy = self.timed_acquires("d-healthy", runs);
        for server in &servers[..2] {
            server.stop();
        }
        let stopped = self.timed_acquires("d-stopped", runs);
        for server in &servers[..2] {
            server.resume();
        }
        report.section(&format!(
            "d. acquire with 2 of 5 servers stopped (SIGSTOP), --timeout {TIMEOUT}"
        ));
        report.row("all healthy", &healthy, None, "");
        report.row(
            "2 of 5 stopped",
            &stopped,
            None,
            "goal ≤ timeout + 10 ms = 210 ms",
        );
    }

    fn timed_acquires(&mut self, name: &str, runs: usize) -> Vec<Duration> {
        let mut times = Vec::new();
        for i in 0..runs {
            // A fresh name each time: the stopped servers take the queued SETs when resumed.
            let lock = format!("{name}-{i}");
            let started = Instant::now();
            let ok = self
                .redlock()
                .args(["acquire", &lock, "--ttl", "5s"])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            times.push(started.elapsed());
            if !ok {
                self.broken.push(format!("d ({name}): acquire {i} failed"));
                break;
            }
        }
        times
    }
}
