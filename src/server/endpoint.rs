//! `Server`: one Redis server as the user named it, and where its connections go: a single
//! server, a Sentinel group's master, or a Redis Cluster's nodes. How each kind is reached is
//! the other files' (blocking.rs, sentinel/, cluster/, socket.rs); this one chooses among them.

use super::blocking::Dialer;
use super::client::{unusable_tls_files, with_credentials, Tls};
use super::cluster::{self, hash_slot, Cluster};
use super::sentinel::{self, Group, Master, SentinelCredentials};
use super::session::Session;
use super::socket::Reach;
use super::url::{identity, is_cluster_url, is_sentinel_url, plain_info, redact};
use crate::clock::BootInstant;
use crate::human;
use redis::{Connection, ConnectionAddr, ConnectionInfo, RedisResult};
use std::sync::Arc;
use std::time::Duration;

/// One Redis server as the user named it: how to connect, and how to show it safely.
#[derive(Clone)]
pub(crate) struct Server {
    /// The URL with any password replaced by `***`: the only form that is ever printed.
    pub(crate) display: String,
    /// Host, port, database (or socket path, database): two URLs with the same identity are the
    /// same server and vote once.
    pub(crate) identity: String,
    pub(crate) info: ConnectionInfo,
    pub(super) endpoint: Endpoint,
}

/// Where connections go.
#[derive(Clone)]
pub(super) enum Endpoint {
    /// One fixed server. Its dialer, and how a wire reaches it when one can, are made once
    /// here, so that certificates are read and checked before anything is sent.
    Direct(Box<Dialer>, Option<Reach>),
    /// The master the group's sentinels name (the one this run keeps: sentinel/group.rs).
    Sentinel(Arc<Group>),
    /// Whichever master serves the slot of the key a request is for.
    Cluster(Arc<Cluster>),
}

/// Credentials that come from the environment or a file rather than the URL.
#[derive(Clone, Default)]
pub(crate) struct Credentials {
    pub(crate) username: Option<String>,
    pub(crate) password: Option<String>,
    /// For the sentinels of `redis+sentinel://` groups, which may differ from the master's.
    pub(crate) sentinel: SentinelCredentials,
}

impl Credentials {
    /// The user and password for the servers that hold the keys (not the sentinels).
    fn servers(&self) -> (Option<&str>, Option<&str>) {
        (self.username.as_deref(), self.password.as_deref())
    }
}

impl Server {
    pub(crate) fn parse(url: &str, credentials: &Credentials, tls: &Tls) -> Result<Server, String> {
        let display = human::printable(&redact(url));
        if is_cluster_url(url) {
            let cluster = cluster::parse(url, &display, credentials.servers(), tls)?;
            return Ok(Server {
                display,
                identity: cluster.identity(),
                info: cluster.template().clone(),
                endpoint: Endpoint::Cluster(Arc::new(cluster)),
            });
        }
        if is_sentinel_url(url) {
            let group = sentinel::parse(
                url,
                &display,
                credentials.servers(),
                &credentials.sentinel,
                tls,
            )?;
            return Ok(Server {
                display,
                identity: group.identity(),
                info: group.master_settings().clone(),
                endpoint: Endpoint::Sentinel(Arc::new(group)),
            });
        }
        let info = plain_info(url, &display, tls.insecure)?;
        let (username, password) = credentials.servers();
        let settings = with_credentials(info.redis_settings().clone(), username, password);
        let identity = identity(&info, settings.db());
        let info = info.set_redis_settings(settings);
        let dialer = Dialer::new(&info, tls).map_err(|e| unusable_tls_files(&display, &e))?;
        let reach = Reach::of(&info, tls)
            .map_err(|why| unusable_tls_files(&display, &std::io::Error::other(why).into()))?;
        Ok(Server {
            display,
            identity,
            info,
            endpoint: Endpoint::Direct(Box::new(dialer), reach),
        })
    }

    /// How long a round may wait for this server's reply, given the per-server `timeout`:
    /// `timeout`, or for a Sentinel group whose master this run has not found yet, twice that,
    /// once for its sentinels to answer and once for the master they name. Finding it takes two
    /// round trips of its own before the master's two (connect, request), so a group 25 ms away
    /// each way (four round trips of 50 ms) could never answer within the default 200 ms.
    pub(crate) fn budget(&self, timeout: Duration) -> Duration {
        match &self.endpoint {
            Endpoint::Sentinel(group) if !group.found() => timeout * 2,
            _ => timeout,
        }
    }

    /// The connection the engine's rounds go out on, opened by `deadline`, which covers
    /// everything before the first command: TCP and the TLS handshake. For a Sentinel group,
    /// this is where its master is found (once a run: sentinel/group.rs), its sentinels' answer
    /// awaited for `timeout` at most; a cluster's connects to a node when the first request
    /// says which (`Session`).
    pub(crate) fn session(&self, deadline: BootInstant, timeout: Duration) -> RedisResult<Session> {
        match &self.endpoint {
            Endpoint::Direct(dialer, _) => dialer.open(deadline, false).map(Session::direct),
            Endpoint::Sentinel(group) => {
                let asking = deadline.min(BootInstant::now().add(timeout));
                Master::open(group.clone(), (asking, deadline)).map(Session::master)
            }
            Endpoint::Cluster(cluster) => Ok(Session::cluster(cluster.clone())),
        }
    }

    /// Opens a connection within `timeout` to where `key` is served: the server, a Sentinel
    /// group's master, or the master of `key`'s slot in a cluster; set up, for the redis crate
    /// to use as it is. How the wake-up subscriptions connect: a script counts the subscribers
    /// of the node it runs on.
    pub(crate) fn connect_near(&self, key: &str, timeout: Duration) -> RedisResult<Connection> {
        let deadline = BootInstant::now().add(timeout);
        match &self.endpoint {
            Endpoint::Direct(dialer, _) => dialer.open(deadline, false)?.into_connection(deadline),
            Endpoint::Sentinel(group) => {
                Master::open(group.clone(), (deadline, deadline))?.into_connection()
            }
            Endpoint::Cluster(cluster) => {
                let (map, given) = cluster.map(deadline)?;
                let node = map.master(hash_slot(key)).ok_or_else(|| {
                    std::io::Error::other("the cluster is down: no master serves the key's slot")
                })?;
                let connection = match given {
                    Some(given) if given.node == *node => given.connection,
                    _ => cluster.connect(node, deadline)?,
                };
                connection.into_connection(deadline)
            }
        }
    }

    /// Whether `former` has a master to reach: a Sentinel group's run that saw a failover.
    pub(crate) fn has_former(&self) -> bool {
        matches!(&self.endpoint, Endpoint::Sentinel(group) if group.has_former())
    }

    /// For a Sentinel group, a connection to each master this run used before the one it uses
    /// now, made by `deadline`: a release or an extension reaches them too, so that no copy of
    /// the lock is left where the sentinels once pointed (sentinel/group.rs).
    pub(crate) fn former(&self, deadline: BootInstant) -> Vec<Session> {
        match &self.endpoint {
            Endpoint::Sentinel(group) => group
                .former(deadline)
                .into_iter()
                .map(Session::direct)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Whether `other` reaches the same data, so that the two must vote once.
    pub(crate) fn same_as(&self, other: &Server) -> bool {
        match (&self.endpoint, &other.endpoint) {
            (Endpoint::Sentinel(a), Endpoint::Sentinel(b)) => a.same_as(b),
            (Endpoint::Cluster(a), Endpoint::Cluster(b)) => a.same_as(b),
            _ => self.identity == other.identity,
        }
    }

    /// For a Sentinel group, the master in use (`host:port`).
    pub(crate) fn master(&self) -> Option<String> {
        match &self.endpoint {
            Endpoint::Sentinel(group) => group.answered(),
            _ => None,
        }
    }

    /// For a cluster, the node that answered the last request for a key, and that key's slot.
    pub(crate) fn node(&self) -> Option<(String, u16)> {
        match &self.endpoint {
            Endpoint::Cluster(cluster) => cluster.answered(),
            _ => None,
        }
    }

    /// How one poll loop reaches this server (wire.rs), if it can: a single server over TCP,
    /// TLS or a Unix socket, in RESP2. Sentinel groups, clusters and RESP3 connect through the
    /// redis crate.
    pub(crate) fn reach(&self) -> Option<Reach> {
        match &self.endpoint {
            Endpoint::Direct(_, reach) => reach.clone(),
            _ => None,
        }
    }

    /// Whether it is a Redis Cluster, whose keys are named for hash slots.
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self.endpoint, Endpoint::Cluster(_))
    }

    pub(crate) fn is_tls(&self) -> bool {
        matches!(self.info.addr(), ConnectionAddr::TcpTls { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn identity_ignores_spelling_and_credentials() {
        let none = Credentials::default();
        let a = Server::parse("redis://LocalHost:7000/0", &none, &Tls::default()).unwrap();
        let b = Server::parse("redis://:pw@localhost:7000", &none, &Tls::default()).unwrap();
        let c = Server::parse("redis://localhost:7000/1", &none, &Tls::default()).unwrap();
        assert_eq!(a.identity, b.identity);
        assert_ne!(a.identity, c.identity);
        let unix = Server::parse("/tmp/redis.sock", &none, &Tls::default()).unwrap();
        assert_eq!(unix.identity, "unix:/tmp/redis.sock/0");
    }

    #[test]
    fn credentials_fill_in_but_never_override_the_url() {
        let creds = Credentials {
            username: Some("app".into()),
            password: Some("from-env".into()),
            ..Credentials::default()
        };
        let plain = Server::parse("redis://h:1", &creds, &Tls::default()).unwrap();
        assert_eq!(plain.info.redis_settings().password(), Some("from-env"));
        assert_eq!(plain.info.redis_settings().username(), Some("app"));
        let explicit = Server::parse("redis://u:url-pw@h:1", &creds, &Tls::default()).unwrap();
        assert_eq!(explicit.info.redis_settings().password(), Some("url-pw"));
    }

    #[test]
    fn query_parameters_the_client_would_ignore_are_refused() {
        let none = Credentials::default();
        let err = Server::parse("redis://127.0.0.1:1/?password=pw", &none, &Tls::default())
            .err()
            .unwrap();
        assert!(err.contains("'password'"), "{err}");
        assert!(err.contains("?password=***"), "{err}");
        assert!(!err.contains("pw"), "{err}");
        let resp3 = Server::parse("redis://127.0.0.1:1/?protocol=3", &none, &Tls::default());
        assert!(resp3.is_ok());
        let socket =
            Server::parse("unix:///tmp/r.sock?db=2&pass=pw", &none, &Tls::default()).unwrap();
        assert_eq!(socket.info.redis_settings().password(), Some("pw"));
        assert_eq!(socket.display, "unix:///tmp/r.sock?db=2&pass=***");
    }

    #[test]
    fn bad_urls_are_named_without_their_password() {
        let err = Server::parse("http://u:pw@host", &Credentials::default(), &Tls::default())
            .err()
            .unwrap();
        assert!(err.contains("http://u:***@host"), "{err}");
        assert!(!err.contains("pw@"), "{err}");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Marks both ends of a generated password, so that a message showing any end of it
        /// (a redaction that stopped at a '/' or '#' inside it) is caught.
        const START: &str = "pwSTART";
        const END: &str = "pwEND";

        /// A URL with a password where people write one, in every spelling around it: good
        /// and bad schemes, with or without a user, a password full of URL delimiters, and any
        /// host, port, path and query after it (parseable or not).
        fn url_with_password() -> impl Strategy<Value = (String, String)> {
            (
                prop::sample::select(vec![
                    "redis",
                    "rediss",
                    "unix",
                    "http",
                    "",
                    "redis:",
                    "redis+sentinel",
                    "rediss+sentinel",
                    "redis+cluster",
                    "rediss+cluster",
                ]),
                prop::option::of("[a-z_]{0,6}"),
                "[ -~\u{e9}\u{4e16}]{0,12}",
                prop_oneof![
                    "[a-z0-9.-]{0,12}(:[0-9]{0,6})?(/[0-9]{0,3})?",
                    "[ -~]{0,24}",
                    any::<String>(),
                ],
            )
                .prop_map(|(scheme, user, middle, rest)| {
                    let (password, userinfo) = match user {
                        Some(user) => {
                            let password = format!("{START}{middle}{END}");
                            (password.clone(), format!("{user}:{password}"))
                        }
                        // Alone, a password has no ':' (before one is the user name).
                        None => {
                            let password = format!("{START}{}{END}", middle.replace(':', ""));
                            (password.clone(), password)
                        }
                    };
                    (format!("{scheme}://{userinfo}@{rest}"), password)
                })
        }

        fn shows_password(text: &str) -> bool {
            text.contains(START) || text.contains(END)
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn a_password_in_any_url_is_never_shown((url, password) in url_with_password()) {
                prop_assert!(!shows_password(&redact(&url)), "{url:?}");
                let credentials = Credentials::default();
                let tls = Tls { insecure: true, ..Tls::default() };
                match Server::parse(&url, &credentials, &tls) {
                    Ok(server) => {
                        prop_assert!(!shows_password(&server.display), "{}", server.display);
                        prop_assert!(!shows_password(&server.identity), "{}", server.identity);
                        prop_assert!(!server.display.contains(['\n', '\r']));
                    }
                    Err(message) => {
                        prop_assert!(!shows_password(&message), "{message}");
                        prop_assert!(!message.contains(&password));
                        prop_assert!(!message.contains(['\n', '\r']), "{message:?}");
                    }
                }
            }

            #[test]
            fn any_text_is_a_server_or_one_line_naming_it(text in any::<String>()) {
                match Server::parse(&text, &Credentials::default(), &Tls::default()) {
                    Ok(server) => prop_assert!(!server.display.contains(['\n', '\r'])),
                    Err(message) => {
                        prop_assert!(message.starts_with("invalid server URL '"), "{message}");
                        prop_assert!(!message.contains(['\n', '\r']), "{message:?}");
                    }
                }
            }

            #[test]
            // No '=': a query value other than db, protocol or user may be a password.
            fn redact_changes_nothing_without_credentials(
                url in "(redis|rediss|unix)://[a-z0-9.-]{1,12}(:[0-9]{1,5})?(/[0-9a-z?&]{0,8})?"
            ) {
                prop_assert_eq!(redact(&url), url);
            }
        }
    }
}
