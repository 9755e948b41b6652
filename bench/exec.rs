//! b. `redlock exec` around `true`, next to flock around `true`.

use super::harness::{flock_true, sample, Bench};
use super::report::Report;

impl Bench {
    /// b. exec around `true`, next to flock around `true`.
    pub(super) fn part_b(&mut self, report: &mut Report, runs: usize, exec: bool) {
        report.section("b. redlock exec L -- true");
        if !exec {
            report.skip(
                "redlock exec L -- true  vs flock",
                "skipped: exec not available",
            );
            return;
        }
        let lockfile = self.dir.join("b.lock");
        let flock = sample(runs, || flock_true(&lockfile).status().map(|_| ()));
        let mut failed = 0;
        let exec_times = sample(runs, || {
            let status = self.redlock().args(["exec", "b", "--", "true"]).status()?;
            failed += usize::from(!status.success());
            Ok(())
        });
        if failed > 0 {
            self.broken
                .push(format!("b: {failed} of {runs} exec runs failed"));
        }
        report.row(
            "redlock exec L -- true  vs flock",
            &exec_times,
            Some(&flock),
            "goal ≤ 1.5×",
        );
    }
}
