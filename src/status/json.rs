//! The JSON documents of `status`: a lock's verdict and fields, each server's view, the holder
//! facts a token carries, a kept lock's run, and the waiters.

use crate::lock::{Holding, KeyState, NodeError, QueuedWaiter, ServerState, SharedHolder};
use crate::token;
use serde_json::{json, Map, Value};

pub(super) fn one_json(
    name: &str,
    key: &str,
    quorum: usize,
    states: &[ServerState],
    verdict: &Holding,
) -> Value {
    let mut lock = verdict_json(name, key, verdict);
    lock.insert("quorum".into(), json!(quorum));
    lock.insert(
        "servers".into(),
        states.iter().map(server_json).collect::<Vec<_>>().into(),
    );
    lock.into()
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

fn server_json(state: &ServerState) -> Value {
    let latency_ms = (state.latency.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0;
    let mut server = match &state.state {
        Ok(KeyState::Absent) => json!({
            "server": state.server, "reachable": true, "error": null,
            "holds_key": false, "token": null, "ttl_ms": null, "latency_ms": latency_ms,
        }),
        Ok(KeyState::Foreign { kind, ttl }) => json!({
            "server": state.server, "reachable": true, "error": null,
            "holds_key": true, "token": null, "foreign_type": kind,
            "ttl_ms": ttl.map(|t| t.as_millis() as u64), "latency_ms": latency_ms,
        }),
        Ok(KeyState::Shared { readers, ttl }) => json!({
            "server": state.server, "reachable": true, "error": null,
            "holds_key": true, "token": null, "readers": readers.len(),
            "ttl_ms": ttl.map(|t| t.as_millis() as u64), "latency_ms": latency_ms,
        }),
        Ok(KeyState::Present { token, ttl }) => json!({
            "server": state.server, "reachable": true, "error": null,
            "holds_key": true, "token": token, "ttl_ms": ttl.map(|t| t.as_millis() as u64),
            "latency_ms": latency_ms,
        }),
        Err(err) => json!({
            "server": state.server, "reachable": matches!(err, NodeError::ForeignType),
            "error": err.to_string(), "holds_key": matches!(err, NodeError::ForeignType),
            "token": null, "ttl_ms": null, "latency_ms": latency_ms,
        }),
    };
    if let (Some(master), Some(fields)) = (&state.master, server.as_object_mut()) {
        // Only Sentinel groups have one: which master answered for the group.
        fields.insert("master".into(), json!(master));
    }
    if let (Some((node, slot)), Some(fields)) = (&state.node, server.as_object_mut()) {
        // Only clusters have one: which node answered for the key, and the key's hash slot.
        fields.insert("node".into(), json!(node));
        fields.insert("hash_slot".into(), json!(slot));
    }
    server
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
                "servers": reader.servers,
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
                "servers": waiter.servers,
            })
        })
        .collect::<Vec<_>>()
        .into()
}
