//! `redlock status NAME`: one mutex, server by server, with its holder's fence and the waiters
//! in its queue.

use super::json::{inspected, waiter_entries, Document, LockDocument};
use super::shown::Shown;
use super::text::{align, is_kept, kept_summary, readers_table, short_token, waiters_table, when};
use crate::exit::Outcome;
use crate::human;
use crate::lock::{self, Holding, Inspection, KeyState, NodeError, Redlock, ServerState, Target};
use crate::token;

/// One mutex as `status NAME` shows it, from what `inspection` found.
pub(super) fn report(lock: &Redlock, target: &Target, inspection: &Inspection) -> Shown {
    let states = &inspection.keys[0];
    let key = target.keys.lock();
    let verdict = lock::holding(states, inspection.started);
    // The holder's fencing number, if it took the lock with --fence (read in the same round).
    let fence = match &verdict {
        Holding::Held { token, .. } => lock::holder_fence(&inspection.fences[0], token),
        _ => None,
    };
    let name = &target.name;
    let json = Document::Lock(Box::new(LockDocument {
        kind: "lock",
        lock: inspected(name, key, lock.quorum(), states, &verdict),
        fence,
        waiters: waiter_entries(&inspection.waiters),
        semaphore: None,
    }));
    let mut text = one_table(name, key, lock.quorum(), states, &verdict, fence);
    if let Holding::Shared { readers, .. } = &verdict {
        text.push_str(&readers_table(readers));
    }
    text.push_str(&waiters_table(&inspection.waiters));
    let outcome = match verdict {
        Holding::Held { .. } | Holding::Foreign { .. } | Holding::Shared { .. } => {
            Ok(Outcome::Success)
        }
        Holding::Free | Holding::Partial { .. } => Ok(Outcome::Negative),
        Holding::Unknown => Ok(Outcome::Unavailable),
    };
    Shown {
        json,
        text,
        outcome,
    }
}

/// Whether no server that answered has the mutex's key at all: a name that is only a
/// semaphore is then shown as one.
pub(super) fn is_absent(inspection: &Inspection) -> bool {
    inspection.keys[0].iter().all(|state| match &state.state {
        Ok(key) => *key == KeyState::Absent,
        // Another client's key of another type is there.
        Err(err) => *err != NodeError::ForeignType,
    })
}

fn one_table(
    name: &str,
    key: &str,
    quorum: usize,
    states: &[ServerState],
    verdict: &Holding,
    fence: Option<u64>,
) -> String {
    let mut out = String::new();
    let summary = match verdict {
        Holding::Held {
            token,
            servers,
            validity,
        } => {
            let mut line = kept_summary(token, *validity)
                .unwrap_or_else(|| format!("held by {}", lock::describe_token(token)));
            if let Some(since) = token::holder(token).map(|h| h.acquired_unix_ms) {
                line.push_str(&format!(", acquired {}", when(since)));
            }
            line.push_str(&format!(
                ", on {servers} of {}",
                crate::human::servers(states.len())
            ));
            line.push_str(&match validity {
                // A kept lock already said until when.
                Some(_) if is_kept(token) => String::new(),
                Some(v) => format!(", valid for at least {}", human::duration(*v)),
                None => ", with no expiry".to_string(),
            });
            if let Some(fence) = fence {
                line.push_str(&format!(", fence {fence}"));
            }
            line.push_str(&format!("\ntoken: {token}"));
            line
        }
        Holding::Foreign { kind, servers } => format!(
            "held by {}, on {servers} of {}",
            lock::describe_foreign(kind),
            crate::human::servers(states.len())
        ),
        Holding::Shared { servers, readers } => format!(
            "held shared by {}, on {servers} of {}",
            lock::describe_shared(readers.len()),
            crate::human::servers(states.len())
        ),
        Holding::Free => {
            let absent = states
                .iter()
                .filter(|s| matches!(s.state, Ok(KeyState::Absent)))
                .count();
            if absent == 1 && states.len() == 1 {
                "free on its 1 server".to_string()
            } else if absent == states.len() {
                format!("free on all {absent} servers")
            } else {
                format!(
                    "free: absent on {absent} of {}, the others did not answer",
                    crate::human::servers(states.len())
                )
            }
        }
        Holding::Partial { servers } => format!(
            "partial: not held; the key is on {servers} of {}, fewer than the {quorum} a lock needs, and expires there by its ttl",
            crate::human::servers(states.len())
        ),
        Holding::Unknown => format!(
            "unknown: too few servers answered to tell ({quorum} of {} needed)",
            states.len()
        ),
    };
    out.push_str(&format!("lock {name} (key {key}): {summary}\n"));
    let mut rows = vec![[
        "SERVER".to_string(),
        "STATE".to_string(),
        "TOKEN".to_string(),
        "TTL".to_string(),
        "LATENCY".to_string(),
    ]];
    for state in states {
        let latency = human::latency(state.latency);
        let row = match &state.state {
            Ok(KeyState::Absent) => ["absent".into(), "-".into(), "-".into(), latency],
            Ok(
                key @ (KeyState::Present { .. }
                | KeyState::Foreign { .. }
                | KeyState::Shared { .. }),
            ) => [
                row_state(key, verdict),
                match key {
                    KeyState::Present { token, .. } => short_token(token),
                    KeyState::Shared { readers, .. } => lock::describe_shared(readers.len()),
                    _ => "-".into(),
                },
                key.ttl().map_or("no expiry".into(), human::duration),
                latency,
            ],
            Err(err) => [
                match err.to_string() {
                    why if crate::server::cannot_vote(&why) => format!("cannot vote: {why}"),
                    why => format!("unreachable: {why}"),
                },
                "-".into(),
                "-".into(),
                latency,
            ],
        };
        let [a, b, c, d] = row;
        let server = match (&state.master, &state.node) {
            (Some(master), _) => format!("{} (master {master})", state.server),
            (None, Some((node, slot))) => {
                format!("{} (node {node}, hash slot {slot})", state.server)
            }
            (None, None) => state.server.clone(),
        };
        rows.push([server, a, b, c, d]);
    }
    out.push_str(&align(&rows));
    out
}

/// One server's key in a word, beside the verdict: part of the holder's quorum, a copy that
/// is not (another holder), or a copy of a lock nobody holds.
fn row_state(key: &KeyState, verdict: &Holding) -> String {
    match (key, verdict) {
        (KeyState::Present { token, .. }, Holding::Held { token: held, .. }) if token == held => {
            "held".into()
        }
        (KeyState::Foreign { kind, .. }, Holding::Foreign { .. }) => format!("held ({kind})"),
        (KeyState::Shared { .. }, Holding::Shared { .. }) => "shared".into(),
        (_, Holding::Held { .. } | Holding::Foreign { .. } | Holding::Shared { .. }) => {
            "other holder".into()
        }
        (_, Holding::Partial { .. } | Holding::Free) => "partial".into(),
        (_, Holding::Unknown) => "key present".into(),
    }
}
