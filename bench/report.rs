//! What the benchmark prints: sections of rows, each figure as a median with its spread, beside
//! its baseline and the ratio to it, and notes; with the percentiles and milliseconds they use.

use std::fmt::Write as _;
use std::time::Duration;

#[derive(Default)]
pub(super) struct Report {
    pub(super) text: String,
}

impl Report {
    pub(super) fn section(&mut self, title: &str) {
        let _ = writeln!(self.text, "\n{title}");
    }

    pub(super) fn row(
        &mut self,
        name: &str,
        times: &[Duration],
        baseline: Option<&[Duration]>,
        goal: &str,
    ) {
        let median = percentile(times, 0.5);
        let mut line = format!(
            "  {name:<34} {:>10}  [{} – {}]",
            ms(median),
            ms(percentile(times, 0.1)),
            ms(percentile(times, 0.9))
        );
        if let Some(baseline) = baseline {
            let base = percentile(baseline, 0.5);
            let _ = write!(
                line,
                "  baseline {:>9}  ratio {:.2}×",
                ms(base),
                median.as_secs_f64() / base.as_secs_f64().max(f64::EPSILON)
            );
        }
        if !goal.is_empty() {
            let _ = write!(line, "  ({goal})");
        }
        let _ = writeln!(self.text, "{line}");
    }

    pub(super) fn memory(&mut self, name: &str, kib: Option<u64>, goal: &str) {
        let value = kib.map_or("unknown".to_string(), |k| {
            format!("{:.1} MiB", k as f64 / 1024.0)
        });
        let _ = writeln!(self.text, "  {name:<34} {value:>10}  {goal}");
    }

    pub(super) fn skip(&mut self, name: &str, why: &str) {
        let _ = writeln!(self.text, "  {name:<34} {why}");
    }

    pub(super) fn note(&mut self, text: &str) {
        let _ = writeln!(self.text, "  {text}");
    }
}

pub(super) fn percentile(times: &[Duration], p: f64) -> Duration {
    if times.is_empty() {
        return Duration::ZERO;
    }
    let mut sorted = times.to_vec();
    sorted.sort();
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index]
}

pub(super) fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}
