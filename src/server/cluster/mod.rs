//! A Redis Cluster as one server: parsing `redis+cluster://` URLs, learning which master serves
//! each hash slot (`CLUSTER SLOTS`, from the seeds and the masters already known, all asked at
//! once: `asked`), keeping that map while it holds, and connecting to any node with the URL's
//! credentials and TLS settings. Without I/O: a key's hash slot in `slots`, a node's address in
//! `node`, the slot map in `map`, a node's redirections in `redirect`; sending a request to the
//! right node and following its redirections is `super::route`'s.
//!
//! The map is refreshed after a `MOVED` that contradicts it and after a node failed to answer,
//! before the next request needs it: a failover moves every slot of the failed master at once,
//! and the next round then asks the new master.

mod asked;
mod map;
mod node;
mod redirect;
mod slots;

use super::blocking::{Blocking, Dialer};
use super::client::{at, client, unusable_tls_files, with_credentials, Tls};
use super::url::HostList;
use crate::clock::BootInstant;
use crate::human::{first_line, lowercase_first};
pub(crate) use asked::Asked;
pub(crate) use map::Map;
pub(crate) use node::Node;
pub(crate) use redirect::Redirect;
use redis::{ConnectionInfo, IntoConnectionInfo, RedisResult};
pub(crate) use slots::{command_slot, hash_slot, hash_tag};
use std::sync::{Arc, Mutex};

/// The port a seed listens on unless the URL says otherwise.
const DEFAULT_PORT: u16 = 6379;

/// The URL forms, for error messages.
const EXPECTED: &str = "expected redis+cluster://[user[:password]@]host[:port][,host[:port]…]";

/// One cluster: its seeds, how to log in to its nodes, and what we know of its slots.
pub(crate) struct Cluster {
    /// The nodes the URL names, in its order, without repeats.
    seeds: Vec<Node>,
    /// Every node's settings (user, password, TLS); the address is each node's own.
    template: ConnectionInfo,
    tls: Tls,
    known: Mutex<Known>,
    /// The node and slot that answered the last request for a key, for `status`.
    answered: Mutex<Option<(Node, u16)>>,
}

/// What asking for a new map opened: the connection to the node that gave it, and the other
/// nodes asked at the same time, whose connections a request may use rather than open another.
pub(crate) struct Given {
    pub(crate) node: Node,
    pub(crate) connection: Blocking,
    pub(crate) others: Option<Asked>,
}

#[derive(Default)]
struct Known {
    map: Option<Arc<Map>>,
    /// Ask again before the next request: a node failed us, or redirected us elsewhere.
    stale: bool,
}

/// Parses `redis+cluster://` and `rediss+cluster://` URLs. The user and password in the URL (or
/// `--username`, `REDLOCK_PASSWORD`, `--password-file`) log in to every node.
pub(crate) fn parse(
    url: &str,
    display: &str,
    credentials: (Option<&str>, Option<&str>),
    tls: &Tls,
) -> Result<Cluster, String> {
    let bad = |why: &str| format!("invalid server URL '{display}': {why}; {EXPECTED}");
    let HostList {
        secure,
        userinfo,
        rest,
        insecure,
    } = HostList::split(url, "rediss+cluster", tls.insecure, &bad)?;
    let hosts = match rest.split_once('/') {
        // A cluster has database 0 only.
        Some((hosts, "" | "0")) => hosts,
        Some(_) => return Err(bad("a cluster has no database but 0")),
        None => rest,
    };
    let mut seeds: Vec<Node> = Vec::new();
    for host in hosts.split(',') {
        if host.is_empty() {
            return Err(bad("empty node address"));
        }
        let node = Node::parse(host, DEFAULT_PORT)
            .ok_or_else(|| bad(&format!("'{host}' is not host[:port]")))?;
        if !seeds.contains(&node) {
            seeds.push(node);
        }
    }
    let plain_scheme = if secure { "rediss" } else { "redis" };
    let fragment = if insecure && secure { "#insecure" } else { "" };
    // The crate decodes the user and password (percent-escapes included).
    let userinfo = userinfo.map_or(String::new(), |u| format!("{u}@"));
    let template = format!("{plain_scheme}://{userinfo}{}/0{fragment}", seeds[0])
        .into_connection_info()
        .map_err(|e| bad(&super::failure::unusable_url(&e)))?;
    let settings = with_credentials(
        template.redis_settings().clone(),
        credentials.0,
        credentials.1,
    );
    let cluster = Cluster {
        seeds,
        template: template.set_redis_settings(settings),
        tls: Tls {
            insecure,
            ..tls.clone()
        },
        known: Mutex::new(Known::default()),
        answered: Mutex::new(None),
    };
    // Certificates are read and checked now, before anything is sent.
    client(&cluster.settings(&cluster.seeds[0]), &cluster.tls)
        .map_err(|e| unusable_tls_files(display, &e))?;
    Ok(cluster)
}

impl Cluster {
    /// Two URLs name the same cluster when they share a node: one cluster, one vote.
    pub(crate) fn same_as(&self, other: &Cluster) -> bool {
        self.seeds.iter().any(|seed| other.seeds.contains(seed))
    }

    /// What identifies the cluster: its seeds, sorted.
    pub(crate) fn identity(&self) -> String {
        let mut seeds: Vec<String> = self.seeds.iter().map(Node::to_string).collect();
        seeds.sort();
        format!("cluster:{}", seeds.join(","))
    }

    /// The settings of the first seed, as a plain server's would be.
    pub(crate) fn template(&self) -> &ConnectionInfo {
        &self.template
    }

    /// The node and slot that answered the last request for a key.
    pub(crate) fn answered(&self) -> Option<(String, u16)> {
        let answered = self.answered.lock().ok()?;
        answered
            .as_ref()
            .map(|(node, slot)| (node.to_string(), *slot))
    }

    pub(super) fn record(&self, node: &Node, slot: u16) {
        if let Ok(mut answered) = self.answered.lock() {
            *answered = Some((node.clone(), slot));
        }
    }

    fn settings(&self, node: &Node) -> ConnectionInfo {
        at(&self.template, &node.host, node.port)
    }

    /// Connects to `node` by `deadline`, which also bounds its first reads and writes; its
    /// set-up goes with its first request.
    pub(crate) fn connect(&self, node: &Node, deadline: BootInstant) -> RedisResult<Blocking> {
        self.dialer(node)?.open(deadline, false)
    }

    fn dialer(&self, node: &Node) -> RedisResult<Dialer> {
        Dialer::new(&self.settings(node), &self.tls)
    }

    /// The slot map: the one known, or a new one when none is known or the known one is stale
    /// (then also the connection it came over, to the node that gave it). A stale map that
    /// cannot be replaced is used all the same: a wrong guess costs a `MOVED`.
    pub(crate) fn map(&self, deadline: BootInstant) -> RedisResult<(Arc<Map>, Option<Given>)> {
        let (known, stale) = {
            let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            (known.map.clone(), known.stale)
        };
        match known {
            Some(map) if !stale => Ok((map, None)),
            known => match self.fetch(known.as_deref(), deadline) {
                Ok((map, given)) => {
                    let map = Arc::new(map);
                    let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
                    known.map = Some(map.clone());
                    known.stale = false;
                    Ok((map, Some(given)))
                }
                Err(err) => known.map(|map| (map, None)).ok_or(err),
            },
        }
    }

    /// After a `MOVED`: `slot` is `to`'s. When the map said otherwise, more may have moved (a
    /// failover moves all of a master's slots): ask for a new map before the next request.
    pub(crate) fn moved(&self, slot: u16, to: &Node) {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(map) = known.map.as_mut() {
            if map.master(slot) != Some(to) {
                Arc::make_mut(map).assign(slot, to.clone());
                known.stale = true;
            }
        }
    }

    /// A node did not answer: it may have failed, and its slots moved to a replica.
    pub(crate) fn suspect(&self) {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        known.stale = true;
    }

    /// Asks the seeds and the masters in `known` for the map, all at once, and takes the first
    /// map any of them gives, with the connection to that node (and the others', as they come:
    /// `Given::others`). A node that is down costs nothing while another answers; the whole
    /// costs the time to `deadline` at most.
    fn fetch(&self, known: Option<&Map>, deadline: BootInstant) -> RedisResult<(Map, Given)> {
        let mut nodes: Vec<Node> = known
            .map(|map| map.masters().into_iter().cloned().collect())
            .unwrap_or_default();
        for seed in &self.seeds {
            if !nodes.contains(seed) {
                nodes.push(seed.clone());
            }
        }
        if let [only] = nodes.as_slice() {
            return self
                .dialer(only)
                .and_then(|dialer| asked::ask(&dialer, only, deadline))
                .map(|(map, connection)| {
                    let node = only.clone();
                    (
                        map,
                        Given {
                            node,
                            connection,
                            others: None,
                        },
                    )
                })
                .map_err(|err| failed(vec![format!("{only}: {}", why(&err))], err));
        }
        let dialers = nodes.into_iter().map(|node| {
            let dialer = self.dialer(&node);
            (node, dialer)
        });
        let mut asked = Asked::start(dialers.collect(), deadline);
        let mut failures: Vec<String> = Vec::new();
        let mut last: Option<redis::RedisError> = None;
        while let Some((node, answer)) = asked.next(deadline) {
            match answer {
                Ok((map, connection)) => {
                    let others = Some(asked);
                    return Ok((
                        map,
                        Given {
                            node,
                            connection,
                            others,
                        },
                    ));
                }
                Err(err) => {
                    failures.push(format!("{node}: {}", why(&err)));
                    last = Some(err);
                }
            }
        }
        let silent = asked.len() - failures.len();
        if silent > 0 {
            failures.push(format!("{silent} node(s): {NO_ANSWER}"));
        }
        let err = last.unwrap_or_else(|| std::io::Error::from(std::io::ErrorKind::TimedOut).into());
        Err(failed(failures, err))
    }
}

/// The error for a map no node gave: a time-out when every node timed out (so that it reads
/// and counts as one), otherwise every node and why.
fn failed(failures: Vec<String>, last: redis::RedisError) -> redis::RedisError {
    if last.is_timeout() && failures.iter().all(|f| f.ends_with(NO_ANSWER)) {
        return last;
    }
    std::io::Error::other(format!(
        "no node gave the slot map: {}",
        failures.join("; ")
    ))
    .into()
}

const NO_ANSWER: &str = "no answer in time";

/// One node's failure in a few words; a node without cluster mode says what to write instead.
fn why(err: &redis::RedisError) -> String {
    if err.is_timeout() {
        return NO_ANSWER.into();
    }
    if err.is_connection_refusal() {
        return "connection refused".into();
    }
    let text = lowercase_first(first_line(&err.to_string()));
    if text.contains("cluster support disabled") {
        "not in cluster mode (cluster support disabled): name a single server as redis://host:port"
            .into()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::ConnectionAddr;

    fn cluster(url: &str) -> Result<Cluster, String> {
        parse(
            url,
            &super::super::url::redact(url),
            (None, None),
            &Tls::default(),
        )
    }

    #[test]
    fn urls_name_seeds_and_credentials() {
        let c = cluster("redis+cluster://u:pw@H1:7000,h2,[::1]:7002,h1:7000").unwrap();
        let seeds: Vec<String> = c.seeds.iter().map(Node::to_string).collect();
        assert_eq!(seeds, ["h1:7000", "h2:6379", "[::1]:7002"]);
        assert_eq!(c.template.redis_settings().password(), Some("pw"));
        assert_eq!(c.template.redis_settings().username(), Some("u"));
        assert_eq!(c.template.redis_settings().db(), 0);
        let tls = |c: &Cluster| matches!(c.template.addr(), ConnectionAddr::TcpTls { .. });
        assert!(!tls(&c));
        assert!(tls(&cluster("rediss+cluster://h1").unwrap()));
        assert!(cluster("redis+cluster://h1/").is_ok());
        assert!(cluster("redis+cluster://h1/0").is_ok());
    }

    #[test]
    fn the_same_cluster_twice_is_recognised() {
        let a = cluster("redis+cluster://h1:7000,h2:7001").unwrap();
        let b = cluster("redis+cluster://h3:7002,H2:7001").unwrap();
        let c = cluster("redis+cluster://h3:7002").unwrap();
        assert!(a.same_as(&b));
        assert!(!a.same_as(&c));
        assert_eq!(
            a.identity(),
            cluster("redis+cluster://h2:7001,h1:7000")
                .unwrap()
                .identity()
        );
    }

    #[test]
    fn bad_cluster_urls_say_what_is_expected_without_the_password() {
        for url in [
            "redis+cluster://:pw@",
            "redis+cluster://:pw@h1,,h2",
            "redis+cluster://:pw@h1/1",
            "redis+cluster://:pw@h1/x",
            "redis+cluster://:pw@h1?password=pw",
            "redis+cluster://:pw@h1:99999",
            "redis+cluster://:p/w@h1",
            "redis+cluster://:p#w@h1",
            "redis+cluster://:pw@h1#insecure",
        ] {
            let err = cluster(url).err().unwrap_or_else(|| panic!("{url} parsed"));
            assert!(err.contains(EXPECTED), "{err}");
            assert!(!err.contains("pw"), "{err}");
        }
    }
}
