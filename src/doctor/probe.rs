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
use crate::server::{diagnose, Diagnosis, Server};
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
    /// Why it could not be asked at all: down, or set up otherwise than its URL says
    /// (server/diagnosis.rs).
    pub(super) error: Option<Diagnosis>,
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

/// `--read-as`: the user that reads each server's configuration (`INFO`, `CONFIG GET`) instead
/// of redlock's own, which docs/doctor.md's ACL does not let read it.
pub(super) struct ReadAs {
    pub(super) user: String,
    pub(super) password: Option<String>,
}

/// Every server of `servers` (each with whether it votes), asked at once.
pub(super) fn check_all(
    servers: &[(&Server, bool)],
    prefix: &str,
    timeout: Duration,
    read_as: Option<&ReadAs>,
) -> Vec<Checked> {
    std::thread::scope(|scope| {
        let asking: Vec<_> = servers
            .iter()
            .map(|&(server, votes)| {
                scope.spawn(move || check(server, votes, prefix, timeout, read_as))
            })
            .collect();
        asking
            .into_iter()
            .zip(servers)
            .map(|(asked, (server, votes))| {
                asked.join().unwrap_or_else(|_| Checked {
                    error: Some(diagnose(&redis::RedisError::from(std::io::Error::other(
                        "internal error while checking it",
                    )))),
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

/// A redis error in a few words (the server's own, verbatim, when it sent some).
fn why(err: &redis::RedisError) -> String {
    if let Some(words) = crate::server::refusal(err) {
        return words;
    }
    diagnose(err).words()
}

/// Why a server could not be asked: down or misconfigured (server/diagnosis.rs). A plain
/// server that is down to one scheme is asked once by the other (`redis://` by `rediss://`
/// and back): answering it, it is a TLS/plain mismatch, not an outage.
fn unusable(server: &Server, err: &redis::RedisError, timeout: Duration) -> Diagnosis {
    let seen = diagnose(err);
    if seen.misconfigured() {
        return seen;
    }
    let (host, port, tls) = match server.address().cloned() {
        Some(ConnectionAddr::Tcp(host, port)) => (host, port, false),
        Some(ConnectionAddr::TcpTls { host, port, .. }) => (host, port, true),
        _ => return seen,
    };
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    };
    let (other, words) = if tls {
        (
            format!("redis://{host}:{port}"),
            "answers without TLS on that port",
        )
    } else {
        (format!("rediss://{host}:{port}"), "speaks TLS on that port")
    };
    // Certificates are not what is asked here: only whether it speaks the other way.
    let insecure = crate::server::Tls {
        insecure: true,
        ..crate::server::Tls::default()
    };
    // Any answer at all, an error of its own or a TLS alert, says how it speaks.
    let spoke = |err: &redis::RedisError| diagnose(err).misconfigured();
    let answers = match Server::parse(&other, &crate::server::Credentials::default(), &insecure) {
        Err(_) => false,
        Ok(other) => match other.connect_near("", timeout) {
            Err(err) => spoke(&err),
            Ok(mut con) => {
                let _ = con.set_read_timeout(Some(timeout));
                match redis::cmd("PING").query::<String>(&mut con) {
                    Ok(_) => true,
                    Err(err) => spoke(&err),
                }
            }
        },
    };
    if !answers {
        return seen;
    }
    Diagnosis {
        detail: seen.detail.clone(),
        ..diagnose(&std::io::Error::other(words).into())
    }
}

/// A plain URL (or a Sentinel group's master) that reached a server of another kind.
fn other_kind(facts: &Facts) -> Option<Diagnosis> {
    let words = if facts.mode.as_deref() == Some("sentinel") {
        "is a Sentinel (redis_mode:sentinel)"
    } else if facts.cluster_enabled == Some(true) {
        "is a Redis Cluster node (cluster_enabled:1)"
    } else {
        return None;
    };
    Some(diagnose(&std::io::Error::other(words).into()))
}

fn check(
    server: &Server,
    votes: bool,
    prefix: &str,
    timeout: Duration,
    read_as: Option<&ReadAs>,
) -> Checked {
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
        cluster(server, &mut checked, (&user, &names), timeout, read_as);
        return checked;
    }
    if checked.kind == access::Kind::Sentinel {
        checked.sentinels = Some(ckquorum(server, timeout));
    }
    let mut connection = match server.connect_near("", timeout) {
        Ok(connection) => connection,
        Err(err) => {
            checked.error = Some(unusable(server, &err, timeout));
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
    let reader = Reader::new(server, read_as);
    match node(&mut connection, &reader) {
        Ok(facts) => {
            if let Some(seen) = other_kind(&facts) {
                checked.error = Some(seen);
                return checked;
            }
            checked.nodes.push(Node { address, facts })
        }
        Err(err) => {
            checked.error = Some(unusable(server, &err, timeout));
            return checked;
        }
    }
    checked.access = Some(access::check(&mut connection, &user, &names, checked.kind));
    checked
}

/// Who reads a server's configuration: `--read-as`'s user, then redlock's own again (by AUTH,
/// before its access is checked), or redlock's own throughout.
struct Reader<'a> {
    read_as: Option<&'a ReadAs>,
    /// Redlock's own user and password, to AUTH as again.
    own: (String, String),
}

impl<'a> Reader<'a> {
    fn new(server: &Server, read_as: Option<&'a ReadAs>) -> Reader<'a> {
        let settings = server.info.redis_settings();
        Reader {
            read_as,
            own: (
                settings.username().unwrap_or("default").to_string(),
                // A user without a password (nopass) takes any.
                settings.password().unwrap_or("nopass").to_string(),
            ),
        }
    }
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
    read_as: Option<&ReadAs>,
) {
    let reader = Reader::new(server, read_as);
    let mut session = match server.session(BootInstant::now().add(timeout), timeout) {
        Ok(session) => session,
        Err(err) => {
            checked.error = Some(diagnose(&err));
            return;
        }
    };
    // Every master is asked in turn: a few requests each.
    let deadline = crate::clock::BootInstant::now().add(timeout * 16);
    let _ = session.bound(deadline);
    let visited = session.each_node(|con| {
        let mut facts = node(con, &reader)?;
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
            checked.error = Some(diagnose(&err));
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
fn node(con: &mut dyn ConnectionLike, reader: &Reader) -> redis::RedisResult<Facts> {
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
            why(&err)
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
            Err(err) => refused.push((name, why(&err))),
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
