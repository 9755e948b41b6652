//! `redlock status` without a name: every lock under the prefix, merged across servers and
//! sorted by name, a semaphore's taken slots each on a line of its own; then the latches apart.

use super::json::{lock_fields, LockFields};
use super::latch_json::LatchDocument;
use super::text::{align, listed, print, say_indexed};
use super::StatusArgs;
use crate::config::Config;
use crate::exit::{self, Outcome};
use crate::lock::keys::{self, Listed};
use crate::lock::{self, KeyState, Redlock, ServerState};
use crate::report::Reporter;
use crate::schema::documented;
use std::collections::BTreeMap;
use std::time::Duration;

documented! {
    /// `status --json`: every lock, every taken slot and every latch under the prefix.
    pub(crate) struct ListDocument<'a> {
        /// the prefix listed
        prefix: &'a str,
        /// every lock and taken slot under it, by key
        locks: Vec<LockEntry>,
        /// every latch under it, by name
        latches: Vec<LatchDocument>,
        /// the servers listed from the index of the keys redlock set there, not by walking every key (over 100,000 keys, without `--scan`): a lock another client took there is not listed
        indexed: Vec<String>,
    }
}

documented! {
    /// One lock, or one taken slot of a semaphore, in the list.
    struct LockEntry {
        #[serde(flatten)]
        lock: LockFields,
        /// for a semaphore's slot, which (the table shows `NAME [slot S]`)
        slot: Option<usize>,
        /// servers that have the key
        servers_holding: usize,
        /// servers configured
        servers: usize,
    }
}

/// Every lock under the prefix, merged across servers and sorted by name.
pub(super) fn all(
    config: &Config,
    reporter: Reporter,
    lock: &mut Redlock,
    args: &StatusArgs,
) -> anyhow::Result<Outcome> {
    let as_json = args.json;
    let started = crate::clock::BootInstant::now();
    let lock::Found {
        locks: listings,
        latches,
        indexed,
    } = lock.list(&config.prefix, args.scan);
    say_indexed(reporter, &indexed);
    let answered = listings.iter().filter(|(_, l)| l.is_ok()).count();
    let mut keys: BTreeMap<&str, ()> = BTreeMap::new();
    for (_, listing) in &listings {
        if let Ok(found) = listing {
            keys.extend(found.keys().map(|k| (k.as_str(), ())));
        }
    }
    let mut locks = Vec::new();
    for key in keys.keys() {
        let states: Vec<ServerState> = listings
            .iter()
            .map(|(server, listing)| ServerState {
                server: server.clone(),
                master: None,
                node: None,
                state: match listing {
                    Ok(found) => Ok(found.get(*key).cloned().unwrap_or(KeyState::Absent)),
                    Err(err) => Err(err.clone()),
                },
                latency: Duration::ZERO,
            })
            .collect();
        let verdict = lock::holding(&states, started);
        let holding = states
            .iter()
            .filter(|s| {
                matches!(
                    s.state,
                    Ok(KeyState::Present { .. }
                        | KeyState::Foreign { .. }
                        | KeyState::Shared { .. })
                )
            })
            .count();
        let name = listed_name(key, &config.prefix);
        locks.push((name, key.to_string(), verdict, holding, states));
    }
    let text = if as_json {
        let locks = locks
            .iter()
            .map(|(_, key, verdict, holding, states)| {
                // The lock's own name, as everywhere else; a slot says which in `slot`.
                let (name, slot) = match keys::parse(&config.prefix, key) {
                    Listed::Slot { name, slot } => (name, Some(slot)),
                    Listed::Lock { name } => (name, None),
                    Listed::Beside => (key.clone(), None),
                };
                LockEntry {
                    lock: lock_fields(&name, key, verdict),
                    slot,
                    servers_holding: *holding,
                    servers: states.len(),
                }
            })
            .collect();
        crate::schema::to_json(&ListDocument {
            prefix: &config.prefix,
            locks,
            latches: super::latch::list_documents(config, &latches),
            indexed,
        })?
    } else if locks.is_empty() && answered < lock.quorum() {
        // It could not look: the error below says what it could not read, never "no locks".
        String::new()
    } else if locks.is_empty() {
        format!("no locks under prefix '{}'", config.prefix)
    } else {
        let mut rows = vec![[
            "NAME".to_string(),
            "STATE".to_string(),
            "HOLDER".to_string(),
            "SERVERS".to_string(),
            "VALID FOR".to_string(),
        ]];
        for (name, _, verdict, holding, states) in &locks {
            let (state, holder, valid) = listed(verdict);
            rows.push([
                name.clone(),
                state.into(),
                holder,
                format!("{holding}/{}", states.len()),
                valid,
            ]);
        }
        align(&rows)
    };
    let text = if latches.latches.is_empty() || as_json {
        text
    } else {
        format!(
            "{}\n\n{}",
            text.trim_end(),
            super::latch::list_table(&latches)
        )
    };
    if !text.trim().is_empty() {
        print(text.trim_end());
    }
    if answered < lock.quorum() {
        let mut reasons: Vec<String> = listings
            .iter()
            .filter_map(|(server, l)| l.as_ref().err().map(|e| format!("{server}: {e}")))
            .collect();
        if reasons.iter().any(|r| r.contains("no answer within")) {
            reasons.push(crate::lock::SLOW_LISTING.into());
        }
        return Err(exit::incomplete(
            "list",
            (answered, listings.len()),
            &reasons,
        ));
    }
    Ok(Outcome::Success)
}

/// How the listing names a key: the lock name, or for a semaphore slot `NAME [slot N]`, so a
/// mutex and a semaphore of one name are never mistaken for each other.
fn listed_name(key: &str, prefix: &str) -> String {
    match keys::parse(prefix, key) {
        Listed::Slot { name, slot } => format!("{name} [slot {slot}]"),
        Listed::Lock { name } => name,
        // The engine lists no such key; shown whole if one ever comes.
        Listed::Beside => key.to_string(),
    }
}
