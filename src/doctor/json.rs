//! `doctor --json`: every server's facts and every finding, for programs (docs/json.md,
//! "`doctor --json`"). A fact a server would not tell is `null`.

use super::codes::Finding;
use super::probe::{Checked, Node};
use serde_json::{json, Value};
use std::time::Duration;

/// The document's fields, without its `version`.
pub(super) fn document(
    checked: &[Checked],
    found: &[Finding],
    (strict, ttl, timeout): (bool, Duration, Duration),
    (servers, reachable, errors, warnings): (usize, usize, usize, usize),
) -> Value {
    json!({
        "kind": "doctor",
        "servers": servers,
        "quorum": crate::lock::quorum::quorum(servers),
        "reachable": reachable,
        "ttl_ms": ttl.as_millis() as u64,
        "timeout_ms": timeout.as_millis() as u64,
        "strict": strict,
        "errors": errors,
        "warnings": warnings,
        "per_server": checked.iter().map(server).collect::<Vec<_>>(),
        "findings": found.iter().map(|finding| json!({
            "code": finding.code.name(),
            "severity": finding.severity(strict).word(),
            "server": finding.server,
            "message": finding.message,
        })).collect::<Vec<_>>(),
    })
}

fn server(checked: &Checked) -> Value {
    let (access, refused) = match &checked.access {
        Some(Ok(access)) => (
            Value::from(access.how),
            access
                .refused
                .iter()
                .map(|r| Value::from(r.need.command))
                .collect(),
        ),
        _ => (Value::Null, Vec::new()),
    };
    let sentinels = checked.sentinels.as_ref().map(|said| match said {
        Ok(words) | Err(words) => words.clone(),
    });
    json!({
        "server": checked.display,
        "votes": checked.votes,
        "reachable": checked.reachable(),
        "error": checked.error,
        "master": checked.master,
        "sentinels": sentinels,
        "nodes": checked.nodes.iter().map(node).collect::<Vec<_>>(),
        "access": access,
        "refused": refused,
    })
}

fn node(node: &Node) -> Value {
    let facts = &node.facts;
    let ms = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1000.0);
    json!({
        "node": node.address,
        "latency_ms": ms(facts.latency).map(|ms| (ms * 1000.0).round() / 1000.0),
        "version": facts.version,
        "role": facts.role,
        "run_id": facts.run_id,
        "replica_of": facts.replica_of,
        "replicas": facts.replicas,
        "min_replicas": facts.min_replicas,
        "uptime_ms": facts.uptime.map(|d| d.as_millis() as u64),
        "appendonly": facts.aof,
        "appendfsync": facts.appendfsync,
        "save": facts.save,
        "maxmemory": facts.maxmemory,
        "maxmemory_policy": facts.policy,
        "used_memory": facts.used_memory,
        "clock_offset_ms": facts.clock.map(|c| (c.offset_ms * 1000.0).round() / 1000.0),
        "clock_uncertainty_ms": facts.clock.map(|c| (c.uncertainty_ms * 1000.0).round() / 1000.0),
        "cluster_state": facts.cluster_state,
    })
}
