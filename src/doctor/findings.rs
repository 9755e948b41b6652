//! From what the servers said (probe.rs) to findings: each one line that names the server (its
//! redacted URL), says what is wrong, why it matters to Redlock and what to do. Each server's
//! own facts here; then what only the servers side by side show (across.rs).

use super::codes::{Code, Finding};
use super::headroom::{bytes, clients};
use super::probe::Checked;
use crate::human;
use crate::lock::quorum;
use std::time::Duration;

/// What the findings are measured against.
pub(super) struct Measures {
    /// The longest TTL in use (`--ttl`).
    pub(super) ttl: Duration,
    /// The per-server `--timeout`.
    pub(super) timeout: Duration,
    /// The key prefix (`--prefix`), which the ACL's patterns name.
    pub(super) prefix: String,
}

/// Every finding about each of `checked` alone (an alias's are its twin's: said once, there).
pub(super) fn each_server(checked: &[Checked], measures: &Measures) -> Vec<Finding> {
    let mut found = Vec::new();
    for server in checked {
        each(server, measures, &mut found);
    }
    found
}

/// What one server's own answers show.
fn each(server: &Checked, measures: &Measures, found: &mut Vec<Finding>) {
    if !server.votes {
        // Another name of a server checked under its first: said once, there.
        return;
    }
    let name = Some(server.display.as_str());
    let url = &server.display;
    if let Some(Err(why)) = &server.sentinels {
        found.push(Finding::new(
            Code::SentinelQuorum,
            name,
            format!("{url}: its sentinels cannot fail its master over ({why}): start or reach a majority of them"),
        ));
    }
    if let Some(seen) = &server.error {
        if seen.misconfigured() {
            let mut finding = Finding::new(
                Code::Misconfigured,
                name,
                format!("{url} cannot vote: {}: {}", seen.what, seen.fix),
            );
            finding.detail = Some(seen.detail.clone());
            found.push(finding);
        } else {
            let mut finding = Finding::new(
                Code::Unreachable,
                name,
                format!(
                    "{url} did not answer ({}): it votes no until it is back",
                    seen.what
                ),
            );
            finding.detail = Some(seen.detail.clone());
            found.push(finding);
        }
        return;
    }
    for node in &server.nodes {
        let at = match (&node.address, server.kind) {
            (Some(address), super::access::Kind::Cluster) => format!("{url} (node {address})"),
            _ => url.clone(),
        };
        let facts = &node.facts;
        for unread in &facts.unread {
            found.push(Finding::new(
                Code::Unchecked,
                name,
                format!("{at}: cannot read {unread}, so it is not checked: run doctor with --read-as USER, a user that may run INFO and CONFIG GET (docs/doctor.md)"),
            ));
        }
        clients(&at, name, facts, found);
        if let (Some(max), Some(policy)) = (facts.maxmemory, facts.policy.as_deref()) {
            if max > 0 && policy != "noeviction" {
                let first = if policy.starts_with("volatile") {
                    "; volatile-* evicts the keys with a TTL, every lock key, first"
                } else {
                    ""
                };
                found.push(Finding::new(
                    Code::Eviction,
                    name,
                    format!("{at} evicts keys when full (maxmemory {}, maxmemory-policy {policy}){first}: an evicted lock is taken again while held; set maxmemory-policy noeviction, or keep locks on servers of their own", bytes(max)),
                ));
            } else if let Some(used) = facts.memory_used().filter(|used| *used > 0.9) {
                let state = if used >= 1.0 {
                    "is full: it refuses every acquire"
                } else {
                    "refuses every acquire once full"
                };
                found.push(Finding::new(
                    Code::Memory,
                    name,
                    format!("{at} uses {:.0}% of its maxmemory {} under noeviction and {state} (OOM); raise maxmemory, or free memory", used * 100.0, bytes(max)),
                ));
            }
        }
        persistence(&at, name, facts, measures, found);
        if server.kind == super::access::Kind::Plain
            && facts.role.as_deref() == Some("master")
            && facts.replicas.is_some_and(|n| n > 0)
            && facts.min_replicas == Some(false)
        {
            found.push(Finding::new(
                Code::MinReplicas,
                name,
                format!("{at} is a master with {} replica(s) behind a plain URL, without min-replicas-to-write: a failover (by DNS or a VIP) can promote a replica that never got a lock; set min-replicas-to-write 1 and min-replicas-max-lag 10, or list the group as redis+sentinel://", facts.replicas.unwrap_or_default()),
            ));
        }
        if let Some(clock) = facts.clock {
            let allowed = quorum::drift(measures.ttl).as_secs_f64() * 1000.0;
            if clock.offset_ms.abs() - clock.uncertainty_ms > allowed {
                let side = if clock.offset_ms > 0.0 {
                    "ahead of"
                } else {
                    "behind"
                };
                found.push(Finding::new(
                    Code::Clock,
                    name,
                    format!("{at}: its clock is {} {side} this host's (±{:.1}ms), more than the {}ms drift allowance of --ttl {}: keep clocks in step with NTP that slews (chrony, ntpd)", human::duration(Duration::from_secs_f64(clock.offset_ms.abs() / 1000.0)), clock.uncertainty_ms, allowed.round(), humantime::format_duration(measures.ttl)),
                ));
            }
        }
        if let Some(latency) = facts.latency {
            if latency > measures.timeout / 2 {
                found.push(Finding::new(
                    Code::Latency,
                    name,
                    format!("{at} answers in {}, more than half the --timeout {}: a slower moment counts it as down; raise --timeout", human::latency(latency), humantime::format_duration(measures.timeout)),
                ));
            }
        }
        if facts
            .cluster_state
            .as_deref()
            .is_some_and(|state| state != "ok")
        {
            found.push(Finding::new(
                Code::ClusterState,
                name,
                format!("{at}: the cluster's state is {} (a hash slot no master serves?): locks in those slots cannot be taken; fix it with redis-cli --cluster check and fix", facts.cluster_state.as_deref().unwrap_or_default()),
            ));
        }
    }
    access(server, &measures.prefix, found);
}

/// A server's persistence against the longest TTL.
fn persistence(
    at: &str,
    name: Option<&str>,
    facts: &super::facts::Facts,
    measures: &Measures,
    found: &mut Vec<Finding>,
) {
    let ttl = humantime::format_duration(measures.ttl).to_string();
    match (facts.aof, facts.uptime) {
        (Some(false), Some(uptime)) if uptime < measures.ttl => found.push(Finding::new(
            Code::Restarted,
            name,
            format!("{at} has no persistence and started {} ago, less than --ttl {ttl}: it has forgotten every lock it held, and a lock still held elsewhere can be granted twice until {ttl} after its start; run it with appendonly yes and appendfsync always, or delay its restarts by {ttl}", human::whole_seconds(uptime)),
        )),
        (Some(false), _) => found.push(Finding::new(
            Code::NoPersistence,
            name,
            format!("{at} has no persistence (appendonly no; RDB snapshots alone lose the locks since the last one): a restart forgets its locks; set appendonly yes and appendfsync always, or delay every restart by the longest TTL ({ttl})"),
        )),
        (Some(true), _) => {
            if let Some(fsync) = facts.appendfsync.as_deref().filter(|f| *f != "always") {
                found.push(Finding::new(
                    Code::Appendfsync,
                    name,
                    format!("{at} has appendfsync {fsync}: a crash loses its last writes, a lock just granted among them; set appendfsync always, or delay restarts after a crash by {ttl}"),
                ));
            }
        }
        (None, _) => {}
    }
}

/// What its user may not do.
fn access(server: &Checked, prefix: &str, found: &mut Vec<Finding>) {
    let name = Some(server.display.as_str());
    let url = &server.display;
    match &server.access {
        Some(Ok(access)) => {
            let list = |optional: bool| -> Vec<String> {
                access
                    .refused
                    .iter()
                    .filter(|refused| refused.need.optional == optional)
                    .map(|r| {
                        format!(
                            "{} (for {}: {})",
                            r.need.command.replace('|', " ").to_uppercase(),
                            r.need.for_what,
                            r.why
                        )
                    })
                    .collect()
            };
            let denied = list(false);
            if !denied.is_empty() {
                let recipe =
                    super::needs::recipe(prefix, server.kind == super::access::Kind::Cluster);
                // Restricting `default` locks every other client of a shared server out.
                let fix = if server.user == "default" {
                    format!("give redlock a user of its own, ACL SETUSER redlock on >PASSWORD {recipe}, and connect as it (redis://redlock:PASSWORD@host:port, or --username redlock)")
                } else {
                    format!("ACL SETUSER {} {recipe}", server.user)
                };
                found.push(Finding::new(
                    Code::Denied,
                    name,
                    format!(
                        "{url} refuses its user {} (found by {}): give it what redlock needs (docs/doctor.md): {fix}",
                        denied.join(", "),
                        access.how,
                    ),
                ));
            }
            let quiet = list(true);
            if !quiet.is_empty() {
                found.push(Finding::new(
                    Code::Notifications,
                    name,
                    format!("{url} refuses its user {} (found by {}): every lock works, with less: see each one's use (docs/doctor.md has the ACL)", quiet.join(", "), access.how),
                ));
            }
        }
        Some(Err(why)) => found.push(Finding::new(
            Code::Unchecked,
            name,
            format!("{url}: cannot check what its user may do ({why})"),
        )),
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::access::Kind;
    use super::super::facts::{Clock, Facts};
    use super::super::probe::Node;
    use super::*;

    /// A plain master with persistence and no limit, as doctor would find it: nothing to say.
    fn healthy() -> Facts {
        Facts {
            latency: Some(Duration::from_millis(1)),
            role: Some("master".into()),
            replicas: Some(0),
            min_replicas: Some(false),
            uptime: Some(Duration::from_secs(3600)),
            aof: Some(true),
            appendfsync: Some("always".into()),
            maxmemory: Some(0),
            policy: Some("noeviction".into()),
            used_memory: Some(1 << 20),
            clock: Some(Clock {
                offset_ms: 0.1,
                uncertainty_ms: 0.1,
            }),
            ..Facts::default()
        }
    }

    fn codes_of(facts: Facts) -> Vec<&'static str> {
        let server = Checked {
            display: "redis://r1".into(),
            kind: Kind::Plain,
            votes: true,
            db: 0,
            user: "default".into(),
            error: None,
            master: None,
            nodes: vec![Node {
                address: Some("r1:6379".into()),
                facts,
            }],
            access: None,
            sentinels: None,
        };
        let measures = Measures {
            ttl: Duration::from_secs(30),
            timeout: Duration::from_millis(200),
            prefix: "redlock:".into(),
        };
        let mut found = Vec::new();
        each(&server, &measures, &mut found);
        found.iter().map(|f| f.code.name()).collect()
    }

    #[test]
    fn each_server_rule_fires_past_its_bound_only() {
        assert_eq!(codes_of(healthy()), Vec::<&str>::new());
        // The --ttl 30s drift allowance is 302ms; the offset counts less its uncertainty.
        let clock = |offset_ms, uncertainty_ms| Facts {
            clock: Some(Clock {
                offset_ms,
                uncertainty_ms,
            }),
            ..healthy()
        };
        assert_eq!(codes_of(clock(-3_600_000.0, 0.2)), ["clock"]);
        assert_eq!(codes_of(clock(310.0, 0.2)), ["clock"]);
        assert!(codes_of(clock(310.0, 10.0)).is_empty());
        assert!(codes_of(clock(-300.0, 0.0)).is_empty());
        let latency = |ms| Facts {
            latency: Some(Duration::from_millis(ms)),
            ..healthy()
        };
        assert_eq!(codes_of(latency(101)), ["latency"]);
        assert!(codes_of(latency(100)).is_empty());
        let memory = |used| Facts {
            maxmemory: Some(100),
            used_memory: Some(used),
            ..healthy()
        };
        assert_eq!(codes_of(memory(91)), ["memory"]);
        assert!(codes_of(memory(90)).is_empty());
        let replicated = |on| Facts {
            replicas: Some(2),
            min_replicas: Some(on),
            ..healthy()
        };
        assert_eq!(codes_of(replicated(false)), ["min_replicas"]);
        assert!(codes_of(replicated(true)).is_empty());
        let fsync = Facts {
            appendfsync: Some("everysec".into()),
            ..healthy()
        };
        assert_eq!(codes_of(fsync), ["appendfsync"]);
        let young = Facts {
            aof: Some(false),
            uptime: Some(Duration::from_secs(29)),
            ..healthy()
        };
        assert_eq!(codes_of(young), ["restarted"]);
        let old = Facts {
            aof: Some(false),
            ..healthy()
        };
        assert_eq!(codes_of(old), ["no_persistence"]);
        // Not told is not wrong: nothing is guessed from what INFO would not say.
        let untold = Facts {
            unread: vec!["INFO: refused".into()],
            ..Facts::default()
        };
        assert_eq!(codes_of(untold), ["unchecked"]);
    }
}
