//! h. What `--fence`, `--limit` and `--shared` cost: one-shot acquires of each kind, interleaved run by run
//! (in a rotating order) so that the machine's drift and load affect them alike, next to a plain
//! acquire.

use super::harness::Bench;
use super::report::Report;
use std::time::{Duration, Instant};

/// The kinds of acquire compared, by their extra arguments.
const KINDS: [(&str, &[&str]); 5] = [
    ("redlock acquire (plain)", &[]),
    ("acquire --fence  vs plain", &["--fence"]),
    ("acquire --limit 3  vs plain", &["--limit", "3"]),
    (
        "acquire --limit 3 --fence vs plain",
        &["--limit", "3", "--fence"],
    ),
    ("acquire --shared  vs plain", &["--shared"]),
];

impl Bench {
    pub(super) fn part_h(&mut self, report: &mut Report, runs: usize) {
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); KINDS.len()];
        for i in 0..runs {
            // Each run starts with another kind, so that none always follows the same one.
            for step in 0..KINDS.len() {
                let kind = (i + step) % KINDS.len();
                let extra = KINDS[kind].1;
                let started = Instant::now();
                let out = self.redlock().args(["acquire", "f"]).args(extra).output();
                times[kind].push(started.elapsed());
                let token = match out {
                    Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                    other => {
                        self.broken
                            .push(format!("h: acquire {extra:?} {i} failed: {other:?}"));
                        return;
                    }
                };
                // A semaphore slot is released through the semaphore, which finds it; a shared
                // holder leaves as one.
                let limit: &[&str] = if extra.contains(&"--limit") {
                    &["--limit", "3"]
                } else if extra.contains(&"--shared") {
                    &["--shared"]
                } else {
                    &[]
                };
                let released = self
                    .redlock()
                    .args(["release", "f", "--token", &token])
                    .args(limit)
                    .status()
                    .is_ok_and(|s| s.success());
                if !released {
                    self.broken
                        .push(format!("h: release after {extra:?} {i} failed"));
                    return;
                }
            }
        }
        report.section(
            "h. what --fence, --limit and --shared cost, one-shot acquire (median [p10–p90])",
        );
        report.row(KINDS[0].0, &times[0], None, "");
        for (kind, (name, _)) in KINDS.iter().enumerate().skip(1) {
            report.row(name, &times[kind], Some(&times[0]), "");
        }
    }
}
