//! Asking every listed server, all at once, what `doctor` checks: each server's facts (facts.rs)
//! and what its user may do (access.rs). A Sentinel group is asked through to its master, and
//! its sentinels whether they can fail it over (`SENTINEL CKQUORUM`); a Redis Cluster through to
//! every master, each one's facts apart, and the cluster's state. Each request has the
//! per-server `--timeout`.

use super::access::{self, Access, Names};
use super::facts::{clock, median, Facts};
use crate::clock::BootInstant;
use crate::human::{first_line, lowercase_first};
use crate::lock::keys::{fence, queue, wake_prefix, Layout, LockKeys};
use crate::server::Server;
use redis::{ConnectionAddr, ConnectionLike};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How many `PING`s a server's latency is the median of.
const PINGS: usize = 5;

/// One listed server, as `doctor` found it.
pub(super) struct Checked {
    pub(super) display: String,
    pub(super) kind: access::Kind,
    /// False for a server listed again under another name: it does not vote.
    pub(super) votes: bool,
    /// The database its URL names.
    pub(super) db: i64,
    /// The ACL user it is reached as.
    pub(super) user: String,
    /// Why it could not be asked at all.
    pub(super) error: Option<String>,
    /// For a Sentinel group, the master that answered (`host:port`).
    pub(super) master: Option<String>,
    /// Each Redis process behind it: the server, a group's master, a cluster's masters.
    pub(super) nodes: Vec<Node>,
    /// What its user may do (`None`: not asked, the server was not reached).
    pub(super) access: Option<Result<Access, String>>,
    /// For a Sentinel group, what its sentinels say of their quorum (`SENTINEL CKQUORUM`).
    pub(super) sentinels: Option<Result<String, String>>,
}

/// One Redis process behind a listed server.
pub(super) struct Node {
    /// `host:port`: a cluster's node, a group's master, a plain server's as its URL says.
    pub(super) address: Option<String>,
    pub(super) facts: Facts,
}

impl Checked {
    /// Whether it answered at all.
    pub(super) fn reachable(&self) -> bool {
        self.error.is_none()
    }
}

/// Every server of `servers` (each with whether it votes), asked at once.
pub(super) fn check_all(
    servers: &[(&Server, bool)],
    prefix: &str,
    timeout: Duration,
) -> Vec<Checked> {
    std::thread::scope(|scope| {
        let asking: Vec<_> = servers
            .iter()
            .map(|&(server, votes)| scope.spawn(move || check(server, votes, prefix, timeout)))
            .collect();
        asking
            .into_iter()
            .zip(servers)
            .map(|(asked, (server, votes))| {
                asked.join().unwrap_or_else(|_| Checked {
                    error: Some("internal error while checking it".into()),
                    ..empty(server, *votes)
                })
            })
            .collect()
    })
}

fn kind(server: &Server) -> access::Kind {
    if server.address().is_some() {
        access::Kind::Plain
    } else if server.sentinels().is_some() {
        access::Kind::Sentinel
    } else {
        access::Kind::Cluster
    }
}

fn empty(server: &Server, votes: bool) -> Checked {
    Checked {
        display: server.display.clone(),
        kind: kind(server),
        votes,
        db: server.info.redis_settings().db(),
        user: server
            .info
            .redis_settings()
            .username()
            .unwrap_or("default")
            .to_string(),
        error: None,
        master: None,
        nodes: Vec::new(),
        access: None,
        sentinels: None,
    }
}

/// A redis error in a few words.
fn why(err: &redis::RedisError) -> String {
    if let Some(words) = crate::server::refusal(err) {
        return words;
    }
    if err.is_timeout() {
        return "no answer in time".into();
    }
    if err.is_connection_refusal() {
        return "connection refused".into();
    }
    lowercase_first(first_line(&err.to_string()))
}

fn check(server: &Server, votes: bool, prefix: &str, timeout: Duration) -> Checked {
    let mut checked = empty(server, votes);
    let user = server
        .info
        .redis_settings()
        .username()
        .unwrap_or("default")
        .to_string();
    let layout = match checked.kind {
        access::Kind::Cluster => Layout::Cluster,
        _ => Layout::Plain,
    };
    let names = names(prefix, layout, checked.db);
    if checked.kind == access::Kind::Cluster {
        cluster(server, &mut checked, (&user, &names), timeout);
        return checked;
    }
    if checked.kind == access::Kind::Sentinel {
        checked.sentinels = Some(ckquorum(server, timeout));
    }
    let mut connection = match server.connect_near("", timeout) {
        Ok(connection) => connection,
        Err(err) => {
            checked.error = Some(why(&err));
            return checked;
        }
    };
    let _ = connection.set_read_timeout(Some(timeout));
    let _ = connection.set_write_timeout(Some(timeout));
    checked.master = server.master();
    // Where it listens, as a replica names its master: a plain server's host and port, a
    // group's master.
    let address = match server.address() {
        Some(ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. }) => {
            Some(format!("{host}:{port}"))
        }
        _ => checked.master.clone(),
    };
    match node(&mut connection) {
        Ok(facts) => checked.nodes.push(Node { address, facts }),
        Err(err) => {
            checked.error = Some(why(&err));
            return checked;
        }
    }
    checked.access = Some(access::check(&mut connection, &user, &names, checked.kind));
    checked
}

/// The names the access checks use, for a lock nobody takes, in `layout`.
fn names(prefix: &str, layout: Layout, db: i64) -> Names {
    let keys = LockKeys::new(prefix, "redlock-doctor");
    let lock = keys.lock();
    let name = |key: String| layout.name(&key).into_owned();
    Names {
        lock: lock.to_string(),
        queue: name(queue(lock)),
        hash: name(fence(lock)),
        history: name(keys.history()),
        // Channels keep their names on a cluster (a PUBLISH reaches its node's subscribers).
        channel: format!("{}doctor", wake_prefix(lock)),
        db,
    }
}

/// A cluster: every master's facts, its state, and its user's access (through the master of
/// the checks' key).
fn cluster(
    server: &Server,
    checked: &mut Checked,
    (user, names): (&str, &Names),
    timeout: Duration,
) {
    let mut session = match server.session(BootInstant::now().add(timeout), timeout) {
        Ok(session) => session,
        Err(err) => {
            checked.error = Some(why(&err));
            return;
        }
    };
    // Every master is asked in turn: a few requests each.
    let deadline = crate::clock::BootInstant::now().add(timeout * 16);
    let _ = session.bound(deadline);
    let visited = session.each_node(|con| {
        let mut facts = node(con)?;
        let state: Option<String> = redis::cmd("CLUSTER").arg("INFO").query(con).ok();
        facts.cluster_state = state
            .as_deref()
            .and_then(|info| crate::info::field(info, "cluster_state").map(str::to_string));
        let nodes: Option<String> = redis::cmd("CLUSTER").arg("NODES").query(con).ok();
        let address = nodes.as_deref().and_then(myself);
        Ok(Node { address, facts })
    });
    match visited {
        Ok(nodes) => checked.nodes = nodes,
        Err(err) => {
            checked.error = Some(why(&err));
            return;
        }
    }
    checked.access = Some(access::check(&mut session, user, names, checked.kind));
}

/// The `host:port` of the node that answered `CLUSTER NODES`, from its `myself` line.
fn myself(nodes: &str) -> Option<String> {
    let line = nodes.lines().find(|line| {
        line.split(' ')
            .nth(2)
            .is_some_and(|flags| flags.contains("myself"))
    })?;
    let address = line.split(' ').nth(1)?;
    Some(address.split(['@', ',']).next()?.to_string())
}

/// One Redis process's facts: its latency, `INFO`, clock and the `CONFIG` `INFO` lacks. A
/// first `PING` that fails is the error of the whole.
fn node(con: &mut dyn ConnectionLike) -> redis::RedisResult<Facts> {
    let mut facts = Facts::default();
    let mut pings = Vec::with_capacity(PINGS);
    for _ in 0..PINGS {
        let start = Instant::now();
        let _: String = redis::cmd("PING").query(con)?;
        pings.push(start.elapsed());
    }
    facts.latency = median(pings);
    match redis::cmd("INFO").query::<String>(con) {
        Ok(info) => facts.read_info(&info),
        Err(err) => facts.unread.push(format!("INFO: {}", why(&err))),
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
    for name in ["appendfsync", "save"] {
        let reply: redis::RedisResult<Vec<String>> =
            redis::cmd("CONFIG").arg("GET").arg(name).query(con);
        if let Ok(mut pair) = reply {
            if pair.len() == 2 {
                facts.read_config(name, pair.remove(1));
            }
        }
    }
    Ok(facts)
}

/// What a group's sentinels say of their quorum: every reachable one asked `SENTINEL
/// CKQUORUM`; `Err` naming those that said it is not reached, or that none answered.
fn ckquorum(server: &Server, timeout: Duration) -> Result<String, String> {
    let Some((master, sentinels)) = server.sentinels() else {
        return Err("not a Sentinel group".into());
    };
    let answers: Vec<(String, redis::RedisResult<String>)> = std::thread::scope(|scope| {
        let asking: Vec<_> = sentinels
            .iter()
            .map(|&(address, dialer)| {
                scope.spawn(move || {
                    // AUTH, if the sentinels want one, rides with the connection's first request.
                    let deadline = BootInstant::now().add(timeout);
                    let answer = dialer
                        .open(deadline, false)
                        .and_then(|opened| opened.into_connection(deadline))
                        .and_then(|mut c| {
                            redis::cmd("SENTINEL")
                                .arg("CKQUORUM")
                                .arg(master)
                                .query(&mut c)
                        });
                    (address.to_string(), answer)
                })
            })
            .collect();
        asking
            .into_iter()
            .filter_map(|asked| asked.join().ok())
            .collect()
    });
    let mut ok = None;
    let mut failed = Vec::new();
    for (address, answer) in answers {
        match answer {
            Ok(words) => ok = ok.or(Some(words)),
            Err(err) if err.is_timeout() || err.is_connection_refusal() || err.is_io_error() => {}
            Err(err) => failed.push(format!(
                "sentinel {address}: {}",
                lowercase_first(first_line(&err.to_string()))
            )),
        }
    }
    match (ok, failed.is_empty()) {
        (Some(words), true) => Ok(words),
        (None, true) => Err("no sentinel answered".into()),
        (_, false) => Err(failed.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_node_is_named_by_its_myself_line() {
        let nodes = "07c3 127.0.0.1:30004@31004 slave e7d1 0 1 4 connected\n\
                     e7d1 127.0.0.1:30001@31001,host.example myself,master - 0 0 1 connected 0-5460\n";
        assert_eq!(myself(nodes).as_deref(), Some("127.0.0.1:30001"));
        assert_eq!(myself("garbage"), None);
    }

    #[test]
    fn the_checks_use_redlocks_own_names_under_the_prefix() {
        let plain = names("redlock:", Layout::Plain, 2);
        assert_eq!(plain.lock, "redlock:redlock-doctor");
        assert_eq!(plain.queue, "redlock:redlock-doctor\u{1f}queue");
        assert!(plain
            .channel
            .starts_with("redlock:redlock-doctor\u{1f}wake\u{1f}"));
        let cluster = names("redlock:", Layout::Cluster, 0);
        assert_eq!(cluster.queue, "\u{1f}{redlock:redlock-doctor}\u{1f}queue");
    }
}
