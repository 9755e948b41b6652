//! From what the servers said (probe.rs) to findings: each one line that names the server (its
//! redacted URL), says what is wrong, why it matters to Redlock and what to do. Each server's
//! own facts first, then what only the servers side by side show (one server twice, a master and
//! its replica, too few answering, an even count).

use super::codes::{Code, Severity};
use super::probe::Checked;
use crate::human;
use crate::lock::quorum;
use std::time::Duration;

/// One finding.
pub(super) struct Finding {
    pub(super) code: Code,
    /// The server it is about (redacted); `None` for the deployment as a whole.
    pub(super) server: Option<String>,
    pub(super) message: String,
}

impl Finding {
    fn new(code: Code, server: Option<&str>, message: String) -> Finding {
        Finding {
            code,
            server: server.map(str::to_string),
            message,
        }
    }

    /// Its severity, warnings made errors with `--strict`.
    pub(super) fn severity(&self, strict: bool) -> Severity {
        if strict {
            Severity::Error
        } else {
            self.code.severity()
        }
    }
}

/// What the findings are measured against.
pub(super) struct Measures {
    /// The longest TTL in use (`--ttl`).
    pub(super) ttl: Duration,
    /// The per-server `--timeout`.
    pub(super) timeout: Duration,
    /// The key prefix (`--prefix`), which the ACL's patterns name.
    pub(super) prefix: String,
}

/// A listed server that is another one under a second name (config/aliases.rs): the index of
/// each in the checked list, and why they are one.
pub(super) struct Twin {
    pub(super) of: usize,
    pub(super) alias: usize,
    pub(super) why: &'static str,
}

/// Every finding about `checked` (the voting servers first, then the aliases).
pub(super) fn find(checked: &[Checked], twins: &[Twin], measures: &Measures) -> Vec<Finding> {
    let mut found = Vec::new();
    for server in checked {
        each(server, measures, &mut found);
    }
    across(checked, twins, &mut found);
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
    if let Some(why) = &server.error {
        found.push(Finding::new(
            Code::Unreachable,
            name,
            format!("{url} did not answer ({why}): it votes no until it is back"),
        ));
        return;
    }
    if let Some(Err(why)) = &server.sentinels {
        found.push(Finding::new(
            Code::SentinelQuorum,
            name,
            format!("{url}: its sentinels cannot fail its master over ({why}): start or reach a majority of them"),
        ));
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
                format!("{at}: cannot read {unread}; its persistence, eviction and replication are unknown: grant the user +info, or run doctor as one that may"),
            ));
        }
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
            format!("{at} has no persistence and started {} ago, less than --ttl {ttl}: it has forgotten every lock it held, and a lock still held elsewhere can be granted twice until {ttl} after its start; run it with appendonly yes and appendfsync always, or delay its restarts by {ttl}", human::duration(uptime)),
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
            let list = |notifies: bool| -> Vec<String> {
                access
                    .refused
                    .iter()
                    .filter(|refused| refused.need.notifies == notifies)
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
                found.push(Finding::new(
                    Code::Denied,
                    name,
                    format!(
                        "{url} refuses its user {} (found by {}): give it what redlock needs (README: Check a deployment): ACL SETUSER {} {}",
                        denied.join(", "),
                        access.how,
                        server.user,
                        super::needs::recipe(prefix, server.kind == super::access::Kind::Cluster)
                    ),
                ));
            }
            let quiet = list(true);
            if !quiet.is_empty() {
                found.push(Finding::new(
                    Code::Notifications,
                    name,
                    format!("{url} refuses its user {} (found by {}): waiters get the lock at their next retry instead of at once", quiet.join(", "), access.how),
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

/// What only the servers side by side show.
fn across(checked: &[Checked], twins: &[Twin], found: &mut Vec<Finding>) {
    let voting: Vec<&Checked> = checked.iter().filter(|c| c.votes).collect();
    for twin in twins {
        let (a, b) = (&checked[twin.of], &checked[twin.alias]);
        found.push(Finding::new(
            Code::SameServer,
            Some(&b.display),
            format!("{} and {} are one server ({}){}: redlock counts it once, so there are fewer independent servers than listed; list each server once", a.display, b.display, twin.why, databases(a, b)),
        ));
    }
    // One run_id behind two voting servers: names only DNS knows, a plain URL beside the group
    // or cluster it belongs to.
    let ids = |server: &Checked| -> Vec<String> {
        server
            .nodes
            .iter()
            .filter_map(|n| n.facts.run_id.clone())
            .collect()
    };
    for (i, a) in voting.iter().enumerate() {
        for b in &voting[i + 1..] {
            let shared = ids(a).into_iter().find(|id| ids(b).contains(id));
            if let Some(id) = shared {
                found.push(Finding::new(
                    Code::SameServer,
                    Some(&b.display),
                    format!("{} and {} are one server (the same run_id {id}){}: it votes twice, so one restart can hand a lock to two holders; list each server once", a.display, b.display, databases(a, b)),
                ));
            }
        }
    }
    replicas(&voting, found);
    let n = voting.len();
    let reachable = voting.iter().filter(|c| c.reachable()).count();
    let needed = quorum::quorum(n);
    if reachable < needed {
        found.push(Finding::new(
            Code::NoQuorum,
            None,
            format!("{reachable} of {n} servers answered, {needed} needed: no lock can be taken until a quorum answers"),
        ));
    }
    let count = match n {
        1 => Some("1 server is a single point of failure, not Redlock: use 3 or 5 independent servers".to_string()),
        2 => Some("2 servers need both for a quorum, so one down stops every lock: use 3 or 5".to_string()),
        n if n % 2 == 0 => Some(format!("{n} servers is an even number: a quorum needs {needed}, so {} servers tolerate as many failures", n - 1)),
        _ => None,
    };
    if let Some(message) = count {
        found.push(Finding::new(Code::ServerCount, None, message));
    }
}

/// Every replica listed as a server, and whether its master is listed too (they share a
/// replication ID).
fn replicas(voting: &[&Checked], found: &mut Vec<Finding>) {
    for server in voting {
        for node in &server.nodes {
            if node.facts.role.as_deref() != Some("replica") {
                continue;
            }
            let of = node.facts.replica_of.as_deref().unwrap_or("its master");
            // The master it follows, by the replication ID they share once in sync, or by the
            // address it follows (before the first sync, its ID is still its own).
            let master = voting.iter().find(|other| {
                other.display != server.display
                    && other.nodes.iter().any(|n| {
                        let same_id =
                            n.facts.replid.is_some() && n.facts.replid == node.facts.replid;
                        let followed = n.address.is_some() && n.address == node.facts.replica_of;
                        n.facts.role.as_deref() == Some("master") && (same_id || followed)
                    })
            });
            let listed = master.map_or(String::new(), |master| {
                format!(", and its master is listed too as {}: one failover can hand a lock to two holders", master.display)
            });
            found.push(Finding::new(
                Code::Replica,
                Some(&server.display),
                format!("{} is a replica of {of} (read-only: it refuses every lock){listed}; list independent masters, or the group as redis+sentinel://", server.display),
            ));
        }
    }
}

/// `, two databases of it` when `a` and `b` name different databases.
fn databases(a: &Checked, b: &Checked) -> &'static str {
    if a.db != b.db {
        ", two of its databases"
    } else {
        ""
    }
}

/// `2mb`, `512kb`, `1.5gb`: a memory size as redis.conf writes one.
pub(super) fn bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10)];
    for (unit, size) in UNITS {
        if n >= size {
            let value = n as f64 / size as f64;
            return if value.fract() == 0.0 {
                format!("{value:.0}{unit}")
            } else {
                format!("{value:.1}{unit}")
            };
        }
    }
    format!("{n}b")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_redis_conf_writes_them() {
        assert_eq!(bytes(2 * 1024 * 1024), "2mb");
        assert_eq!(bytes(1536 * 1024 * 1024), "1.5gb");
        assert_eq!(bytes(100), "100b");
    }
}
