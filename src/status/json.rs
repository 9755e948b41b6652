//! The JSON of `status NAME`: a lock's document and a semaphore's, a lock's verdict and fields,
//! each server's view, the holder facts a token carries, a kept lock's run, the shared holders
//! and the waiters. Each is a struct whose fields are docs/json.md's (`crate::schema`);
//! `servers` is always a number of servers, never a list.

use crate::lock::{Holding, KeyState, NodeError, QueuedWaiter, ServerState, SharedHolder};
use crate::schema::{documented, ms, ms_micros};
use crate::token;

/// `status NAME --json`'s document: a lock's (which says whether its name is also a semaphore)
/// or a semaphore's.
#[derive(serde::Serialize)]
#[serde(untagged)]
pub(super) enum Document {
    Lock(Box<LockDocument>),
    Semaphore(SemaphoreDocument),
}

documented! {
    /// `status NAME --json` of a lock, exclusive or shared.
    pub(crate) struct LockDocument {
        /// `"lock"`
        pub(super) kind: &'static str,
        #[serde(flatten)]
        pub(super) lock: Inspected,
        /// the holder's fencing number, if it took one (`--fence`)
        pub(super) fence: Option<u64>,
        /// who waits for it, in the order they queued
        pub(super) waiters: Vec<WaiterEntry>,
        /// when NAME is also a semaphore: its document (without `version`); a warning says so
        /// when both are held
        pub(super) semaphore: Option<SemaphoreDocument>,
    }
}

documented! {
    /// `status NAME --json` of a semaphore.
    pub(crate) struct SemaphoreDocument {
        /// `"semaphore"`
        pub(super) kind: &'static str,
        /// the lock name
        pub(super) name: String,
        /// the slots' stem, `<prefix><NAME>␟slots`
        pub(super) key: String,
        /// its number of slots, N
        pub(super) limit: usize,
        /// how many slots are held
        pub(super) slots_held: usize,
        /// servers a verdict needs
        pub(super) quorum: usize,
        /// servers configured
        pub(super) servers: usize,
        /// every slot, 0 to N−1
        pub(super) slots: Vec<SlotEntry>,
        /// who waits for any slot, in the order they queued
        pub(super) waiters: Vec<WaiterEntry>,
    }
}

documented! {
    /// One slot of a semaphore: a lock of its own.
    pub(super) struct SlotEntry {
        #[serde(flatten)]
        pub(super) lock: Inspected,
        /// the slot, 0 to N−1
        pub(super) slot: usize,
        /// the holder's fencing number, if it took one
        pub(super) fence: Option<u64>,
    }
}

documented! {
    /// The fields a lock has in JSON both alone (`status NAME`) and in the list (`status`).
    pub(super) struct LockFields {
        /// the lock name
        name: String,
        /// `<prefix><NAME>`, or a semaphore's slot key
        key: String,
        /// held on a quorum: by a token, by shared holders, or by another client's key
        held: bool,
        /// `held`, `free`, `partial` or `unknown` (see [What Redlock guarantees](guarantees.md))
        state: &'static str,
        /// the holder's token, when a redlock-style token holds it
        token: Option<String>,
        /// who holds it, as far as the token tells
        holder: Option<HolderObject>,
        /// the key's type when another client's non-string key holds it (`hash` for Redisson)
        foreign_type: Option<String>,
        /// the run behind a lock kept by `--hold-at-least`
        kept: Option<KeptObject>,
        /// how long the holder still certainly holds it (null: no expiry)
        validity_ms: Option<u64>,
        /// `exclusive` or `shared` when held
        mode: Option<&'static str>,
        /// the shared holders (empty unless `mode` is `shared`)
        readers: Vec<ReaderEntry>,
    }
}

documented! {
    /// A lock or a semaphore's slot as `status NAME` shows it: its fields and each server's view.
    pub(super) struct Inspected {
        #[serde(flatten)]
        lock: LockFields,
        /// servers a verdict needs
        quorum: usize,
        /// servers configured
        servers: usize,
        /// each server's view of the key, in the order given
        per_server: Vec<ServerEntry>,
    }
}

documented! {
    /// One server's view of a key. Every field is always there (null when it does not apply),
    /// so that each entry has the same fields.
    pub(super) struct ServerEntry {
        /// the server, redacted
        server: String,
        /// for a Sentinel group, the master that answered (`host:port`)
        master: Option<String>,
        /// for a Redis Cluster, the node that answered for the key (`host:port`)
        node: Option<String>,
        /// for a Redis Cluster, the key's hash slot
        hash_slot: Option<u16>,
        /// whether it answered
        reachable: bool,
        /// why it did not answer properly
        error: Option<String>,
        /// whether it has the key, whoever holds it
        holds_key: bool,
        /// the token its key holds
        token: Option<String>,
        /// the type of another client's non-string key there
        foreign_type: Option<String>,
        /// for a key held shared, how many shared holders this server lists
        reader_count: Option<usize>,
        /// the key's remaining TTL there (null: absent, or no expiry)
        expires_in_ms: Option<u64>,
        /// how long it took to answer
        latency_ms: f64,
    }
}

documented! {
    /// Who holds a lock, as its token tells.
    pub(super) struct HolderObject {
        /// the host that took the lock
        host: String,
        /// the redlock process that took it
        pid: u32,
        /// when, on that host's clock
        acquired_unix_ms: u64,
        /// what `exec` ran (shortened)
        command: Option<String>,
    }
}

documented! {
    /// The run behind a lock kept by `--hold-at-least`.
    pub(super) struct KeptObject {
        /// when the run ended
        finished_unix_ms: u64,
        /// how: `exit-N`, `signal-N`, `timeout` or `release`
        status: String,
        /// until about when the lock is kept
        until_unix_ms: Option<u64>,
    }
}

documented! {
    /// One shared holder of a lock.
    pub(super) struct ReaderEntry {
        /// the shared holder's token
        token: String,
        /// who it is
        holder: Option<HolderObject>,
        /// servers that list it
        servers_holding: usize,
        /// how long it still certainly holds its share
        validity_ms: u64,
    }
}

documented! {
    /// One process waiting in a lock's queue.
    pub(super) struct WaiterEntry {
        /// the host waiting
        host: Option<String>,
        /// the redlock process waiting
        pid: Option<u32>,
        /// what its `exec` will run
        command: Option<String>,
        /// when it started waiting (bounded by each server's clock)
        since_unix_ms: u64,
        /// whether it waits for a shared lock
        shared: bool,
        /// servers whose queue it is in
        servers_queued: usize,
    }
}

/// A lock's or slot's fields and each server's view, as `status NAME` shows one.
pub(super) fn inspected(
    name: &str,
    key: &str,
    quorum: usize,
    states: &[ServerState],
    verdict: &Holding,
) -> Inspected {
    Inspected {
        lock: lock_fields(name, key, verdict),
        quorum,
        servers: states.len(),
        per_server: states.iter().map(server_entry).collect(),
    }
}

/// The fields a lock has in JSON both alone (`status NAME`) and in the list (`status`).
pub(super) fn lock_fields(name: &str, key: &str, verdict: &Holding) -> LockFields {
    let (state, token, validity_ms) = match verdict {
        Holding::Held {
            token, validity, ..
        } => ("held", Some(token.as_str()), validity.map(ms)),
        Holding::Foreign { .. } | Holding::Shared { .. } => ("held", None, None),
        Holding::Free => ("free", None, None),
        Holding::Partial { .. } => ("partial", None, None),
        Holding::Unknown => ("unknown", None, None),
    };
    let foreign_type = match verdict {
        Holding::Foreign { kind, .. } => Some(kind.clone()),
        _ => None,
    };
    let (mode, readers) = match verdict {
        Holding::Shared { readers, .. } => (Some("shared"), readers.as_slice()),
        Holding::Held { .. } | Holding::Foreign { .. } => (Some("exclusive"), &[][..]),
        Holding::Free | Holding::Partial { .. } | Holding::Unknown => (None, &[][..]),
    };
    LockFields {
        name: name.to_string(),
        key: key.to_string(),
        held: state == "held",
        state,
        token: token.map(str::to_string),
        holder: token.and_then(holder_object),
        foreign_type,
        kept: token.and_then(|token| kept_object(token, validity_ms)),
        validity_ms,
        mode,
        readers: readers.iter().map(reader_entry).collect(),
    }
}

fn server_entry(state: &ServerState) -> ServerEntry {
    let (reachable, error, holds_key) = match &state.state {
        Ok(KeyState::Absent) => (true, None, false),
        Ok(_) => (true, None, true),
        Err(err) => {
            // A key of another type is there, and the server answered about it.
            let foreign = matches!(err, NodeError::ForeignType);
            (foreign, Some(err.to_string()), foreign)
        }
    };
    let (token, foreign_type, reader_count, expires_in_ms) = match &state.state {
        Ok(KeyState::Present { token, ttl }) => (Some(token.clone()), None, None, ttl.map(ms)),
        Ok(KeyState::Foreign { kind, ttl }) => (None, Some(kind.clone()), None, ttl.map(ms)),
        Ok(KeyState::Shared { readers, ttl }) => (None, None, Some(readers.len()), ttl.map(ms)),
        Ok(KeyState::Absent) | Err(_) => (None, None, None, None),
    };
    ServerEntry {
        server: state.server.clone(),
        // Only Sentinel groups have one: which master answered for the group.
        master: state.master.clone(),
        node: state.node.as_ref().map(|(node, _)| node.clone()),
        hash_slot: state.node.as_ref().map(|(_, slot)| *slot),
        reachable,
        error,
        holds_key,
        token,
        foreign_type,
        reader_count,
        expires_in_ms,
        latency_ms: ms_micros(state.latency),
    }
}

fn holder_object(token: &str) -> Option<HolderObject> {
    token::holder(token).map(|h| HolderObject {
        host: h.host,
        pid: h.pid,
        acquired_unix_ms: h.acquired_unix_ms,
        command: h.command,
    })
}

fn kept_object(token: &str, validity_ms: Option<u64>) -> Option<KeptObject> {
    let run = token::holder(token)?.kept?;
    Some(KeptObject {
        finished_unix_ms: run.finished_unix_ms,
        status: run.end.tag(),
        until_unix_ms: validity_ms.map(|left| token::unix_ms_now() + left),
    })
}

/// A shared holder of a lock: who it is, and on how many servers for how long.
fn reader_entry(reader: &SharedHolder) -> ReaderEntry {
    ReaderEntry {
        token: reader.token.clone(),
        holder: holder_object(&reader.token),
        servers_holding: reader.servers,
        validity_ms: ms(reader.validity),
    }
}

/// The waiters of a lock, in the order they queued.
pub(super) fn waiter_entries(waiters: &[QueuedWaiter]) -> Vec<WaiterEntry> {
    waiters
        .iter()
        .map(|waiter| {
            let holder = token::holder(&waiter.token);
            WaiterEntry {
                host: holder.as_ref().map(|h| h.host.clone()),
                pid: holder.as_ref().map(|h| h.pid),
                command: holder.and_then(|h| h.command),
                since_unix_ms: waiter.since_unix_ms,
                shared: waiter.shared,
                servers_queued: waiter.servers,
            }
        })
        .collect()
}
