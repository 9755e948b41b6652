//! e. Peak resident memory (ru_maxrss) of an acquire, a busy waiter and an exec, next to flock.

use super::harness::{flock_true, rusage, Bench};
use super::report::Report;
use std::process::{Command, Stdio};

impl Bench {
    /// e. peak resident memory.
    pub(super) fn part_e(&mut self, report: &mut Report, exec: bool) {
        report.section("e. peak resident memory (ru_maxrss)");
        let acquire = peak_rss(
            self.redlock()
                .args(["acquire", "e-acquire"])
                .stdout(Stdio::null()),
        );
        let waiting = {
            // A waiter with live subscriptions: holder first, then a waiter that gives up.
            let _ = self
                .redlock()
                .args(["acquire", "e-wait"])
                .stdout(Stdio::null())
                .status();
            peak_rss(
                self.redlock()
                    .args(["acquire", "e-wait", "--wait", "1s"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null()),
            )
        };
        let flock = peak_rss(&mut flock_true(&self.dir.join("e.lock")));
        report.memory("flock FILE true", flock, "");
        report.memory("redlock acquire", acquire, "");
        report.memory("redlock acquire --wait 1s (busy)", waiting, "");
        if exec {
            let sleep = peak_rss(self.redlock().args(["exec", "e-exec", "--", "sleep", "1"]));
            report.memory("redlock exec L -- sleep 1", sleep, "goal ≤ 10 MiB");
        } else {
            report.skip("redlock exec L -- sleep 1", "skipped: exec not available");
        }
    }
}

/// Peak RSS of one run of `cmd`, in KiB.
fn peak_rss(cmd: &mut Command) -> Option<u64> {
    rusage(cmd).map(|usage| usage.ru_maxrss as u64)
}
