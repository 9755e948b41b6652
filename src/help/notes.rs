//! What a help page explains beyond its options, as a paragraph, a table of terms and a closing
//! paragraph: `status`'s lock states, `history`'s endings, `doctor`'s findings, and the deployment contract every man
//! page (and `doctor --help`) carries.

/// Text that explains a page: a paragraph, a table of terms, and a closing paragraph.
pub(crate) struct Notes {
    pub(crate) heading: &'static str,
    pub(crate) intro: &'static str,
    /// Each term and its text.
    pub(crate) rows: fn() -> Vec<(String, String)>,
    pub(crate) outro: &'static str,
}

/// `status`'s four states, in the words the table, the list and JSON use.
pub(super) const STATES: Notes = Notes {
    heading: "Lock states",
    intro: "Every lock is in one of four states, the same word in the table, the list and JSON:",
    rows: || {
        owned(&[
            (
                "held",
                "a token holds it on a quorum of servers (or a non-redlock client's key type does)",
            ),
            ("free", "no server that answered has its key"),
            (
                "partial",
                "its key is on fewer than a quorum of servers: nobody holds it; the copies expire",
            ),
            ("unknown", "too few servers answered to tell"),
        ])
    },
    outro: "A lock kept after its run (exec --hold-at-least) is held: the summary says how the \
            run ended and until when it is kept, and JSON has a non-null `kept`.",
};

/// `doctor`'s findings, by code.
pub(super) const FINDINGS: Notes = Notes {
    heading: "Findings",
    intro: "Each finding is one line naming the server, what is wrong, why it matters and the \
            fix; an error (exclusion can break, or nothing works) or a warning (less margin \
            than it seems). Its code (--json) is one of:",
    rows: || {
        crate::doctor::CODES
            .iter()
            .map(|(_, code, severity, meaning)| {
                (code.to_string(), format!("{}: {meaning}", severity.word()))
            })
            .collect()
    },
    outro: "It exits 0 with no error (warnings are printed), 1 with one (--strict: or a \
            warning), 69 when fewer than a quorum of the servers answer. docs/doctor.md says \
            how to fix each.",
};

/// What the servers and hosts must do for Redlock's guarantee to hold: every man page says it,
/// and `doctor --help`; `doctor` checks it.
pub(crate) const CONTRACT: Notes = Notes {
    heading: "Deployment contract",
    intro: "A lock excludes others only as long as the servers keep their side of it:",
    rows: || {
        owned(&[
            (
                "independent masters",
                "3 or 5 servers (an odd number), each its own failure domain: not a replica of \
                 another, not a second name or database of one server. A Sentinel group or a \
                 Redis Cluster, given by its own URL, is one server",
            ),
            (
                "persistence",
                "appendonly yes with appendfsync always, or every restart delayed by the \
                 longest TTL in use: a server that forgets its locks can grant them again",
            ),
            (
                "no eviction",
                "maxmemory-policy noeviction wherever maxmemory is set: an evicted lock is \
                 granted again while held",
            ),
            (
                "clocks",
                "kept by NTP that slews (chrony, ntpd), never stepped: a server clock that \
                 jumps ahead expires locks early",
            ),
            (
                "access",
                "an ACL user allowed every command, key and channel redlock needs \
                 (docs/doctor.md has the ACL)",
            ),
        ])
    },
    outro: "redlock doctor checks each of these against the servers themselves.",
};

/// Borrowed rows, owned.
fn owned(rows: &[(&str, &str)]) -> Vec<(String, String)> {
    rows.iter()
        .map(|(term, text)| (term.to_string(), text.to_string()))
        .collect()
}

/// How a run ended, in the words of `history`'s ENDED AS (and JSON's `ended_as`).
pub(super) const ENDINGS: Notes = Notes {
    heading: "How a run ended",
    intro: "Each run is recorded by the release (or the keep of --hold-at-least) that ends it, \
            on every server that answers; ENDED AS says how:",
    rows: || {
        owned(&[
            ("ok", "exec's command exited 0"),
            (
                "failed N",
                "it exited with status N (126 and 127: it could not be run)",
            ),
            ("signal N", "it died of signal N"),
            ("lost", "the lock was lost while it ran, and it was stopped"),
            (
                "max-runtime",
                "it ran longer than --max-runtime and was stopped",
            ),
            (
                "interrupted N",
                "redlock got signal N while it ran and passed it on",
            ),
            (
                "released",
                "a script's acquire, then release (no exit status)",
            ),
        ])
    },
    outro: "A run recorded on fewer than a quorum of servers is marked partial. A busy run \
            (75) held nothing and records nothing. No grant ever reads the history, and \
            recording rides in the release's own request: no round trip of its own.",
};
