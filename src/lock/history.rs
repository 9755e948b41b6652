//! A name's run history: each run of a lock is recorded by the script that gives the lock back
//! (release, a shared holder's release, the keep of `--hold-at-least`), in the same call, so
//! recording costs no round of its own; `redlock history` reads it back.
//!
//! On each server the history of a name is one list, `LockKeys::history` (beside the lock key,
//! so on a Redis Cluster in its hash slot): the mutex's runs, its shared holders' and the
//! semaphore of the same name's slots' alike, newest first. An entry is one string made by
//! `crate::history` (the run's token, how and when it ended, its slot and mode); the scripts
//! push it and never read it. Each push keeps the `Retention::cap` newest (an exact `LTRIM`, so
//! the cap holds to the entry) and makes the list expire `Retention::idle` after it: a name nobody
//! runs any more loses its history once it has been idle that long, and a busy one keeps it.
//!
//! Where an entry is written: on every server the give-back round reaches, where the token still
//! held the key, or on every one of them when the caller knows the run happened (`Record::ran`:
//! `exec`, whose command ran under a grant on a quorum, lost or not). A server that is down for
//! the release misses the entry; `redlock history` counts the servers each entry is on and
//! marks one on fewer than a quorum partial.
//!
//! Why it is information only. No grant, extension, hand-over or refusal reads it: the acquire,
//! extend, restore, withdraw and fence scripts do not take the history key at all, and the
//! scripts that write it do so last, after their own work, through `redis.pcall`, with an answer
//! that does not depend on it (history/record.lua). So the exclusion argument (attempt.rs), the
//! queue's hand-over (queue/mod.rs), fencing (fence.rs) and a semaphore's limit (limit.rs) hold
//! exactly as they would without it, whatever the list holds or whether it can be written. The
//! lock key and its value are untouched by it, so other clients (redsync, node-redlock, pottery,
//! redis-py) see what they saw before.

use super::engine::Redlock;
use super::keys::Layout;
use super::nodes::NodeError;
use super::script::{lua, lua_part, Invocation, Lua, Part};
use super::target::Target;
use crate::clock::BootInstant;
use std::time::Duration;

/// `history_record`, for the scripts that give a lock back (history/record.lua).
pub(super) const RECORD: Part = lua_part!("history/record.lua");

/// A run recorded on its own (history/append.lua), after a give-back that found the lock lost.
pub(super) static APPEND: Lua = lua!(RECORD, lua_part!("history/append.lua"));

/// One server's history of a name (history/read.lua).
pub(super) static READ: Lua = lua!(lua_part!("history/read.lua"));

/// How long a history retains runs, and how many (`--history`, `--history-retention`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Retention {
    /// The most entries each server keeps (at least 1: no recording is no `Record`).
    pub(crate) cap: usize,
    /// How long after the last entry the history goes.
    pub(crate) idle: Duration,
}

/// One run to record with the give-back that ends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    /// The entry as `crate::history` writes it.
    pub(crate) entry: String,
    pub(crate) retention: Retention,
    /// The caller knows the run happened (its grant counted on a quorum): recorded on every
    /// server reached, also where the token no longer holds the key (a lost lock).
    pub(crate) ran: bool,
}

/// Appends the four arguments `history_record` reads (an empty entry records nothing).
pub(super) fn args<'a, 'l>(
    record: Option<&Record>,
    invocation: &'a mut Invocation<'l>,
) -> &'a mut Invocation<'l> {
    match record {
        Some(record) => invocation
            .arg(&record.entry)
            .arg(record.retention.cap)
            .arg(record.retention.idle.as_millis() as u64)
            .arg(if record.ran { "1" } else { "0" }),
        None => invocation.arg("").arg(0).arg(0).arg("0"),
    }
}

/// What one server keeps of a name's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stored {
    /// The entries, newest first, as written.
    pub(crate) entries: Vec<String>,
    /// How long until the history goes if no run is recorded (`None`: none, or no expiry).
    pub(crate) expires_in: Option<Duration>,
}

/// Each server's history of a name, or why it could not say, with the server's name.
pub(crate) type Copies = Vec<(String, Result<Stored, NodeError>)>;

impl Redlock {
    /// Records `record` in the history of `target`'s name on every server, in one round of its
    /// own: for a run whose give-back found the lock lost, whose entry then says so (a newer
    /// entry of a token is the one `redlock history` shows, and one that says `lost` wins over
    /// the others: history/merge.rs). Returns how many servers wrote it.
    pub(crate) fn record(&mut self, target: &Target, record: &Record) -> usize {
        let key = target.keys.history();
        let started = BootInstant::now();
        let replies = self.nodes.round_everywhere(|con| {
            let layout = Layout::of(con);
            let mut invocation = APPEND.key(&*layout.name(&key));
            let written: i64 = args(Some(record), &mut invocation).invoke(con)?;
            Ok(written)
        });
        self.observe("history append", &key, &replies, started, None, |_| {
            ("recorded".to_string(), true)
        });
        replies.iter().filter(|reply| reply.result.is_ok()).count()
    }

    /// Every server's history of `target`'s name, in one round.
    pub(crate) fn history(&mut self, target: &Target) -> Copies {
        let key = target.keys.history();
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let layout = Layout::of(con);
            let (entries, pttl): (Vec<String>, i64) = READ.key(&*layout.name(&key)).invoke(con)?;
            Ok(Stored {
                entries,
                expires_in: u64::try_from(pttl).ok().map(Duration::from_millis),
            })
        });
        self.observe("history", &key, &replies, started, None, |stored| {
            (format!("{} entries", stored.entries.len()), true)
        });
        self.servers()
            .iter()
            .zip(replies)
            .map(|(server, reply)| (server.display.clone(), reply.result))
            .collect()
    }
}
