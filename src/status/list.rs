//! `redlock status` without a name: every lock under the prefix, merged across servers and
//! sorted by name, a semaphore's taken slots each on a line of its own; then the latches apart.

use super::json::verdict_json;
use super::text::{align, listed, print};
use crate::config::Config;
use crate::exit::{self, Outcome};
use crate::lock::keys::{self, Listed};
use crate::lock::{self, KeyState, Redlock, ServerState};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// Every lock under the prefix, merged across servers and sorted by name.
pub(super) fn all(config: &Config, lock: &mut Redlock, as_json: bool) -> anyhow::Result<Outcome> {
    let started = crate::clock::BootInstant::now();
    let listings = lock.list(&config.prefix);
    let latches = lock.latch_list(&config.prefix);
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
        let list: Vec<Value> = locks
            .iter()
            .map(|(_, key, verdict, holding, states)| {
                // The lock's own name, as everywhere else; a slot says which in `slot`.
                let (name, slot) = match keys::parse(&config.prefix, key) {
                    Listed::Slot { name, slot } => (name, Some(slot)),
                    Listed::Lock { name } => (name, None),
                    Listed::Beside => (key.clone(), None),
                };
                let mut lock = verdict_json(&name, key, verdict);
                lock.insert("slot".into(), json!(slot));
                lock.insert("servers_holding".into(), json!(holding));
                lock.insert("servers".into(), json!(states.len()));
                Value::Object(lock)
            })
            .collect();
        let latches = super::latch::list_json(config, &latches);
        crate::schema::document(
            json!({ "prefix": config.prefix, "locks": list, "latches": latches }),
        )
        .to_string()
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
    print(text.trim_end());
    if answered < lock.quorum() {
        let reasons: Vec<String> = listings
            .iter()
            .filter_map(|(server, l)| l.as_ref().err().map(|e| format!("{server}: {e}")))
            .collect();
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
