//! j. Shared locks: a mixed crowd of shared holders and writers, next to `flock -s` / `flock -x`
//! doing the same work in the same run. Each writer's section increments a counter (a lost
//! increment is a broken exclusion); each shared holder's section reads it.

use super::harness::Bench;
use super::report::{ms, Report};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

impl Bench {
    pub(super) fn part_j(
        &mut self,
        report: &mut Report,
        (readers, writers): (usize, usize),
        sections: usize,
    ) {
        report.section(&format!(
            "j. a mixed crowd: {readers} shared holders and {writers} writers, {sections} sections in all"
        ));
        let flock = self.mixed("flock", (readers, writers), sections, |lock, shared| {
            let mode = if shared { "-s" } else { "-x" };
            format!("flock {mode} -w 120 {lock} bash -c \"$SECTION\"")
        });
        let redlock = self.mixed("redlock", (readers, writers), sections, |_, shared| {
            let mode = if shared { "--shared" } else { "" };
            format!("\"$REDLOCK\" -q exec mixed {mode} --wait 120s -- bash -c \"$SECTION\"")
        });
        report.note(&format!(
            "flock -s / -x: {}; redlock exec --shared / exec: {} ({:.2}× flock; goal ≤ 2×)",
            ms(flock),
            ms(redlock),
            redlock.as_secs_f64() / flock.as_secs_f64().max(f64::EPSILON)
        ));
    }

    /// The wall time of one mixed crowd, `take(lockfile, shared)` being how a worker takes the
    /// lock around `$SECTION`.
    fn mixed(
        &mut self,
        name: &str,
        (readers, writers): (usize, usize),
        sections: usize,
        take: impl Fn(&str, bool) -> String,
    ) -> Duration {
        let dir = self.dir.join(format!("j-{name}"));
        std::fs::create_dir_all(&dir).expect("bench dir");
        let counter = dir.join("counter");
        std::fs::write(&counter, "0\n").expect("counter");
        let lock = dir.join("lock").display().to_string();
        let write = format!("read n < {c}; echo $((n + 1)) > {c}", c = counter.display());
        let read = format!("read n < {}", counter.display());
        let workers = readers + writers;
        let mut written = 0;
        let started = Instant::now();
        let children: Vec<Child> = (0..workers)
            .map(|i| {
                let shared = i < readers;
                let mine = sections / workers + usize::from(i < sections % workers);
                if !shared {
                    written += mine;
                }
                let script = format!(
                    "for i in $(seq {mine}); do {} || exit 1; done",
                    take(&lock, shared)
                );
                self.redlock_env(Command::new("bash"))
                    .args(["-c", &script])
                    .env("SECTION", if shared { &read } else { &write })
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("spawn bash")
            })
            .collect();
        let mut failed = 0;
        for mut child in children {
            failed += usize::from(!child.wait().is_ok_and(|s| s.success()));
        }
        let wall = started.elapsed();
        if failed > 0 {
            self.broken
                .push(format!("j ({name}): {failed} worker(s) failed"));
        }
        let count = std::fs::read_to_string(&counter).unwrap_or_default();
        if count.trim() != written.to_string() {
            self.broken.push(format!(
                "j ({name}): counter is {} after {written} increments",
                count.trim()
            ));
        }
        wall
    }
}
