//! `doctor --json`: every server's facts and every finding, for programs (`DoctorDocument`). A
//! fact a server would not tell is `null`. A new fact is one field, with its doc comment, in
//! `NodeEntry` or `CheckedEntry`, filled in `node` or `server`.

use super::codes::Finding;
use super::probe::{Checked, Node};
use crate::schema::{documented, ms, ms_micros};
use std::time::Duration;

documented! {
    /// `doctor --json`: the deployment as checked.
    pub(crate) struct DoctorDocument<'a> {
        /// `"doctor"`
        kind: &'static str,
        /// servers configured (those that vote: another name of one is not counted)
        servers: usize,
        /// servers a verdict needs
        quorum: usize,
        /// servers that answered, of those
        reachable: usize,
        /// the `--ttl` the findings are measured against
        ttl_ms: u64,
        /// the per-server `--timeout`
        timeout_ms: u64,
        /// whether `--strict` made every warning an error
        strict: bool,
        /// findings that are errors
        errors: usize,
        /// findings that are warnings
        warnings: usize,
        /// each server as listed: those that vote, then other names of them
        per_server: Vec<CheckedEntry<'a>>,
        /// every finding, in the order found
        findings: Vec<FindingEntry<'a>>,
    }
}

documented! {
    /// One server as doctor checked it.
    struct CheckedEntry<'a> {
        /// the server, redacted
        server: &'a str,
        /// false for another name of a server listed before it
        votes: bool,
        /// whether it answered
        reachable: bool,
        /// why it did not, in plain words
        error: Option<&'a str>,
        /// `down` (it may come back by itself) or `misconfigured` (its URL, redlock's options or
        /// the server must change), when it did not answer
        cause: Option<&'static str>,
        /// for a Sentinel group, the master that answered (`host:port`)
        master: Option<&'a str>,
        /// for a Sentinel group, what its sentinels said to `SENTINEL CKQUORUM`
        sentinels: Option<&'a str>,
        /// each Redis process behind it: the server, a group's master, a cluster's masters
        nodes: Vec<NodeEntry<'a>>,
        /// how its user's access was checked: `ACL DRYRUN` or `a probe` (null: not checked)
        access: Option<&'static str>,
        /// the commands it refuses the user, as the ACL names them (`zpopmin`, `pubsub|numsub`)
        refused: Vec<&'static str>,
    }
}

documented! {
    /// One Redis process behind a listed server, and what it told.
    struct NodeEntry<'a> {
        /// where it listens (`host:port`): a plain server's as its URL says, a Sentinel group's
        /// master, a cluster's node (null: a Unix socket)
        node: Option<&'a str>,
        /// the median of five `PING`s
        latency_ms: Option<f64>,
        /// `redis 7.0.15`, `valkey 8.1.0`
        version: Option<&'a str>,
        /// `master` or `replica`
        role: Option<&'a str>,
        /// its `run_id`, the same for every name of one process
        run_id: Option<&'a str>,
        /// for a replica, its master (`host:port`)
        replica_of: Option<&'a str>,
        /// replicas connected to it
        replicas: Option<u64>,
        /// whether `min-replicas-to-write` is in force
        min_replicas: Option<bool>,
        /// how long it has run
        uptime_ms: Option<u64>,
        /// whether the append-only file is on
        appendonly: Option<bool>,
        /// `always`, `everysec` or `no` (null: `CONFIG GET` refused)
        appendfsync: Option<&'a str>,
        /// the RDB snapshot schedule, `""` for none (null: `CONFIG GET` refused)
        save: Option<&'a str>,
        /// its memory limit in bytes, 0 for none
        maxmemory: Option<u64>,
        /// what it evicts when full
        maxmemory_policy: Option<&'a str>,
        /// bytes in use
        used_memory: Option<u64>,
        /// how far its clock is ahead of this host's (negative: behind)
        clock_offset_ms: Option<f64>,
        /// half the round trip that measured it
        clock_uncertainty_ms: Option<f64>,
        /// for a Redis Cluster's node, its `cluster_state` (`ok`, `fail`)
        cluster_state: Option<&'a str>,
        /// the most clients it accepts
        maxclients: Option<u64>,
        /// clients connected now
        connected_clients: Option<u64>,
        /// connections refused since it started because maxclients were connected
        rejected_connections: Option<u64>,
    }
}

documented! {
    /// One finding.
    struct FindingEntry<'a> {
        /// what it is about ([Findings](doctor.md#findings))
        code: &'static str,
        /// `error` or `warning`
        severity: &'static str,
        /// the server it is about, redacted (null: the deployment as a whole)
        server: Option<&'a str>,
        /// the finding in words: what is wrong, why it matters, the fix
        message: &'a str,
        /// what the server or the client library said, verbatim, when the finding comes from an
        /// error (`WRONGPASS invalid username-password pair…`, `invalid peer certificate:
        /// UnknownIssuer`)
        detail: Option<&'a str>,
    }
}

/// The document, from what was checked and found.
pub(super) fn document<'a>(
    checked: &'a [Checked],
    found: &'a [Finding],
    (strict, ttl, timeout): (bool, Duration, Duration),
    (servers, reachable, errors, warnings): (usize, usize, usize, usize),
) -> DoctorDocument<'a> {
    DoctorDocument {
        kind: "doctor",
        servers,
        quorum: crate::lock::quorum::quorum(servers),
        reachable,
        ttl_ms: ms(ttl),
        timeout_ms: ms(timeout),
        strict,
        errors,
        warnings,
        per_server: checked.iter().map(server).collect(),
        findings: found
            .iter()
            .map(|finding| FindingEntry {
                code: finding.code.name(),
                severity: finding.severity(strict).word(),
                server: finding.server.as_deref(),
                message: &finding.message,
                detail: finding.detail.as_deref(),
            })
            .collect(),
    }
}

fn server(checked: &Checked) -> CheckedEntry<'_> {
    let (access, refused) = match &checked.access {
        Some(Ok(access)) => (
            Some(access.how),
            access.refused.iter().map(|r| r.need.command).collect(),
        ),
        _ => (None, Vec::new()),
    };
    let sentinels = checked.sentinels.as_ref().map(|said| match said {
        Ok(words) | Err(words) => words.as_str(),
    });
    CheckedEntry {
        server: &checked.display,
        votes: checked.votes,
        reachable: checked.reachable(),
        error: checked.error.as_ref().map(|seen| seen.what.as_str()),
        cause: checked.error.as_ref().map(|seen| {
            if seen.misconfigured() {
                "misconfigured"
            } else {
                "down"
            }
        }),
        master: checked.master.as_deref(),
        sentinels,
        nodes: checked.nodes.iter().map(node).collect(),
        access,
        refused,
    }
}

/// Milliseconds to the microsecond.
fn micros(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

fn node(node: &Node) -> NodeEntry<'_> {
    let facts = &node.facts;
    NodeEntry {
        node: node.address.as_deref(),
        latency_ms: facts.latency.map(ms_micros),
        version: facts.version.as_deref(),
        role: facts.role.as_deref(),
        run_id: facts.run_id.as_deref(),
        replica_of: facts.replica_of.as_deref(),
        replicas: facts.replicas,
        min_replicas: facts.min_replicas,
        uptime_ms: facts.uptime.map(ms),
        appendonly: facts.aof,
        appendfsync: facts.appendfsync.as_deref(),
        save: facts.save.as_deref(),
        maxmemory: facts.maxmemory,
        maxmemory_policy: facts.policy.as_deref(),
        used_memory: facts.used_memory,
        clock_offset_ms: facts.clock.map(|c| micros(c.offset_ms)),
        clock_uncertainty_ms: facts.clock.map(|c| micros(c.uncertainty_ms)),
        cluster_state: facts.cluster_state.as_deref(),
        maxclients: facts.maxclients,
        connected_clients: facts.clients,
        rejected_connections: facts.rejected,
    }
}
