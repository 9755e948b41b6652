//! c. Contention: a few processes taking turns at a read-increment-write critical section, by
//! flock, by `exec --wait` and by `acquire --wait` and `release`; a lost increment is broken
//! exclusion.

use super::harness::Bench;
use super::report::{ms, percentile, Report};
use std::fmt::Write as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

impl Bench {
    /// c. 8 processes taking turns at a read-increment-write critical section.
    pub(super) fn part_c(
        &mut self,
        report: &mut Report,
        workers: usize,
        sections: usize,
        exec: bool,
    ) {
        report.section(&format!(
            "c. contention: {workers} processes × {sections} critical sections (total wall; handover gap median / p99)"
        ));
        let flock = self.contend("flock", workers, sections, |lockfile| {
            format!("flock -w 60 {lockfile} bash -c \"$SECTION\"")
        });
        let acquire = self.contend("acquire", workers, sections, |_| {
            "t=$(\"$REDLOCK\" acquire c --wait 60s) || exit 1; bash -c \"$SECTION\"; \"$REDLOCK\" release c --token \"$t\" || exit 2".into()
        });
        let execd = exec.then(|| {
            self.contend("exec", workers, sections, |_| {
                "\"$REDLOCK\" exec --wait 60s c -- bash -c \"$SECTION\" || exit 1".into()
            })
        });
        let Some(flock) = flock else { return };
        report.contention("flock -w 60 FILE", &flock, None);
        match execd {
            Some(Some(execd)) => report.contention("redlock exec --wait", &execd, Some(&flock)),
            Some(None) => {}
            None => report.skip("redlock exec --wait", "skipped: exec not available"),
        }
        if let Some(acquire) = acquire {
            report.contention("redlock acquire --wait + release", &acquire, Some(&flock));
        }
        report.note(
            "goal for exec: total ≤ 1.5× flock; gap median ≤ 2 ms, p99 ≤ 20 ms; counter exact",
        );
    }

    pub(super) fn contend(
        &mut self,
        name: &str,
        workers: usize,
        sections: usize,
        take: impl Fn(&str) -> String,
    ) -> Option<Contention> {
        let dir = self.dir.join(format!("c-{name}"));
        std::fs::create_dir_all(&dir).expect("bench dir");
        let counter = dir.join("counter");
        let log = dir.join("log");
        std::fs::write(&counter, "0\n").expect("counter");
        // bash's EPOCHREALTIME stamps entry and exit without forking `date`, so the gap is the
        // lock's handover, not the clock's cost.
        let section = format!(
            "echo \"E $EPOCHREALTIME\" >> {log}; read n < {counter}; echo $((n + 1)) > {counter}; echo \"X $EPOCHREALTIME\" >> {log}",
            log = log.display(),
            counter = counter.display()
        );
        let lockfile = dir.join("lock");
        let step = take(&lockfile.display().to_string());
        let script = format!("for i in $(seq {sections}); do {step}; done");
        let started = Instant::now();
        let children: Vec<Child> = (0..workers)
            .map(|_| {
                self.redlock_env(Command::new("sh"))
                    .args(["-c", &script])
                    .env("SECTION", &section)
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("spawn sh")
            })
            .collect();
        let mut failed = 0;
        for mut child in children {
            failed += usize::from(!child.wait().is_ok_and(|s| s.success()));
        }
        let total = started.elapsed();
        let count = std::fs::read_to_string(&counter).unwrap_or_default();
        let expected = workers * sections;
        let exact = count.trim() == expected.to_string();
        if failed > 0 {
            self.broken
                .push(format!("c ({name}): {failed} worker(s) failed"));
        }
        if !exact {
            self.broken.push(format!(
                "c ({name}): counter is {} after {expected} increments",
                count.trim()
            ));
        }
        let gaps = handover_gaps(&std::fs::read_to_string(&log).unwrap_or_default());
        Some(Contention {
            total,
            gaps,
            count: count.trim().to_string(),
            exact,
        })
    }
}

pub(super) struct Contention {
    pub(super) total: Duration,
    gaps: Vec<Duration>,
    count: String,
    exact: bool,
}

/// From the entry/exit log, the time from each exit to the next entry.
fn handover_gaps(log: &str) -> Vec<Duration> {
    let mut gaps = Vec::new();
    let mut last_exit: Option<f64> = None;
    for line in log.lines() {
        let Some((kind, at)) = line.split_once(' ') else {
            continue;
        };
        let Ok(at) = at.trim().parse::<f64>() else {
            continue;
        };
        match kind {
            "E" => {
                if let Some(exit) = last_exit.take() {
                    gaps.push(Duration::from_secs_f64((at - exit).max(0.0)));
                }
            }
            "X" => last_exit = Some(at),
            _ => {}
        }
    }
    gaps
}

impl Report {
    fn contention(&mut self, name: &str, c: &Contention, baseline: Option<&Contention>) {
        let mut line = format!(
            "  {name:<34} total {:>10}  gap median {:>9} p99 {:>9}  counter {} ({})",
            ms(c.total),
            ms(percentile(&c.gaps, 0.5)),
            ms(percentile(&c.gaps, 0.99)),
            c.count,
            if c.exact { "exact" } else { "WRONG" }
        );
        if let Some(base) = baseline {
            let _ = write!(
                line,
                "  total ratio {:.2}×",
                c.total.as_secs_f64() / base.total.as_secs_f64().max(f64::EPSILON)
            );
        }
        let _ = writeln!(self.text, "{line}");
    }
}
