//! The run history's options: what `redlock history NAME` shows, and how `exec` and `release`
//! record a run (`--history`, `--history-retention`), with their value parsers.

use super::headings::{HISTORY, OUTPUT};
use super::values::{at_most, duration};
use crate::human;
use clap::Args;
use std::time::Duration;

/// The most runs a history keeps per server: every entry is about 150 bytes, and `history`
/// reads them all.
pub(crate) const MAX_HISTORY: usize = 10_000;
/// The longest `--history-retention`: a year (humantime's, 365.25 days, which it writes `1year`).
pub(crate) const MAX_RETENTION: Duration = Duration::from_secs(31_557_600);

#[derive(Args, Debug)]
pub(crate) struct HistoryArgs {
    /// Lock name
    ///
    /// The runs of the lock NAME (exclusive and shared) and of the semaphore NAME.
    pub(crate) name: String,

    /// Show the N newest runs only
    #[arg(short = 'n', long, value_name = "N", env = "REDLOCK_HISTORY_LAST", value_parser = last, help_heading = OUTPUT)]
    pub(crate) last: Option<usize>,

    /// Show only the runs that ended in the last DUR
    ///
    /// Within DUR before now, e.g. 24h.
    #[arg(long, value_name = "DUR", env = "REDLOCK_HISTORY_SINCE", value_parser = duration, help_heading = OUTPUT)]
    pub(crate) since: Option<Duration>,

    /// Print one JSON object for programs
    ///
    /// Its fields: docs/json.md.
    #[arg(long, env = "REDLOCK_JSON", help_heading = OUTPUT)]
    pub(crate) json: bool,
}

/// How a run is recorded in its name's history, for `exec` and `release`.
#[derive(Args, Debug, Clone)]
pub(crate) struct RecordArgs {
    /// Runs kept in NAME's history (0: record none)
    ///
    /// The run is recorded in NAME's history (redlock history), which keeps the N newest runs on
    /// each server; 0 records nothing.
    #[arg(long, value_name = "N", env = "REDLOCK_HISTORY", default_value = "100", value_parser = history, help_heading = HISTORY)]
    pub(crate) history: usize,

    /// NAME's history goes once no run has been recorded for DUR (at most 1y)
    #[arg(long, value_name = "DUR", env = "REDLOCK_HISTORY_RETENTION", default_value = "30d", value_parser = retention, help_heading = HISTORY, hide_short_help = true)]
    pub(crate) history_retention: Duration,
}

/// `--history N`: a whole number from 0 to `MAX_HISTORY`.
fn history(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n <= MAX_HISTORY => Ok(n),
        _ => Err(format!(
            "{} is not a number of runs; expected a whole number from 0 (record nothing) to {MAX_HISTORY}",
            human::quoted(text)
        )),
    }
}

/// `--last N`: a whole number from 1.
fn last(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "{} is not a number of runs; expected a whole number from 1",
            human::quoted(text)
        )),
    }
}

fn retention(text: &str) -> Result<Duration, String> {
    at_most(text, duration(text)?, MAX_RETENTION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_values_are_bounded_and_named_when_refused() {
        assert_eq!(history("0"), Ok(0));
        assert_eq!(history("10000"), Ok(MAX_HISTORY));
        for bad in ["10001", "-1", "many", ""] {
            let message = history(bad).unwrap_err();
            assert!(message.contains("from 0 (record nothing)"), "{message}");
        }
        assert_eq!(last("3"), Ok(3));
        assert!(last("0").unwrap_err().contains("from 1"));
        assert_eq!(retention("30d"), Ok(Duration::from_secs(30 * 24 * 3600)));
        assert_eq!(retention("1y"), Ok(MAX_RETENTION));
        assert!(retention("366d").unwrap_err().contains("at most 1year"));
        assert!(retention("0s").unwrap_err().contains("zero"));
    }
}
