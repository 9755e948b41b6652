//! One mutex or semaphore as `status NAME` shows it (its JSON fields, its table, how `status`
//! ends for it), and how it is printed: one document for programs, or the table for people.

use super::text;
use crate::exit::Outcome;
use serde_json::{Map, Value};

/// One mutex or semaphore as `status NAME` shows it.
pub(super) struct Shown {
    /// Its fields, without the document's `version`.
    pub(super) json: Map<String, Value>,
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
pub(super) fn show(mut shown: Shown, as_json: bool) -> anyhow::Result<Outcome> {
    if as_json {
        if shown.json.get("kind") == Some(&Value::from("lock")) {
            // A lock's document says whether its name is also a semaphore (null: it is not).
            shown.json.entry("semaphore").or_insert(Value::Null);
        }
        let document = crate::schema::document(Value::Object(shown.json));
        text::print(&document.to_string());
    } else {
        text::print(shown.text.trim_end());
    }
    shown.outcome
}
