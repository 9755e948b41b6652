//! What a finding is: the server it is about, its message, and its code (for scripts, in
//! `--json`), each code with its severity and what it means, in the one table `--help`, the man
//! page and docs/doctor.md show (a test checks the doc's).

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Severity {
    /// The deployment may still work, with less margin than it seems to have.
    Warning,
    /// Exclusion can break (two holders at once), or redlock cannot work at all.
    Error,
}

impl Severity {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Code {
    SameServer,
    Misconfigured,
    Replica,
    Eviction,
    Denied,
    NoQuorum,
    Unreachable,
    Restarted,
    NoPersistence,
    Appendfsync,
    MinReplicas,
    ServerCount,
    Clock,
    Latency,
    Memory,
    Notifications,
    SentinelQuorum,
    ClusterState,
    Clients,
    Unchecked,
}

/// Every code, its severity and meaning, in the order docs/doctor.md lists them.
pub(crate) const CODES: &[(Code, &str, Severity, &str)] = &[
    (Code::SameServer, "same_server", Severity::Error, "two listed URLs reach one server (the same address and port, or the same run_id), or two of its databases: they are one failure domain, not two votes"),
    (Code::Misconfigured, "misconfigured", Severity::Error, "a server cannot vote until its URL, redlock's options or the server change (it will not come back by itself): a wrong or missing password, a TLS certificate this host refuses or a missing client certificate, TLS on one end only, something that is not Redis, or a server of another kind than its URL says (a Cluster node, a Sentinel, a single server named as a cluster, a master name no sentinel knows, sentinels that name different masters); the finding names the option or URL form that fixes it"),
    (Code::Replica, "replica", Severity::Error, "a replica is listed as a server (it refuses every write), or a master and its replica both are"),
    (Code::Eviction, "eviction", Severity::Error, "maxmemory is set with a maxmemory-policy other than noeviction: it can evict a held lock (volatile-* evicts keys with a TTL, every lock key, first)"),
    (Code::Denied, "denied", Severity::Error, "the ACL user may not run a command redlock needs, or use its keys (renamed commands too)"),
    (Code::NoQuorum, "no_quorum", Severity::Error, "fewer than a quorum of the servers answered: no lock can be taken (exit 69)"),
    (Code::Unreachable, "unreachable", Severity::Warning, "a server is down: refused, timed out, or closed the connection before any reply, or said it is loading or busy; it votes no until it is back, and the others tolerate one failure fewer"),
    (Code::Restarted, "restarted", Severity::Warning, "no persistence, and it started less than --ttl ago: it may have forgotten locks it granted that are still held elsewhere"),
    (Code::NoPersistence, "no_persistence", Severity::Warning, "no persistence (appendonly no): a restart forgets its locks, so delay every restart by the longest TTL"),
    (Code::Appendfsync, "appendfsync", Severity::Warning, "appendonly yes but appendfsync everysec or no: a crash loses the last writes, locks included"),
    (Code::MinReplicas, "min_replicas", Severity::Warning, "a master with replicas behind a plain URL, without min-replicas-to-write: a failover can promote a replica that never got a lock"),
    (Code::ServerCount, "server_count", Severity::Warning, "an even number of servers, or only one or two: an odd number of three or more tolerates failures"),
    (Code::Clock, "clock", Severity::Warning, "a server's clock is further from this host's than the --ttl's drift allowance"),
    (Code::Latency, "latency", Severity::Warning, "a server answers in more than half the --timeout"),
    (Code::Memory, "memory", Severity::Warning, "more than 90% of maxmemory in use under noeviction: once full, every acquire fails (OOM)"),
    (Code::Notifications, "notifications", Severity::Warning, "something only promptness or information needs is refused: PUBLISH or SUBSCRIBE (waiters still get the lock, at their next retry), the run history's LPUSH, LTRIM or LRANGE (runs go unrecorded), SCRIPT LOAD (after a SCRIPT FLUSH, one request fails on that server before its connection is made again), or DBSIZE (a listing on a server with many keys runs out of --timeout)"),
    (Code::SentinelQuorum, "sentinel_quorum", Severity::Warning, "a Sentinel group's sentinels cannot agree on a failover (SENTINEL CKQUORUM fails)"),
    (Code::ClusterState, "cluster_state", Severity::Warning, "a Redis Cluster's state is not ok (a hash slot no master serves)"),
    (Code::Clients, "clients", Severity::Warning, "more than 90% of maxclients connected, or connections refused since start for it: a refused connection is a vote lost"),
    (Code::Unchecked, "unchecked", Severity::Warning, "a fact could not be read (INFO or CONFIG GET renamed or refused, or the ACL): each is named, and --strict fails; run doctor with --read-as USER, a user that may read them"),
];

impl Code {
    fn row(self) -> &'static (Code, &'static str, Severity, &'static str) {
        CODES
            .iter()
            .find(|row| row.0 == self)
            .expect("every code has a row")
    }

    pub(crate) fn name(self) -> &'static str {
        self.row().1
    }

    pub(crate) fn severity(self) -> Severity {
        self.row().2
    }
}

/// One finding.
pub(super) struct Finding {
    pub(super) code: Code,
    /// The server it is about (redacted); `None` for the deployment as a whole.
    pub(super) server: Option<String>,
    pub(super) message: String,
    /// The server's or the library's own words behind it, for `-v` and `--json`.
    pub(super) detail: Option<String>,
}

impl Finding {
    pub(super) fn new(code: Code, server: Option<&str>, message: String) -> Finding {
        Finding {
            code,
            server: server.map(str::to_string),
            message,
            detail: None,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_lists_every_finding() {
        let doc = include_str!("../../docs/doctor.md");
        let rows: Vec<&str> = doc
            .lines()
            .skip_while(|line| !line.starts_with("| finding"))
            .skip(2)
            .take_while(|line| line.starts_with('|'))
            .collect();
        let expected: Vec<String> = CODES
            .iter()
            .map(|(_, name, severity, meaning)| {
                format!("| `{name}` | {} | {meaning} |", severity.word())
            })
            .collect();
        assert_eq!(
            rows, expected,
            "docs/doctor.md's findings table differs from src/doctor/codes.rs"
        );
    }
}
