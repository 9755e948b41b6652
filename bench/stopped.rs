//! d. A stopped minority: what `acquire`, `release` and `exec -- true` cost with 2 of 5 servers
//! stopped (SIGSTOP) next to all 5 healthy, and a crowd of waiters with 1 of 5 stopped next to
//! flock. A round is decided the moment its outcome is certain (src/lock/nodes/mod.rs), so a
//! stopped minority should cost nothing: each figure within a few ms of the healthy one, the
//! crowd as flat as a healthy one, also once the stopped server's listen queue is full and no
//! connection to it can be made (the crowd's part fills it first). With
//! `REDLOCK_BASELINE=/path/to/an/older/redlock`, that binary runs in the same interleave (each
//! run: this build, then the baseline), for a before-and-after of one change.

use super::harness::{Bench, REDLOCK, TIMEOUT};
use super::redis_server::Redis;
use super::report::Report;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// What one binary's runs took: acquire, release, exec -- true.
#[derive(Default)]
struct Times {
    acquire: Vec<Duration>,
    release: Vec<Duration>,
    exec: Vec<Duration>,
}

impl Bench {
    /// d. a stopped minority: `runs` of each command per binary, healthy then with 2 of 5
    /// stopped; then a crowd of each size in `crowds`, `sections` in all, with 1 of 5 stopped.
    pub(super) fn part_d(
        &mut self,
        report: &mut Report,
        servers: &[Redis],
        runs: usize,
        (crowds, sections): (&[usize], usize),
    ) {
        let mut binaries = vec![("now", REDLOCK.clone())];
        if let Ok(old) = std::env::var("REDLOCK_BASELINE") {
            binaries.push(("baseline", old));
        }
        let healthy = self.timed_runs("healthy", &binaries, runs);
        for server in &servers[..2] {
            server.stop();
        }
        let stopped = self.timed_runs("stopped", &binaries, runs);
        for server in &servers[..2] {
            server.resume();
        }
        report.section(&format!(
            "d. a stopped minority: acquire, release and exec -- true with 2 of 5 servers stopped (SIGSTOP), --timeout {TIMEOUT}; each stopped row's baseline is its healthy row"
        ));
        for (index, (label, _)) in binaries.iter().enumerate() {
            let (well, ill) = (&healthy[index], &stopped[index]);
            let rows = [
                ("acquire", &well.acquire, &ill.acquire),
                ("release", &well.release, &ill.release),
                ("exec", &well.exec, &ill.exec),
            ];
            for (what, well, ill) in rows {
                report.row(&format!("{label:<8} {what}, healthy"), well, None, "");
                report.row(
                    &format!("{label:<8} {what}, 2 stopped"),
                    ill,
                    Some(well),
                    "goal: within a few ms of healthy",
                );
            }
        }
        if !self.exec_available() {
            return;
        }
        report.section(&format!(
            "d. a crowd of W waiters, {sections} critical sections in all, 1 of 5 servers stopped (SIGSTOP), its listen queue full"
        ));
        servers[0].stop();
        // As a stopped server's queue is once 511 short-lived clients have come (a crowd's
        // first 511 sections, or a baseline's crowd after this build's): the crowds then meet
        // it full, whichever runs first.
        let _queued = servers[0].fill_listen_queue();
        for &w in crowds {
            let flock = self.crowd("d-flock", w, sections, &servers[1..], |lockfile| {
                format!("flock -w 120 {lockfile} bash -c \"$SECTION\"")
            });
            report.crowd(&format!("flock -w 120, W = {w}"), &flock, None);
            for (label, binary) in &binaries {
                let name = format!("d-{label}");
                let redlock = self.crowd(&name, w, sections, &servers[1..], |_| {
                    format!("\"{binary}\" -q exec crowd-d-{label}-{w} --wait 120s -- bash -c \"$SECTION\"")
                });
                report.crowd(
                    &format!("{label} exec --wait, W = {w}"),
                    &redlock,
                    Some(&flock),
                );
            }
        }
        servers[0].resume();
        report.note("goal: wall ratio to flock as with all 5 healthy (part f: ≤ 2×); the commands and reads counted are the 4 running servers'");
    }

    /// `runs` of acquire, release and exec -- true for each binary, one binary after the other
    /// within a run, so that a loaded moment costs them alike.
    fn timed_runs(&mut self, phase: &str, binaries: &[(&str, String)], runs: usize) -> Vec<Times> {
        let mut times: Vec<Times> = binaries.iter().map(|_| Times::default()).collect();
        for run in 0..=runs {
            for (index, (label, binary)) in binaries.iter().enumerate() {
                // A fresh name each time: the stopped servers take the queued SETs when resumed.
                let lock = format!("d-{phase}-{label}-{run}");
                let timed = |args: &[&str]| {
                    let started = Instant::now();
                    let output = self
                        .redlock_of(binary)
                        .args(args)
                        .stderr(Stdio::null())
                        .output();
                    let elapsed = started.elapsed();
                    match output {
                        Ok(output) if output.status.success() => Some((elapsed, output.stdout)),
                        _ => None,
                    }
                };
                let acquired = timed(&["acquire", &lock, "--ttl", "5s"]);
                let token = acquired
                    .as_ref()
                    .map(|(_, out)| String::from_utf8_lossy(out).trim().to_string());
                let released = token
                    .as_deref()
                    .and_then(|token| timed(&["release", &lock, "--token", token]));
                let exec = timed(&["exec", &format!("{lock}-exec"), "--", "true"]);
                let (Some(acquired), Some(released), Some(exec)) = (acquired, released, exec)
                else {
                    self.broken
                        .push(format!("d ({label}, {phase}): run {run} failed"));
                    return times;
                };
                // The first run warms the caches and is not counted.
                if run > 0 {
                    let mine = &mut times[index];
                    mine.acquire.push(acquired.0);
                    mine.release.push(released.0);
                    mine.exec.push(exec.0);
                }
            }
        }
        times
    }
}
