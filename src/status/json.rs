//! The JSON of `status`: a lock's verdict and fields, each server's view, the holder facts a
//! token carries, a kept lock's run, the shared holders and the waiters. docs/json.md
//! lists every field; `servers` is always a number of servers, never a list.

use crate::lock::{Holding, KeyState, NodeError, QueuedWaiter, ServerState, SharedHolder};
use crate::token;
use serde_json::{json, Map, Value};

/// A lock's fields, as `status NAME` shows a lock or a semaphore's slot.
pub(super) fn one_json(
    name: &str,
    key: &str,
    quorum: usize,
    states: &[ServerState],
    verdict: &Holding,
) -> Map<String, Value> {
    let mut lock = verdict_json(name, key, verdict);
    lock.insert("quorum".into(), json!(quorum));
    lock.insert("servers".into(), json!(states.len()));
    lock.insert(
        "per_server".into(),
        states.iter().map(server_json).collect::<Vec<_>>().into(),
    );
    lock
}

/// The fields a lock has in JSON both alone (`status NAME`) and in the list (`status`).
pub(super) fn verdict_json(name: &str, key: &str, verdict: &Holding) -> Map<String, Value> {
    let (state, token, validity_ms) = match verdict {
        Holding::Held {
            token, validity, ..
        } => (
            "held",
            Some(token.as_str()),
            validity.map(|v| v.as_millis() as u64),
        ),
        Holding::Foreign { .. } | Holding::Shared { .. } => ("held", None, None),
        Holding::Free => ("free", None, None),
        Holding::Partial { .. } => ("partial", None, None),
        Holding::Unknown => ("unknown", None, None),
    };
    let foreign = match verdict {
        Holding::Foreign { kind, .. } => Some(kind.as_str()),
        _ => None,
    };
    let (mode, readers) = match verdict {
        Holding::Shared { readers, .. } => (Some("shared"), readers.as_slice()),
        Holding::Held { .. } | Holding::Foreign { .. } => (Some("exclusive"), &[][..]),
        Holding::Free | Holding::Partial { .. } | Holding::Unknown => (None, &[][..]),
    };
    [
        ("name", json!(name)),
        ("key", json!(key)),
        ("held", json!(state == "held")),
        ("state", json!(state)),
        ("token", json!(token)),
        ("holder", json!(token.and_then(holder_json))),
        ("foreign_type", json!(foreign)),
        (
            "kept",
            json!(token.and_then(|token| kept_json(token, validity_ms))),
        ),
        ("validity_ms", json!(validity_ms)),
        ("mode", json!(mode)),
        ("readers", readers_json(readers)),
    ]
    .into_iter()
    .map(|(field, value)| (field.to_string(), value))
    .collect()
}

/// One server's view of a key. Every field is always there (null when it does not apply), so
/// that each entry has the same fields.
fn server_json(state: &ServerState) -> Value {
    let latency_ms = (state.latency.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0;
    let ms = |ttl: Option<std::time::Duration>| ttl.map(|t| t.as_millis() as u64);
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
        Ok(KeyState::Present { token, ttl }) => (Some(token.as_str()), None, None, ms(*ttl)),
        Ok(KeyState::Foreign { kind, ttl }) => (None, Some(kind.as_str()), None, ms(*ttl)),
        Ok(KeyState::Shared { readers, ttl }) => (None, None, Some(readers.len()), ms(*ttl)),
        Ok(KeyState::Absent) | Err(_) => (None, None, None, None),
    };
    json!({
        "server": state.server,
        // Only Sentinel groups have one: which master answered for the group.
        "master": state.master,
        "node": state.node.as_ref().map(|(node, _)| node),
        "hash_slot": state.node.as_ref().map(|(_, slot)| slot),
        "reachable": reachable,
        "error": error,
        "holds_key": holds_key,
        "token": token,
        "foreign_type": foreign_type,
        "reader_count": reader_count,
        "expires_in_ms": expires_in_ms,
        "latency_ms": latency_ms,
    })
}

fn holder_json(token: &str) -> Option<Value> {
    token::holder(token).map(|h| {
        json!({
            "host": h.host,
            "pid": h.pid,
            "acquired_unix_ms": h.acquired_unix_ms,
            "command": h.command,
        })
    })
}

pub(super) fn kept_json(token: &str, validity_ms: Option<u64>) -> Option<Value> {
    let run = token::holder(token)?.kept?;
    Some(json!({
        "finished_unix_ms": run.finished_unix_ms,
        "status": run.end.tag(),
        "until_unix_ms": validity_ms.map(|left| token::unix_ms_now() + left),
    }))
}

/// The shared holders of a lock: who each is, and on how many servers for how long.
fn readers_json(readers: &[SharedHolder]) -> Value {
    readers
        .iter()
        .map(|reader| {
            json!({
                "token": reader.token,
                "holder": holder_json(&reader.token),
                "servers_holding": reader.servers,
                "validity_ms": reader.validity.as_millis() as u64,
            })
        })
        .collect::<Vec<_>>()
        .into()
}

/// The waiters of a lock, in the order they queued.
pub(super) fn waiters_json(waiters: &[QueuedWaiter]) -> Value {
    waiters
        .iter()
        .map(|waiter| {
            let holder = token::holder(&waiter.token);
            json!({
                "host": holder.as_ref().map(|h| h.host.clone()),
                "pid": holder.as_ref().map(|h| h.pid),
                "command": holder.as_ref().and_then(|h| h.command.clone()),
                "since_unix_ms": waiter.since_unix_ms,
                "shared": waiter.shared,
                "servers_queued": waiter.servers,
            })
        })
        .collect::<Vec<_>>()
        .into()
}
