//! `redlock status NAME --limit N` (or `status NAME` of a name that is a semaphore): a semaphore
//! slot by slot (who holds each, for how long, and its fence) and the waiters in its queue, as a
//! table for people or `--json` for programs.

use super::json::{one_json, waiters_json};
use super::shown::Shown;
use super::text::{align, listed, waiters_table};
use crate::exit::{self, Outcome};
use crate::lock::{self, Holding, Inspection, KeyState, Redlock, ServerState, Target};
use serde_json::{json, Map, Value};

/// One slot's verdict, with what the table and the JSON show of it.
struct Slot {
    key: String,
    verdict: Holding,
    /// Servers that have the key at all, whoever holds it.
    present: usize,
    states: Vec<ServerState>,
    fence: Option<u64>,
}

/// One semaphore as `status NAME` shows it, from what `inspection` of all its slots found.
pub(super) fn report(lock: &Redlock, target: &Target, inspection: Inspection) -> Shown {
    let (name, slots, semaphore) = (&target.name, target.width(), target.stem());
    let mut rows = Vec::new();
    let views = inspection.keys.into_iter().zip(&inspection.fences);
    for (slot, (servers, fences)) in views.enumerate() {
        let verdict = lock::holding(&servers, inspection.started);
        let key = target.key(slot);
        let fence = match &verdict {
            Holding::Held { token, .. } => lock::holder_fence(fences, token),
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
    let mut json = json_of(name, &semaphore, (lock.quorum(), servers), held, &rows);
    json.insert("waiters".into(), waiters_json(&inspection.waiters));
    let mut text = table(name, slots, servers, held, &rows);
    text.push_str(&waiters_table(&inspection.waiters));
    let outcome = if held > 0 {
        Ok(Outcome::Success)
    } else if unknown {
        Err(exit::fail(
            Outcome::Unavailable,
            format!("semaphore '{name}': too few servers answered to tell"),
        ))
    } else {
        Ok(Outcome::Negative)
    };
    Shown {
        json,
        text,
        outcome,
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

fn json_of(
    name: &str,
    semaphore: &str,
    (quorum, servers): (usize, usize),
    held: usize,
    rows: &[Slot],
) -> Map<String, Value> {
    let slots: Vec<Value> = rows
        .iter()
        .enumerate()
        .map(|(slot, row)| {
            // Each slot is a lock: described as `status NAME --json` describes one.
            let mut json = one_json(name, &row.key, quorum, &row.states, &row.verdict);
            json.insert("slot".into(), slot.into());
            json.insert("fence".into(), row.fence.into());
            Value::Object(json)
        })
        .collect();
    [
        ("kind", json!("semaphore")),
        ("name", json!(name)),
        ("key", json!(semaphore)),
        ("limit", json!(rows.len())),
        ("slots_held", json!(held)),
        ("quorum", json!(quorum)),
        ("servers", json!(servers)),
        ("slots", json!(slots)),
    ]
    .into_iter()
    .map(|(field, value)| (field.to_string(), value))
    .collect()
}
