//! `redlock status NAME --limit N`: a semaphore slot by slot (who holds each, for how long, and
//! its fence), as a table for people or `--json` for programs.

use crate::config::Config;
use crate::exit::{self, Outcome};
use crate::lock::semaphore::{semaphore_key, slot_key};
use crate::lock::{self, Holding, KeyState, Redlock, ServerState};
use crate::status::{align, listed, one_json, print};
use serde_json::{json, Value};

/// One slot's verdict, with what the table and the JSON show of it.
struct Slot {
    key: String,
    verdict: Holding,
    /// Servers that have the key at all, whoever holds it.
    present: usize,
    states: Vec<ServerState>,
    fence: Option<u64>,
}

pub(crate) fn status(
    config: &Config,
    lock: &mut Redlock,
    name: &str,
    slots: usize,
    as_json: bool,
) -> anyhow::Result<Outcome> {
    let semaphore = semaphore_key(&config.key(name)?);
    let started = crate::clock::BootInstant::now();
    let states = lock.inspect_slots(&semaphore, slots);
    let mut rows = Vec::new();
    for (slot, servers) in states.into_iter().enumerate() {
        let verdict = lock::holding(&servers, started);
        let key = slot_key(&semaphore, slot);
        let fence = match &verdict {
            Holding::Held { token, .. } => lock::holder_fence(&lock.fences(&key), token),
            _ => None,
        };
        let present = servers
            .iter()
            .filter(|s| matches!(s.state, Ok(KeyState::Present { .. })))
            .count();
        rows.push(Slot {
            key,
            verdict,
            present,
            states: servers,
            fence,
        });
    }
    let held = rows
        .iter()
        .filter(|slot| matches!(slot.verdict, Holding::Held { .. }))
        .count();
    let unknown = rows.iter().any(|slot| slot.verdict == Holding::Unknown);
    let servers = lock.servers().len();
    let text = if as_json {
        json_of(name, &semaphore, lock.quorum(), held, &rows).to_string()
    } else {
        table(name, slots, servers, held, &rows)
    };
    print(text.trim_end());
    if held > 0 {
        Ok(Outcome::Success)
    } else if unknown {
        Err(exit::fail(
            Outcome::Unavailable,
            format!("semaphore '{name}': too few servers answered to tell"),
        ))
    } else {
        Ok(Outcome::Negative)
    }
}

/// How the listing names a key: the lock name, or for a semaphore slot `NAME [slot N]`, so a
/// mutex and a semaphore of one name are never mistaken for each other.
pub(crate) fn listed_name(key: &str, prefix: &str) -> String {
    let (base, slot) = match lock::semaphore::split_slot_key(key) {
        Some((semaphore, slot)) => (
            semaphore
                .strip_suffix(&semaphore_key(""))
                .unwrap_or(semaphore),
            Some(slot),
        ),
        None => (key, None),
    };
    let name = base.strip_prefix(prefix).unwrap_or(base);
    match slot {
        Some(slot) => format!("{name} [slot {slot}]"),
        None => name.to_string(),
    }
}

fn table(name: &str, slots: usize, servers: usize, held: usize, rows: &[Slot]) -> String {
    let mut out = format!("semaphore {name} ({slots} slots): {held} held\n");
    let mut cells = vec![[
        "SLOT".to_string(),
        "STATE".to_string(),
        "HOLDER".to_string(),
        "SERVERS".to_string(),
        "VALID FOR".to_string(),
        "FENCE".to_string(),
    ]];
    for (slot, row) in rows.iter().enumerate() {
        let (state, holder, valid) = listed(&row.verdict);
        cells.push([
            slot.to_string(),
            state.into(),
            holder,
            format!("{}/{servers}", row.present),
            valid,
            row.fence.map_or("-".into(), |fence| fence.to_string()),
        ]);
    }
    out.push_str(&align(&cells));
    out
}

fn json_of(name: &str, semaphore: &str, quorum: usize, held: usize, rows: &[Slot]) -> Value {
    let slots: Vec<Value> = rows
        .iter()
        .enumerate()
        .map(|(slot, row)| {
            // Each slot is a lock: described as `status NAME --json` describes one.
            let mut json = one_json(name, &row.key, quorum, &row.states, &row.verdict);
            json["slot"] = slot.into();
            json["fence"] = row.fence.into();
            json
        })
        .collect();
    json!({
        "name": name,
        "key": semaphore,
        "limit": rows.len(),
        "held": held,
        "quorum": quorum,
        "slots": slots,
    })
}
