//! What `doctor` learns of one Redis process (a plain server, a Sentinel group's master, one
//! master of a cluster): read from `INFO`, which servers answer where `CONFIG` is often renamed
//! or denied, with `CONFIG GET` only for what `INFO` does not say (`appendfsync`, `save`), and
//! `None` wherever the server would not tell.

use super::reach::{why, Reader};
use crate::info::{field, number};
use redis::ConnectionLike;
use std::time::Duration;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// One Redis process, as far as it told.
#[derive(Debug, Default, Clone)]
pub(super) struct Facts {
    /// The median of a few `PING`s.
    pub(super) latency: Option<Duration>,
    /// `redis 7.0.15`, `valkey 8.1.0`.
    pub(super) version: Option<String>,
    /// `master` or `replica`.
    pub(super) role: Option<String>,
    pub(super) run_id: Option<String>,
    /// The replication ID a master and its replicas share (`master_replid`).
    pub(super) replid: Option<String>,
    /// For a replica, its master as `host:port`.
    pub(super) replica_of: Option<String>,
    /// Replicas connected to it.
    pub(super) replicas: Option<u64>,
    /// Whether `min-replicas-to-write` is in force (`INFO` shows `min_slaves_good_slaves` then).
    pub(super) min_replicas: Option<bool>,
    pub(super) uptime: Option<Duration>,
    /// `appendonly`.
    pub(super) aof: Option<bool>,
    pub(super) appendfsync: Option<String>,
    /// The RDB snapshot schedule (`save`), empty when there is none.
    pub(super) save: Option<String>,
    /// Bytes; 0 is no limit.
    pub(super) maxmemory: Option<u64>,
    pub(super) policy: Option<String>,
    pub(super) used_memory: Option<u64>,
    pub(super) clock: Option<Clock>,
    /// For a cluster's node, `cluster_state` (`ok`, `fail`).
    pub(super) cluster_state: Option<String>,
    /// Whether it runs in cluster mode (`cluster_enabled`).
    pub(super) cluster_enabled: Option<bool>,
    /// `standalone`, `cluster` or `sentinel` (`redis_mode`, `server_mode` on Valkey).
    pub(super) mode: Option<String>,
    /// The most clients it accepts (`maxclients`).
    pub(super) maxclients: Option<u64>,
    /// Clients connected now.
    pub(super) clients: Option<u64>,
    /// Connections refused since it started because `maxclients` were connected.
    pub(super) rejected: Option<u64>,
    /// Each fact that could not be read, with why: `appendfsync and save (CONFIG GET: …)`.
    pub(super) unread: Vec<String>,
}

/// The server's wall clock against ours.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Clock {
    /// How far ahead of ours it is (negative: behind), in milliseconds.
    pub(super) offset_ms: f64,
    /// Half the round trip that asked: the offset is certain to within this.
    pub(super) uncertainty_ms: f64,
}

impl Facts {
    /// The facts an `INFO` (all default sections) reply gives.
    pub(super) fn read_info(&mut self, info: &str) {
        let text = |name: &str| field(info, name).map(str::to_string);
        self.version = match (field(info, "valkey_version"), field(info, "redis_version")) {
            (Some(valkey), _) => Some(format!("valkey {valkey}")),
            (None, Some(redis)) => Some(format!("redis {redis}")),
            (None, None) => None,
        };
        self.role = field(info, "role").map(|role| match role {
            "slave" => "replica".to_string(),
            other => other.to_string(),
        });
        self.run_id = text("run_id");
        self.replid = text("master_replid");
        if self.role.as_deref() == Some("replica") {
            self.replica_of = match (field(info, "master_host"), field(info, "master_port")) {
                (Some(host), Some(port)) => Some(format!("{host}:{port}")),
                _ => None,
            };
        }
        self.replicas = number(info, "connected_slaves");
        if self.role.is_some() {
            self.min_replicas = Some(field(info, "min_slaves_good_slaves").is_some());
        }
        self.uptime = number(info, "uptime_in_seconds").map(Duration::from_secs);
        self.aof = number(info, "aof_enabled").map(|on| on == 1);
        self.maxmemory = number(info, "maxmemory");
        self.policy = text("maxmemory_policy");
        self.used_memory = number(info, "used_memory");
        self.cluster_enabled = number(info, "cluster_enabled").map(|on| on == 1);
        self.mode = field(info, "redis_mode")
            .or_else(|| field(info, "server_mode"))
            .map(str::to_string);
        self.maxclients = number(info, "maxclients");
        self.clients = number(info, "connected_clients");
        self.rejected = number(info, "rejected_connections");
    }

    /// `CONFIG GET name`'s reply, `[name, value]`, when the server answered one.
    pub(super) fn read_config(&mut self, name: &str, value: String) {
        match name {
            "appendfsync" => self.appendfsync = Some(value),
            "save" => self.save = Some(value),
            "maxclients" => self.maxclients = value.parse().ok(),
            _ => {}
        }
    }

    /// The share of `maxmemory` in use, when both are known and there is a limit.
    pub(super) fn memory_used(&self) -> Option<f64> {
        match (self.used_memory, self.maxmemory) {
            (Some(used), Some(max)) if max > 0 => Some(used as f64 / max as f64),
            _ => None,
        }
    }
}

/// The clock of a server whose `TIME` said `server_us` (microseconds since the epoch), asked
/// between our own `before_us` and `after_us`.
pub(super) fn clock(server_us: i128, before_us: i128, after_us: i128) -> Clock {
    let middle = (before_us + after_us) / 2;
    Clock {
        offset_ms: (server_us - middle) as f64 / 1000.0,
        uncertainty_ms: (after_us - before_us).max(0) as f64 / 2000.0,
    }
}

/// The median of `samples` (not empty).
pub(super) fn median(mut samples: Vec<Duration>) -> Option<Duration> {
    samples.sort();
    samples.get(samples.len() / 2).copied()
}

/// How many `PING`s a server's latency is the median of.
const PINGS: usize = 5;

/// One Redis process's facts: its latency, `INFO`, clock and the `CONFIG` `INFO` lacks. A
/// first `PING` that fails is the error of the whole.
pub(super) fn node(con: &mut dyn ConnectionLike, reader: &Reader) -> redis::RedisResult<Facts> {
    let mut facts = Facts::default();
    let mut pings = Vec::with_capacity(PINGS);
    for _ in 0..PINGS {
        let start = Instant::now();
        let _: String = redis::cmd("PING").query(con)?;
        pings.push(start.elapsed());
    }
    facts.latency = median(pings);
    if let Some(read_as) = reader.read_as {
        let mut auth = redis::cmd("AUTH");
        auth.arg(&read_as.user)
            .arg(read_as.password.as_deref().unwrap_or_default());
        if let Err(err) = auth.query::<()>(con) {
            facts.unread.push(format!(
                "anything as --read-as {} (AUTH: {}; its password is REDLOCK_READ_AS_PASSWORD)",
                read_as.user,
                why(&err)
            ));
        }
    }
    read_facts(con, &mut facts);
    if reader.read_as.is_some() {
        let (user, password) = &reader.own;
        redis::cmd("AUTH")
            .arg(user)
            .arg(password)
            .query::<()>(con)?;
    }
    Ok(facts)
}

/// What `node` reads as the configuration's reader.
fn read_facts(con: &mut dyn ConnectionLike, facts: &mut Facts) {
    match redis::cmd("INFO").query::<String>(con) {
        Ok(info) => facts.read_info(&info),
        Err(err) => facts.unread.push(format!(
            "its role, replicas, persistence (appendonly), memory and eviction, clients and uptime (INFO: {})",
            crate::server::verbatim(&err)
        )),
    }
    let now_us = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i128)
    };
    let before = now_us();
    if let Ok((secs, micros)) = redis::cmd("TIME").query::<(i128, i128)>(con) {
        facts.clock = Some(clock(secs * 1_000_000 + micros, before, now_us()));
    }
    // What INFO does not say: appendfsync and save always, maxclients before Redis 7.
    let mut asked = vec!["appendfsync", "save"];
    if facts.maxclients.is_none() {
        asked.push("maxclients");
    }
    let mut refused = Vec::new();
    for name in asked {
        let reply: redis::RedisResult<Vec<String>> =
            redis::cmd("CONFIG").arg("GET").arg(name).query(con);
        match reply {
            Ok(mut pair) if pair.len() == 2 => facts.read_config(name, pair.remove(1)),
            Ok(_) => refused.push((name, "not told".to_string())),
            Err(err) => refused.push((name, crate::server::verbatim(&err))),
        }
    }
    if let Some((_, reason)) = refused.first() {
        let names: Vec<&str> = refused.iter().map(|(name, _)| *name).collect();
        facts
            .unread
            .push(format!("{} (CONFIG GET: {reason})", human_list(&names)));
    }
}

/// `a`, `a and b`, `a, b and c`.
fn human_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MASTER: &str = "# Server\r\nredis_version:7.0.15\r\nrun_id:r1\r\nuptime_in_seconds:42\r\n\
        # Memory\r\nused_memory:1000\r\nmaxmemory:4000\r\nmaxmemory_policy:volatile-lru\r\n\
        # Persistence\r\naof_enabled:1\r\n\
        # Replication\r\nrole:master\r\nconnected_slaves:1\r\nmin_slaves_good_slaves:1\r\nmaster_replid:x1\r\n";

    #[test]
    fn info_gives_what_it_has_and_nothing_else() {
        let mut facts = Facts::default();
        facts.read_info(MASTER);
        assert_eq!(facts.version.as_deref(), Some("redis 7.0.15"));
        assert_eq!(facts.role.as_deref(), Some("master"));
        assert_eq!(facts.replicas, Some(1));
        assert_eq!(facts.min_replicas, Some(true));
        assert_eq!(facts.uptime, Some(Duration::from_secs(42)));
        assert_eq!(facts.aof, Some(true));
        assert_eq!(facts.memory_used(), Some(0.25));
        assert_eq!(facts.replica_of, None);
        assert_eq!(facts.appendfsync, None, "INFO does not say");
        let replica = "valkey_version:8.1.0\r\nredis_version:7.2.4\r\nrole:slave\r\nmaster_host:10.0.0.5\r\nmaster_port:6379\r\nmaxmemory:0\r\n";
        let mut facts = Facts::default();
        facts.read_info(replica);
        assert_eq!(facts.version.as_deref(), Some("valkey 8.1.0"));
        assert_eq!(facts.role.as_deref(), Some("replica"));
        assert_eq!(facts.replica_of.as_deref(), Some("10.0.0.5:6379"));
        assert_eq!(facts.min_replicas, Some(false));
        assert_eq!(facts.memory_used(), None, "no limit");
    }

    #[test]
    fn a_clock_is_read_against_the_middle_of_the_round_trip() {
        let seen = clock(1_000_500_000, 1_000_000_000, 1_000_000_400);
        assert_eq!(seen.offset_ms, 499.8);
        assert_eq!(seen.uncertainty_ms, 0.2);
        let behind = clock(999_000_000, 1_000_000_000, 1_000_000_000);
        assert_eq!(behind.offset_ms, -1000.0);
        assert_eq!(
            median(vec![
                Duration::from_millis(3),
                Duration::from_millis(1),
                Duration::from_millis(2)
            ]),
            Some(Duration::from_millis(2))
        );
    }
}
