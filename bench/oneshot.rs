//! a. One-shot `acquire` and `release` as whole processes, next to flock and redis-cli.

use super::harness::{flock_true, sample, Bench};
use super::report::Report;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

impl Bench {
    /// a. acquire and release as whole processes, next to flock and redis-cli.
    pub(super) fn part_a(&mut self, report: &mut Report, runs: usize, port: u16) {
        let lockfile = self.dir.join("a.lock");
        let truth = sample(runs, || Command::new("true").status().map(|_| ()));
        let flock = sample(runs, || flock_true(&lockfile).status().map(|_| ()));
        let cli = sample(runs, || {
            Command::new("redis-cli")
                .args([
                    "-p",
                    &port.to_string(),
                    "SET",
                    "bench:cli",
                    "v",
                    "NX",
                    "PX",
                    "30000",
                ])
                .stdout(Stdio::null())
                .status()
                .map(|_| ())
        });
        let mut acquire = Vec::new();
        let mut release = Vec::new();
        for i in 0..runs {
            let started = Instant::now();
            let out = self.redlock().args(["acquire", "a"]).output();
            acquire.push(started.elapsed());
            let token = match out {
                Ok(out) if out.status.success() => {
                    String::from_utf8_lossy(&out.stdout).trim().to_string()
                }
                other => {
                    self.broken
                        .push(format!("a: acquire {i} failed: {other:?}"));
                    return;
                }
            };
            let started = Instant::now();
            let ok = self
                .redlock()
                .args(["release", "a", "--token", &token])
                .status()
                .is_ok_and(|s| s.success());
            release.push(started.elapsed());
            if !ok {
                self.broken.push(format!("a: release {i} failed"));
                return;
            }
        }
        let both: Vec<Duration> = acquire.iter().zip(&release).map(|(a, r)| *a + *r).collect();
        report.section("a. one-shot acquire / release, whole processes (median [p10–p90])");
        report.row("true (process floor)", &truth, None, "");
        report.row("flock FILE true", &flock, None, "");
        report.row("redis-cli SET k v NX PX 30000", &cli, None, "");
        report.row(
            "redlock acquire  vs flock",
            &acquire,
            Some(&flock),
            "goal ≤ 1.2×",
        );
        report.row(
            "redlock acquire  vs redis-cli",
            &acquire,
            Some(&cli),
            "goal ≤ 0.5×",
        );
        report.row("redlock release  vs flock", &release, Some(&flock), "");
        report.row(
            "acquire + release vs 2×flock",
            &both,
            Some(&doubled(&flock)),
            "",
        );
    }
}

fn doubled(times: &[Duration]) -> Vec<Duration> {
    times.iter().map(|t| *t * 2).collect()
}
