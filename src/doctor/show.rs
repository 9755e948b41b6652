//! `doctor` for people: a short table per server (what it is, how it keeps its data, what its
//! user may do), "unknown" wherever it would not tell, then the findings, errors first, and a
//! last line that sums them up.

use super::codes::Finding;
use super::codes::Severity;
use super::facts::Facts;
use super::headroom::bytes;
use super::probe::{Checked, Node};
use crate::human;
use std::time::Duration;

const UNKNOWN: &str = "unknown";

/// The whole report.
pub(super) fn text(
    checked: &[Checked],
    found: &[Finding],
    (strict, verbose): (bool, bool),
    summary: &str,
) -> String {
    let mut out = String::new();
    for server in checked {
        out.push_str(&table(server));
        out.push('\n');
    }
    let mut sorted: Vec<&Finding> = found.iter().collect();
    sorted.sort_by_key(|finding| std::cmp::Reverse(finding.severity(strict)));
    for finding in sorted {
        out.push_str(&format!(
            "{} [{}]: {}\n",
            finding.severity(strict).word(),
            finding.code.name(),
            finding.message
        ));
        if let Some(detail) = finding.detail.as_ref().filter(|_| verbose) {
            out.push_str(&format!("  cause: {detail}\n"));
        }
    }
    if !found.is_empty() {
        out.push('\n');
    }
    out.push_str(summary);
    out
}

/// One server's table.
fn table(server: &Checked) -> String {
    let mut head = server.display.clone();
    if let Some(master) = &server.master {
        head.push_str(&format!(" (master {master})"));
    }
    if !server.votes {
        head.push_str(" (another name of a server above: it does not vote)");
    }
    let mut rows: Vec<(String, String)> = Vec::new();
    if let Some(seen) = &server.error {
        let said = if seen.misconfigured() {
            format!("cannot vote: {}", seen.what)
        } else {
            format!("no: {}", seen.what)
        };
        rows.push(("answers".into(), said));
    }
    if let Some(sentinels) = &server.sentinels {
        let said = match sentinels {
            Ok(words) | Err(words) => words.clone(),
        };
        rows.push(("sentinels".into(), said));
    }
    let single = server.kind != super::access::Kind::Cluster;
    for node in &server.nodes {
        if single {
            rows.extend(facts(&node.facts));
        } else {
            rows.push((node_name(node), String::new()));
            rows.extend(
                facts(&node.facts)
                    .into_iter()
                    .map(|(term, text)| (format!("  {term}"), text)),
            );
        }
    }
    if let Some(access) = &server.access {
        let said = match access {
            Ok(access) if access.refused.is_empty() => {
                format!("everything redlock needs (checked by {})", access.how)
            }
            Ok(access) => {
                let refused: Vec<String> = access
                    .refused
                    .iter()
                    .map(|r| r.need.command.replace('|', " ").to_uppercase())
                    .collect();
                format!(
                    "refused: {} (checked by {})",
                    refused.join(", "),
                    access.how
                )
            }
            Err(why) => format!("{UNKNOWN} ({why})"),
        };
        rows.push(("access".into(), said));
    }
    let width = rows
        .iter()
        .map(|(term, _)| term.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = format!("{head}\n");
    for (term, text) in rows {
        out.push_str(format!("  {term:<width$}  {text}").trim_end());
        out.push('\n');
    }
    out
}

fn node_name(node: &Node) -> String {
    format!("node {}", node.address.as_deref().unwrap_or(UNKNOWN))
}

fn or_unknown(value: Option<String>) -> String {
    value.unwrap_or_else(|| UNKNOWN.into())
}

/// One Redis process's rows.
fn facts(facts: &Facts) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    let latency = facts.latency.map(|d| ms(d.as_secs_f64() * 1000.0));
    rows.push(("latency".to_string(), or_unknown(latency)));
    let uptime = facts
        .uptime
        .map(|d| format!("up {}", human::whole_seconds(d)));
    let mut server = vec![
        or_unknown(facts.version.clone()),
        or_unknown(facts.role.clone()),
        or_unknown(uptime),
    ];
    if let Some(id) = &facts.run_id {
        server.push(format!("run_id {id}"));
    }
    rows.push(("server".into(), server.join(", ")));
    let replication = match (&facts.replica_of, facts.replicas, facts.min_replicas) {
        (Some(master), _, _) => format!("replica of {master}"),
        (None, Some(n), min) => format!(
            "{n} replica(s), min-replicas-to-write {}",
            min.map_or(UNKNOWN, |on| if on { "on" } else { "off" })
        ),
        _ => UNKNOWN.into(),
    };
    rows.push(("replication".into(), replication));
    let save = facts.save.as_deref().map(|save| match save {
        "" => "no RDB snapshots".to_string(),
        schedule => format!("save {schedule}"),
    });
    let persistence = match facts.aof {
        Some(true) => format!(
            "appendonly yes, appendfsync {}, {}",
            facts.appendfsync.as_deref().unwrap_or(UNKNOWN),
            save.unwrap_or_else(|| format!("save {UNKNOWN}"))
        ),
        Some(false) => format!(
            "appendonly no, {}",
            save.unwrap_or_else(|| format!("save {UNKNOWN}"))
        ),
        None => UNKNOWN.into(),
    };
    rows.push(("persistence".into(), persistence));
    let memory = match (facts.maxmemory, &facts.policy) {
        (Some(0), Some(policy)) => format!("no maxmemory, maxmemory-policy {policy}"),
        (Some(max), Some(policy)) => format!(
            "maxmemory {} ({:.0}% used), maxmemory-policy {policy}",
            bytes(max),
            facts.memory_used().unwrap_or_default() * 100.0
        ),
        _ => UNKNOWN.into(),
    };
    rows.push(("memory".into(), memory));
    let clock = facts.clock.map(|clock| {
        let side = if clock.offset_ms < 0.0 {
            "behind"
        } else {
            "ahead of"
        };
        format!(
            "{} {side} this host's (±{})",
            ms(clock.offset_ms.abs()),
            ms(clock.uncertainty_ms)
        )
    });
    rows.push(("clock".into(), or_unknown(clock)));
    if let Some(state) = &facts.cluster_state {
        rows.push(("cluster".into(), format!("state {state}")));
    }
    rows
}

/// `0.04ms`, `12.30ms`, `1.5s`: a latency or a clock offset, fine enough for loopback.
fn ms(millis: f64) -> String {
    if millis < 1000.0 {
        format!("{millis:.2}ms")
    } else {
        human::duration(Duration::from_secs_f64(millis / 1000.0))
    }
}

/// The last line: the servers, the quorum, and the findings counted.
pub(super) fn summary(servers: usize, reachable: usize, errors: usize, warnings: usize) -> String {
    let count = |n: usize, what: &str| match n {
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
    };
    let found = match (errors, warnings) {
        (0, 0) => "nothing found".to_string(),
        (e, w) => format!("{}, {}", count(e, "error"), count(w, "warning")),
    };
    format!(
        "{} of {} answered (quorum {}): {found}",
        reachable,
        count(servers, "server"),
        crate::lock::quorum::quorum(servers)
    )
}

/// How many findings have `severity`.
pub(super) fn counted(found: &[Finding], strict: bool, severity: Severity) -> usize {
    found
        .iter()
        .filter(|finding| finding.severity(strict) == severity)
        .count()
}
