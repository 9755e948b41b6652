//! What every event has: its name in a JSON log, its severity and its words (`Event`), and the
//! helpers its fields use.

use crate::report::line::Severity;
use std::time::Duration;

/// One kind of line on stderr: its name in a JSON log, how much it matters, and its words.
pub(crate) trait Event: serde::Serialize {
    /// `event` in a JSON line.
    const NAME: &'static str;
    const SEVERITY: Severity;
    /// The event for people, after `redlock: `.
    fn text(&self) -> String;
}

/// The first 8 characters of a token: enough to correlate log lines, useless for releasing.
pub(crate) fn token_id(token: &str) -> &str {
    let end = token
        .char_indices()
        .nth(8)
        .map_or(token.len(), |(at, _)| at);
    &token[..end]
}

/// Whole milliseconds, from an `_ms` field.
pub(super) fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms)
}
