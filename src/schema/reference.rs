//! docs/json.md's layout: its opening, and one table per document, event and nested object, in
//! the order below, under its heading and its paragraph. The rows are the structs' fields
//! (`render` makes the page, and the same tables as data for the tests).

use super::{Documented, Table, Type};
use crate::report::event::{self, Event};
use crate::report::line::Head;
use crate::report::round::RoundEvent;
use std::collections::BTreeMap;

/// The page's opening, before the tables. `{decimals}` is filled in from the structs.
pub(super) const INTRO: &str = "# JSON output

`acquire --json`, `extend --json`, `status --json`, `history --json`, every `latch` verb's
`--json` and `doctor --json` print one JSON object on one line to stdout (`status --watch
--json` one per refresh); `--log-format json` makes every stderr line one. Each kind of
document has one table below, listing every field it can have, in the order printed. The
tables are made from the structs that print the documents (`redlock generate json docs`), and a
test runs the binary, produces every document, and fails on a listed field no document has.

- Every document carries `\"version\": 1`, the version of these tables, first (a document
  nested in another, as a lock's `semaphore` or a list's `latches`, does not). It goes up when
  a field changes meaning or goes away; a new field may appear without it, so ignore fields you
  do not know.
- One name, one meaning. `servers` is always the number of servers configured (distinct, as the
  quorum counts them), never a list: each server's view is `per_server`, a round's replies
  `replies`, and a count of some of the servers says which (`servers_holding`, `servers_queued`,
  `servers_deleted`, `servers_kept`; `votes` are the servers that granted). `held` is always a
  boolean; a semaphore's number of held slots is `slots_held`. A log line's `pid` is always
  redlock's own and a command's is `child_pid`; `pid` in a `holder` object or a waiter is the
  redlock process that took the lock or waits for it.
- `token` is a whole token, which `release` and `extend` accept: it is only ever printed on
  stdout. Log lines carry `token_id`, its first 8 characters.
- Durations are milliseconds in fields ending in `_ms` (whole, except the microsecond decimals of
  {decimals}); instants are `_unix_ms`, milliseconds since the epoch.
- A field that does not apply is `null`, not missing; the exceptions are the fields whose
  meaning starts with \"only\", present only where it says.
";

/// One table of the page.
pub(super) struct Section {
    /// 2 for a document (`##`), 3 for an event or an object nested in one (`###`).
    pub(super) level: usize,
    pub(super) heading: String,
    /// A field of this table's type links to it with this word (`[holder](#holder-object)`).
    pub(super) word: &'static str,
    /// The paragraph under the heading, if any.
    pub(super) prose: String,
    /// The struct, by name (`Table::name`).
    pub(super) table: &'static str,
    /// A document's or an event's struct; a nested one is found through the documents.
    pub(super) top: Option<fn() -> Table>,
    /// A document printed alone: `version` first.
    pub(super) versioned: bool,
}

fn document<T: Documented>(heading: &str, prose: &str) -> Section {
    section::<T>(2, heading, "", prose, true)
}

fn nested(heading: &str, word: &'static str, table: &'static str) -> Section {
    Section {
        level: 3,
        heading: heading.to_string(),
        word,
        prose: String::new(),
        table,
        top: None,
        versioned: false,
    }
}

fn section<T: Documented>(
    level: usize,
    heading: &str,
    word: &'static str,
    prose: &str,
    versioned: bool,
) -> Section {
    Section {
        level,
        heading: heading.to_string(),
        word,
        prose: prose.to_string(),
        table: T::table().name,
        top: Some(T::table),
        versioned,
    }
}

/// An event's table: its name, and its level when it is not `info`.
fn event<E: Event + Documented>(prose: &str) -> Section {
    let prose = match (E::SEVERITY.as_str(), prose) {
        ("info", prose) => prose.to_string(),
        (level, "") => format!("Level `{level}`."),
        (level, prose) => format!("Level `{level}`: {prose}"),
    };
    let heading = format!("`{}` event", E::NAME);
    section::<E>(3, &heading, "", &prose, false)
}

/// Every table, in the page's order; the documents' and events' with their structs.
pub(super) fn sections() -> Vec<Section> {
    use crate::status::latch_json::{LatchDocument, LatchListDocument};
    let lock = document::<crate::status::LockDocument>(
        "`status NAME --json` of a lock",
        "Printed for a lock, exclusive or shared, unless NAME is only a semaphore (then the next \
         table's document is printed).",
    );
    let mut semaphore = document::<crate::status::SemaphoreDocument>(
        "`status NAME --json` of a semaphore",
        "Printed for `status NAME --limit N`, and for `status NAME` when NAME is only a semaphore.",
    );
    semaphore.word = "semaphore";
    let mut latch = document::<LatchDocument>(
        "`latch set --json`, `latch done --json`, `latch wait --json`, `latch status NAME --json`",
        "Every latch verb prints the latch as its servers show it (also each entry of `latches` in \
         the lists), and then its own fields, those that are there \"only\" for it.",
    );
    latch.word = "latch";
    vec![
        document::<crate::oneshot::AcquireDocument>("`acquire --json`", ""),
        document::<crate::oneshot::ExtendDocument>("`extend --json`", ""),
        lock,
        semaphore,
        document::<crate::status::ListDocument>("`status --json`: the list", ""),
        latch,
        document::<LatchListDocument>("`latch status --json`: the list", ""),
        document::<crate::history::HistoryDocument>(
            "`history NAME --json`",
            "The runs of the lock NAME, exclusive and shared, and of the semaphore NAME, newest \
             first, as the servers recorded them ([Did last night's job \
             run?](recipes.md#did-last-nights-job-run)).",
        ),
        nested("`ids` entry", "id", "IdEntry"),
        nested("`per_server` copy of a latch", "copy", "LatchCopy"),
        nested("`runs` entry", "run", "RunEntry"),
        nested("`per_server` copy of a history", "copy", "HistoryCopy"),
        nested("`holder` object", "holder", "HolderObject"),
        nested("`kept` object", "kept", "KeptObject"),
        nested("`per_server` entry", "server", "ServerEntry"),
        nested("`readers` entry", "reader", "ReaderEntry"),
        nested("`waiters` entry", "waiter", "WaiterEntry"),
        nested("`slots` entry", "slot", "SlotEntry"),
        nested("`locks` entry", "lock", "LockEntry"),
        document::<crate::doctor::DoctorDocument>("`doctor --json`", ""),
        nested(
            "`per_server` server checked by doctor",
            "server",
            "CheckedEntry",
        ),
        nested("`nodes` entry", "node", "NodeEntry"),
        nested("`findings` entry", "finding", "FindingEntry"),
        section::<Head>(
            2,
            "`--log-format json` lines",
            "",
            "Every line starts with these, then has its event's fields.",
            false,
        ),
        event::<event::Acquired>(""),
        event::<event::Renewed>("`exec`'s renewals and `extend`."),
        event::<event::RenewalFailed>(
            "one renewal missed a quorum; `exec` retries while validity is left.",
        ),
        event::<event::Lost>("`exec` stops its command (exit 125)."),
        event::<event::Released>(""),
        event::<event::Kept>(
            "The lock is kept until its `--hold-at-least` is over instead of being released.",
        ),
        event::<event::Busy>("written even with `-q`."),
        event::<event::TimedOut>("`exec`'s command outlived `--max-runtime` and is being stopped."),
        event::<event::ChildExited>(""),
        section::<RoundEvent>(
            3,
            "`round` event",
            "",
            "With `-v`: one per round of requests.",
            false,
        ),
        nested("`replies` entry", "reply", "ReplyEntry"),
        event::<event::Margin>(
            "once per run when a quorum answered but some servers could not vote; written even \
             with `-q` when one is misconfigured.",
        ),
        nested("`cannot_vote` entry", "cannot-vote", "CannotVote"),
        event::<event::Warning>(""),
        event::<event::Error>(""),
    ]
}

/// Every table by struct name: the documents', and those their fields lead to.
pub(super) fn tables(sections: &[Section]) -> BTreeMap<&'static str, Table> {
    /// `table`'s, and those its fields lead to; a `flatten`ed struct has no table of its own.
    fn walk(table: Table, found: &mut BTreeMap<&'static str, Table>, own: bool) {
        for field in &table.fields {
            let mut ty = &field.ty;
            while let Type::Nullable(inner) | Type::Array(inner) = ty {
                ty = inner;
            }
            if let Type::Object(nested) = ty {
                walk(nested(), found, !field.flatten);
            }
        }
        if !own {
            return;
        }
        if let Some(known) = found.get(table.name) {
            let names = |t: &Table| t.fields.iter().map(|f| f.name).collect::<Vec<_>>();
            assert_eq!(
                names(known),
                names(&table),
                "two structs named {}",
                table.name
            );
        }
        found.insert(table.name, table);
    }
    let mut found = BTreeMap::new();
    for table in sections.iter().filter_map(|section| section.top) {
        walk(table(), &mut found, true);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_struct_a_document_leads_to_has_one_heading_and_every_field_a_doc() {
        let sections = sections();
        let tables = tables(&sections);
        let headed: Vec<&str> = sections.iter().map(|s| s.table).collect();
        for (name, table) in &tables {
            assert!(
                headed.contains(name),
                "{name} has no heading in docs/json.md"
            );
            for field in &table.fields {
                assert!(
                    field.flatten || !field.doc.is_empty(),
                    "{name}.{} has no doc comment",
                    field.name
                );
            }
        }
        for name in headed {
            assert!(
                tables.contains_key(name),
                "a heading for {name}, which no document has"
            );
        }
    }

    #[test]
    fn no_event_has_a_field_named_like_the_head_of_a_line() {
        let sections = sections();
        let tables = tables(&sections);
        let head: Vec<&str> = Head::table().fields.iter().map(|f| f.name).collect();
        for section in sections.iter().filter(|s| s.heading.ends_with(" event")) {
            for field in tables[section.table].flat() {
                assert!(
                    !head.contains(&field.name),
                    "{}: {}",
                    section.heading,
                    field.name
                );
            }
        }
    }
}
