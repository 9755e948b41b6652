//! The alias guard: two URLs that reach one server must vote once. The same URL twice is one
//! server already (`Server::same_as`); this file also finds one server under two names, without
//! asking any server: hosts resolved as far as the host itself can tell (an address written out,
//! `localhost`, `/etc/hosts`), so `redis://127.0.0.1:P`, `redis://localhost:P` and
//! `redis://127.0.0.1:P/1` are one server, whose vote counts once, with a warning naming both.
//! A name only DNS knows is not looked up here (that would cost every run a round trip to the
//! resolver); `redlock doctor` compares every server's `run_id` and finds those too.
//!
//! A Unix socket says nothing of the TCP port of its server. Only when one is listed beside a
//! server on this host's loopback addresses, both are asked for their `run_id` (`INFO server`,
//! one round trip, in parallel) before anything else is sent: the one case where a run pays for
//! the guard, and a case that is nearly always this mistake.

use crate::server::Server;
use redis::ConnectionAddr;
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::time::Duration;

/// A server listed under another name of one that votes.
pub(crate) struct Alias {
    /// The alias as listed; it does not vote.
    pub(crate) server: Server,
    /// Which of the voting servers it is (an index into `Config::servers`).
    pub(crate) of: usize,
    /// Why they are one: `same address and port`, `the same run_id`.
    pub(crate) why: &'static str,
}

impl Alias {
    /// The warning every run prints for it.
    pub(crate) fn warning(&self, servers: &[Server]) -> String {
        format!(
            "{} and {} are one server ({}): it votes once; list independent servers (docs/doctor.md)",
            servers[self.of].display, self.server.display, self.why
        )
    }
}

/// Where a plain server listens, as far as this host can tell without asking anyone.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Endpoint {
    /// A TCP port at these addresses (empty when the host is a name only DNS knows: then only
    /// the same name, spelt alike, is the same host).
    Tcp {
        host: String,
        addresses: BTreeSet<IpAddr>,
        port: u16,
    },
    Unix(std::path::PathBuf),
}

impl Endpoint {
    fn of(server: &Server, hosts: &Hosts) -> Option<Endpoint> {
        match server.address()? {
            ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } => {
                let host = host
                    .trim_matches(['[', ']'])
                    .trim_end_matches('.')
                    .to_lowercase();
                Some(Endpoint::Tcp {
                    addresses: hosts.resolve(&host),
                    host,
                    port: *port,
                })
            }
            ConnectionAddr::Unix(path) => Some(Endpoint::Unix(path.clone())),
            _ => None,
        }
    }

    /// Same address and port: one listening socket, whatever the database.
    fn same(&self, other: &Endpoint) -> bool {
        match (self, other) {
            (
                Endpoint::Tcp {
                    host: a,
                    addresses: x,
                    port: p,
                },
                Endpoint::Tcp {
                    host: b,
                    addresses: y,
                    port: q,
                },
            ) => p == q && (a == b || !x.is_disjoint(y)),
            (Endpoint::Unix(a), Endpoint::Unix(b)) => a == b,
            _ => false,
        }
    }

    /// On this host's loopback: a server a Unix socket beside it may be.
    fn is_loopback(&self) -> bool {
        matches!(self, Endpoint::Tcp { addresses, .. }
            if !addresses.is_empty() && addresses.iter().all(IpAddr::is_loopback))
    }
}

/// `/etc/hosts`, read once and only when a host name needs it.
struct Hosts {
    text: Option<String>,
    read: bool,
}

impl Hosts {
    fn new() -> Hosts {
        Hosts {
            text: None,
            read: false,
        }
    }

    /// The addresses `host` (lowercase) has without asking DNS.
    fn resolve(&self, host: &str) -> BTreeSet<IpAddr> {
        if let Ok(address) = host.parse::<IpAddr>() {
            return BTreeSet::from([address]);
        }
        let mut addresses = BTreeSet::new();
        // RFC 6761: localhost and its subdomains are this host's loopback, whatever DNS says.
        if host == "localhost" || host.ends_with(".localhost") {
            addresses.insert(IpAddr::from([127, 0, 0, 1]));
            addresses.insert(IpAddr::from(std::net::Ipv6Addr::LOCALHOST));
        }
        if let Some(text) = &self.text {
            addresses.extend(in_hosts_file(text, host));
        }
        addresses
    }

    fn load(&mut self) {
        if !self.read {
            self.read = true;
            self.text = std::fs::read_to_string("/etc/hosts").ok();
        }
    }
}

/// The addresses `/etc/hosts` (its `text`) gives `host`.
fn in_hosts_file(text: &str, host: &str) -> Vec<IpAddr> {
    text.lines()
        .filter_map(|line| {
            let line = line.split('#').next().unwrap_or_default();
            let mut words = line.split_whitespace();
            let address = words.next()?.parse::<IpAddr>().ok()?;
            words
                .any(|name| name.eq_ignore_ascii_case(host))
                .then_some(address)
        })
        .collect()
}

/// `servers` as listed (the same URL twice already left out), split into those that vote and
/// the aliases of them.
pub(super) fn split(listed: Vec<Server>, timeout: Duration) -> (Vec<Server>, Vec<Alias>) {
    let mut hosts = Hosts::new();
    let named = |server: &Server| {
        matches!(server.address(), Some(ConnectionAddr::Tcp(host, _) | ConnectionAddr::TcpTls { host, .. })
            if host.trim_matches(['[', ']']).parse::<IpAddr>().is_err())
    };
    if listed.iter().filter(|s| s.address().is_some()).count() > 1 && listed.iter().any(named) {
        hosts.load();
    }
    let mut voting: Vec<(Server, Option<Endpoint>)> = Vec::new();
    let mut aliases = Vec::new();
    for server in listed {
        let endpoint = Endpoint::of(&server, &hosts);
        let of = endpoint.as_ref().and_then(|endpoint| {
            voting
                .iter()
                .position(|(_, known)| known.as_ref().is_some_and(|k| k.same(endpoint)))
        });
        match of {
            Some(of) => aliases.push(Alias {
                server,
                of,
                why: "same address and port",
            }),
            None => voting.push((server, endpoint)),
        }
    }
    let sockets = positions(&voting, |e| matches!(e, Endpoint::Unix(_)));
    let local = positions(&voting, Endpoint::is_loopback);
    if sockets.is_empty() || local.is_empty() {
        return (
            voting.into_iter().map(|(server, _)| server).collect(),
            aliases,
        );
    }
    let asked: Vec<usize> = sockets.iter().chain(&local).copied().collect();
    let ids = run_ids(asked.iter().map(|&i| &voting[i].0), timeout);
    let (socket_ids, local_ids) = ids.split_at(sockets.len());
    // (socket, the loopback server it is), by index into `voting`.
    let twins: Vec<(usize, usize)> = sockets
        .iter()
        .zip(socket_ids)
        .filter_map(|(&socket, id)| {
            let id = id.as_ref()?;
            let at = local_ids
                .iter()
                .position(|other| other.as_ref() == Some(id))?;
            Some((socket, local[at]))
        })
        .collect();
    let twin_of = |i: usize| twins.iter().find(|(s, _)| *s == i).map(|(_, t)| *t);
    // What was an alias of a socket that is itself an alias is one of its twin's.
    for alias in &mut aliases {
        alias.of = twin_of(alias.of).unwrap_or(alias.of);
    }
    for &(socket, of) in &twins {
        aliases.push(Alias {
            server: voting[socket].0.clone(),
            of,
            why: "the same run_id",
        });
    }
    // Renumber: the voting servers lose the sockets taken out.
    for alias in &mut aliases {
        alias.of -= twins.iter().filter(|(s, _)| *s < alias.of).count();
    }
    let voting = voting
        .into_iter()
        .enumerate()
        .filter(|(i, _)| twin_of(*i).is_none())
        .map(|(_, (server, _))| server)
        .collect();
    (voting, aliases)
}

fn positions(
    voting: &[(Server, Option<Endpoint>)],
    test: impl Fn(&Endpoint) -> bool,
) -> Vec<usize> {
    voting
        .iter()
        .enumerate()
        .filter_map(|(i, (_, endpoint))| endpoint.as_ref().is_some_and(&test).then_some(i))
        .collect()
}

/// Each server's `run_id`, all asked at once within `timeout`; `None` where it did not say.
fn run_ids<'a>(
    servers: impl Iterator<Item = &'a Server>,
    timeout: Duration,
) -> Vec<Option<String>> {
    std::thread::scope(|scope| {
        let asking: Vec<_> = servers
            .map(|server| scope.spawn(move || run_id(server, timeout)))
            .collect();
        asking
            .into_iter()
            .map(|asked| asked.join().ok().flatten())
            .collect()
    })
}

fn run_id(server: &Server, timeout: Duration) -> Option<String> {
    let mut connection = server.connect_near("", timeout).ok()?;
    connection.set_read_timeout(Some(timeout)).ok()?;
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut connection)
        .ok()?;
    crate::info::field(&info, "run_id").map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{Credentials, Tls};

    fn servers(urls: &[&str]) -> Vec<Server> {
        urls.iter()
            .map(|url| Server::parse(url, &Credentials::default(), &Tls::default()).unwrap())
            .collect()
    }

    fn shown(servers: &[Server]) -> Vec<&str> {
        servers.iter().map(|s| s.display.as_str()).collect()
    }

    #[test]
    fn one_address_and_port_under_several_names_votes_once() {
        let (voting, aliases) = split(
            servers(&[
                "redis://127.0.0.1:7001",
                "redis://LOCALHOST:7001",
                "redis://127.0.0.1:7001/1",
                "redis://127.0.0.1:7002",
                "redis://localhost.:7002/3",
                "redis://[::1]:7002",
                "redis://r1.example:7003",
                "redis://r2.example:7003",
            ]),
            Duration::from_millis(1),
        );
        assert_eq!(
            shown(&voting),
            [
                "redis://127.0.0.1:7001",
                "redis://127.0.0.1:7002",
                "redis://[::1]:7002",
                "redis://r1.example:7003",
                "redis://r2.example:7003"
            ]
        );
        let named: Vec<(&str, usize)> = aliases
            .iter()
            .map(|a| (a.server.display.as_str(), a.of))
            .collect();
        assert_eq!(
            named,
            [
                ("redis://LOCALHOST:7001", 0),
                ("redis://127.0.0.1:7001/1", 0),
                ("redis://localhost.:7002/3", 1)
            ]
        );
        let warning = aliases[0].warning(&voting);
        assert!(warning.contains("redis://127.0.0.1:7001 and redis://LOCALHOST:7001 are one server (same address and port)"), "{warning}");
    }

    #[test]
    fn hosts_file_names_are_read_as_the_resolver_reads_them() {
        let text = "# comment\n10.0.0.5  r1 r1.lan # the first\n::1 ip6-localhost\nbad line\n";
        assert_eq!(in_hosts_file(text, "r1.lan"), [IpAddr::from([10, 0, 0, 5])]);
        assert_eq!(in_hosts_file(text, "R1"), [IpAddr::from([10, 0, 0, 5])]);
        assert!(in_hosts_file(text, "first").is_empty());
        assert_eq!(
            in_hosts_file(text, "ip6-localhost"),
            [IpAddr::from(std::net::Ipv6Addr::LOCALHOST)]
        );
    }
}
