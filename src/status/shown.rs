//! One mutex or semaphore as `status NAME` shows it (its document, its table, how `status`
//! ends for it), and how it is printed: one document for programs, or the table for people.

use super::json::Document;
use super::text;
use crate::exit::Outcome;

/// One mutex or semaphore as `status NAME` shows it.
pub(super) struct Shown {
    pub(super) json: Document,
    pub(super) text: String,
    /// How `status` ends for it alone.
    pub(super) outcome: anyhow::Result<Outcome>,
}

impl Shown {
    pub(super) fn held(&self) -> bool {
        matches!(self.outcome, Ok(Outcome::Success))
    }
}

/// Prints one document or table, and ends as it says.
pub(super) fn show(shown: Shown, as_json: bool) -> anyhow::Result<Outcome> {
    if as_json {
        text::print(&crate::schema::to_json(&shown.json)?);
    } else {
        text::print(shown.text.trim_end());
    }
    shown.outcome
}
