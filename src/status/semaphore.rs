//! `redlock status NAME --limit N` (or `status NAME` of a name that is a semaphore): a semaphore
//! slot by slot (who holds each, for how long, and its fence) and the waiters in its queue, as a
//! table for people or `--json` for programs.

use super::json::{inspected, waiter_entries, Document, SemaphoreDocument, SlotEntry};
use super::shown::Shown;
use super::text::{align, listed, waiters_table};
use crate::exit::{self, Outcome};
use crate::lock::{self, Holding, Inspection, KeyState, Redlock, ServerState, Target};

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
    let json = Document::Semaphore(SemaphoreDocument {
        kind: "semaphore",
        name: name.clone(),
        key: semaphore,
        limit: rows.len(),
        slots_held: held,
        quorum: lock.quorum(),
        servers,
        slots: slot_entries(name, lock.quorum(), &rows),
        waiters: waiter_entries(&inspection.waiters),
    });
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

/// Each slot as `status NAME --json` describes a lock, with its number and fence.
fn slot_entries(name: &str, quorum: usize, rows: &[Slot]) -> Vec<SlotEntry> {
    rows.iter()
        .enumerate()
        .map(|(slot, row)| SlotEntry {
            lock: inspected(name, &row.key, quorum, &row.states, &row.verdict),
            slot,
            fence: row.fence,
        })
        .collect()
}
