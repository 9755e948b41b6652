//! Asking every listed server, all at once, what `doctor` checks: each server's facts (facts.rs)
//! and what its user may do (access.rs). A Sentinel group is asked through to its master, and
//! its sentinels whether they can fail it over (`SENTINEL CKQUORUM`); a Redis Cluster through to
//! every master, each one's facts apart, and the cluster's state. Each request has the
//! per-server `--timeout`.

use super::access::{self, Access, Names};
use super::facts::{node, Facts};
pub(super) use super::reach::ReadAs;
use super::reach::{unusable, Reader};
use crate::clock::BootInstant;
use crate::human::{first_line, lowercase_first};
use crate::lock::keys::{fence, queue, wake_prefix, Layout, LockKeys};
use crate::server::{diagnose, Diagnosis, Server};
use redis::ConnectionAddr;
use std::time::Duration;

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
