//! The JSON of a latch: the document every latch verb prints (`LatchDocument`, which the lists
//! hold for each latch), each id counted down, each server's copy, and `latch status`'s list.

use crate::lock::latch::{CountedId, Counting, Latch, LatchState};
use crate::schema::{documented, ms};
use crate::token;

documented! {
    /// The latch as its servers show it, which every latch verb prints with `--json` (each with
    /// its own fields after these) and the lists hold for each latch.
    pub(crate) struct LatchDocument {
        /// the latch name
        name: String,
        /// its Redis key, `<prefix><NAME>␟latch`
        key: String,
        /// `open`, `waiting`, `partial`, `absent` or `unknown`
        state: &'static str,
        /// whether it is open
        open: bool,
        /// the count a majority of its servers hold (null when none does)
        count: Option<u32>,
        /// distinct ids counted down, over the servers holding it
        done: usize,
        /// how many more it takes to open
        missing: Option<u32>,
        /// each id counted down, oldest first
        ids: Vec<IdEntry>,
        /// the shortest TTL left on the servers holding it
        expires_in_ms: Option<u64>,
        /// servers holding it with `count`
        servers_holding: usize,
        /// servers configured
        servers: usize,
        /// servers that make a majority
        quorum: usize,
        /// only `latch set`: servers where this run created it
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) created: Option<usize>,
        /// only `latch done`: the id counted down
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) id: Option<String>,
        /// only `latch set` and `latch done`: servers holding it with the count asked for
        /// (`set`), or holding the id (`done`)
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) votes: Option<usize>,
        /// only `latch done`: servers that had lost it and were given it back
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) repaired: Option<usize>,
        /// only `latch wait`: how long it waited
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) waited_ms: Option<u64>,
        /// only `latch wait`: whether it expired while waited on
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) expired: Option<bool>,
        /// only `latch status NAME`: each server's copy, in the order given
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(super) per_server: Option<Vec<LatchCopy>>,
    }
}

documented! {
    /// One id counted down.
    pub(super) struct IdEntry {
        /// the id counted down
        id: String,
        /// the host whose `done` recorded it
        host: Option<String>,
        /// the redlock process that did
        pid: Option<u32>,
        /// when, on that host's clock
        at_unix_ms: Option<u64>,
        /// servers that hold it
        servers_holding: usize,
    }
}

documented! {
    /// One server's copy of a latch.
    pub(super) struct LatchCopy {
        /// the server, redacted
        pub(super) server: String,
        /// whether it answered
        pub(super) reachable: bool,
        /// why it did not answer properly
        pub(super) error: Option<String>,
        /// the count it holds (null: no latch there)
        pub(super) count: Option<u32>,
        /// ids counted down there
        pub(super) done: Option<usize>,
        /// the latch's remaining TTL there
        pub(super) expires_in_ms: Option<u64>,
        /// the type of another client's key there
        pub(super) foreign_type: Option<String>,
    }
}

documented! {
    /// `latch status --json`: every latch under the prefix.
    pub(crate) struct LatchListDocument<'a> {
        /// the prefix listed
        pub(super) prefix: &'a str,
        /// every latch under it, by name (`status --json` lists them too)
        pub(super) latches: Vec<LatchDocument>,
        /// the servers listed from the index of the keys redlock set there, not by walking every key (over 100,000 keys, without `--scan`): a latch another client made there is not listed
        pub(super) indexed: Vec<String>,
    }
}

/// The latch's document, without any verb's own fields.
pub(crate) fn document(latch: &Latch, counting: &Counting) -> LatchDocument {
    LatchDocument {
        name: latch.name.clone(),
        key: latch.keys.key().to_string(),
        state: counting.state.word(),
        open: counting.state == LatchState::Open,
        count: counting.count,
        done: counting.ids.len(),
        missing: counting.count.map(|_| counting.missing()),
        ids: counting.ids.iter().map(id_entry).collect(),
        expires_in_ms: counting.ttl.map(ms),
        servers_holding: counting.holding,
        servers: counting.servers,
        quorum: counting.quorum,
        created: None,
        id: None,
        votes: None,
        repaired: None,
        waited_ms: None,
        expired: None,
        per_server: None,
    }
}

fn id_entry(counted: &CountedId) -> IdEntry {
    let by = counted.record.as_deref().and_then(token::holder);
    IdEntry {
        id: counted.id.clone(),
        host: by.as_ref().map(|h| h.host.clone()),
        pid: by.as_ref().map(|h| h.pid),
        at_unix_ms: by.as_ref().map(|h| h.acquired_unix_ms),
        servers_holding: counted.servers,
    }
}
