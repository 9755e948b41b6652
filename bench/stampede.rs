//! g. A stampede: many one-shot acquires of a free lock at once (one winner, few rounds each),
//! then as many waiters, each served in turn.

use super::harness::Bench;
use super::report::{ms, Report};
use std::process::{Child, Stdio};
use std::time::Instant;

impl Bench {
    /// g. a stampede: many one-shot acquires of a free lock at once, then as many waiters.
    pub(super) fn part_g(&mut self, report: &mut Report, contenders: usize) {
        report.section(&format!(
            "g. {contenders} simultaneous acquires of a free lock"
        ));
        let children: Vec<Child> = (0..contenders)
            .map(|_| {
                self.redlock()
                    .args(["acquire", "g-storm", "-v", "--ttl", "60s"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("spawn redlock")
            })
            .collect();
        let (mut winners, mut rounds) = (0, 0);
        for child in children {
            let Ok(out) = child.wait_with_output() else {
                continue;
            };
            winners += usize::from(out.status.success());
            let text = String::from_utf8_lossy(&out.stderr);
            rounds = rounds.max(text.matches("acquire redlock:g-storm").count());
        }
        report.note(&format!(
            "one-shot: {winners} winner(s), at most {rounds} round(s) per contender (goal: exactly 1, ≤ 3)"
        ));
        let started = Instant::now();
        let children: Vec<Child> = (0..contenders)
            .map(|_| {
                self.redlock()
                    .args(["exec", "g-wait", "--wait", "120s", "--", "true"])
                    .spawn()
                    .expect("spawn redlock")
            })
            .collect();
        let served = children
            .into_iter()
            .filter_map(|mut c| c.wait().ok())
            .filter(|s| s.success())
            .count();
        if served != contenders {
            self.broken.push(format!(
                "g: {served} of {contenders} waiting execs were served"
            ));
        }
        report.note(&format!(
            "with --wait: {served} of {contenders} served in turn, in {}",
            ms(started.elapsed())
        ));
    }
}
