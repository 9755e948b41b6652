//! Sentinel-managed groups as one server: parsing `redis+sentinel://` URLs, and finding the
//! group's current master each time we connect (every sentinel asked at once, the master's own
//! `ROLE` checked before anything is sent to it).

use super::client::{client, time_left, with_credentials, Tls};
use super::url::HostList;
use crate::clock::BootInstant;
use crate::human::{first_line, lowercase_first};
use redis::{Client, Connection, ConnectionAddr, ConnectionInfo, IntoConnectionInfo, RedisResult};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

/// The port sentinels listen on unless the URL says otherwise.
const DEFAULT_PORT: u16 = 26379;

/// Stack of a thread that asks one sentinel: the redis client needs little.
const ASKER_STACK: usize = 256 * 1024;

/// The URL forms, for error messages.
const EXPECTED: &str =
    "expected redis+sentinel://[user[:password]@]host[:port][,host[:port]…]/MASTER_NAME[/db]";

/// Credentials for the sentinels themselves, which often differ from the master's.
#[derive(Clone, Default)]
pub(crate) struct SentinelCredentials {
    pub(crate) username: Option<String>,
    pub(crate) password: Option<String>,
}

impl SentinelCredentials {
    /// `REDLOCK_SENTINEL_USERNAME` and `REDLOCK_SENTINEL_PASSWORD`: environment only, like
    /// `REDLOCK_PASSWORD`, so that no password is ever in argv.
    pub(crate) fn from_env() -> SentinelCredentials {
        let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        SentinelCredentials {
            username: var("REDLOCK_SENTINEL_USERNAME"),
            password: var("REDLOCK_SENTINEL_PASSWORD"),
        }
    }
}

/// One Sentinel-managed group: its sentinels, the master's name, and how to log in to a master.
pub(crate) struct Group {
    master_name: String,
    /// `host:port` of each sentinel, for messages and for recognising the same group twice.
    addresses: Vec<String>,
    sentinels: Vec<Client>,
    /// The master's settings (db, user, password); the address is filled in once resolved.
    master: ConnectionInfo,
    tls: Tls,
    /// The master that last confirmed its role, as `host:port`.
    answered: Mutex<Option<String>>,
}

pub(crate) fn is_sentinel_url(url: &str) -> bool {
    url.starts_with("redis+sentinel://") || url.starts_with("rediss+sentinel://")
}

/// Parses `redis+sentinel://` and `rediss+sentinel://` URLs. The user and password in the URL
/// (or `--username`, `REDLOCK_PASSWORD`, `--password-file`) are the master's; the sentinels get
/// `sentinel` (from `REDLOCK_SENTINEL_*`).
pub(crate) fn parse(
    url: &str,
    display: &str,
    master: (Option<&str>, Option<&str>),
    sentinel: &SentinelCredentials,
    tls: &Tls,
) -> Result<Group, String> {
    let bad = |why: &str| format!("invalid server URL '{display}': {why}; {EXPECTED}");
    let HostList {
        secure,
        userinfo,
        rest,
        insecure,
    } = HostList::split(url, "rediss+sentinel", tls.insecure, &bad)?;
    let (hosts, path) = rest.split_once('/').ok_or_else(|| bad("no master name"))?;
    let mut parts = path.split('/');
    let master_name = parts.next().unwrap_or("").to_string();
    if master_name.is_empty() {
        return Err(bad("no master name"));
    }
    let db = match parts.next() {
        None | Some("") => "0",
        Some(db) if db.parse::<i64>().is_ok() => db,
        Some(db) => return Err(bad(&format!("database '{db}' is not a number"))),
    };
    if parts.any(|extra| !extra.is_empty()) {
        return Err(bad("too many path segments"));
    }
    let plain_scheme = if secure { "rediss" } else { "redis" };
    let fragment = if insecure && secure { "#insecure" } else { "" };
    let parse_one = |text: String| {
        text.into_connection_info()
            .map_err(|e| bad(&lowercase_first(first_line(&e.to_string()))))
    };
    let mut addresses = Vec::new();
    let mut sentinels = Vec::new();
    for host in hosts.split(',') {
        if host.is_empty() {
            return Err(bad("empty sentinel address"));
        }
        let address = if has_port(host) {
            host.to_lowercase()
        } else {
            format!("{}:{DEFAULT_PORT}", host.to_lowercase())
        };
        if addresses.contains(&address) {
            continue;
        }
        let info = parse_one(format!("{plain_scheme}://{address}{fragment}"))?;
        let settings = with_credentials(
            info.redis_settings().clone(),
            sentinel.username.as_deref(),
            sentinel.password.as_deref(),
        );
        let info = info.set_redis_settings(settings);
        sentinels.push(
            client(&info, tls).map_err(|e| bad(&lowercase_first(first_line(&e.to_string()))))?,
        );
        addresses.push(address);
    }
    // The crate decodes the master's user and password (percent-escapes included).
    let userinfo = userinfo.map_or(String::new(), |u| format!("{u}@"));
    let template = parse_one(format!(
        "{plain_scheme}://{userinfo}{}/{db}{fragment}",
        addresses[0]
    ))?;
    let settings = with_credentials(template.redis_settings().clone(), master.0, master.1);
    Ok(Group {
        master_name,
        addresses,
        sentinels,
        master: template.set_redis_settings(settings),
        tls: Tls {
            insecure,
            ..tls.clone()
        },
        answered: Mutex::new(None),
    })
}

/// Undoes the comma split of `-s`/`REDLOCK_SERVERS` inside a Sentinel URL's or a cluster URL's
/// host list: `redis+sentinel://h1`, `h2:26380/mymaster` become one URL again. A piece continues
/// the one before it only while that one is a Sentinel URL without its master name yet, or a
/// cluster URL without a path, and only when the piece has no scheme of its own.
pub(crate) fn rejoin_host_lists(pieces: &[String]) -> Vec<String> {
    let mut urls: Vec<String> = Vec::new();
    for piece in pieces.iter().map(|p| p.trim()) {
        match urls.last_mut() {
            Some(open)
                if (is_sentinel_url(open) || super::cluster::is_cluster_url(open))
                    && !open.split_once("://").is_some_and(|(_, r)| r.contains('/'))
                    && !piece.contains("://")
                    && !piece.starts_with('/') =>
            {
                open.push(',');
                open.push_str(piece);
            }
            _ => urls.push(piece.to_string()),
        }
    }
    urls
}

/// `host:port`, `[v6]:port` versus `host`, `[v6]`.
fn has_port(host: &str) -> bool {
    match host.rfind(']') {
        Some(close) => host[close..].contains(':'),
        None => host.contains(':'),
    }
}

impl Group {
    /// Two URLs name the same group when they name the same master and share a sentinel: they
    /// would reach the same master and must vote once.
    pub(crate) fn same_as(&self, other: &Group) -> bool {
        self.master_name == other.master_name
            && self.master.redis_settings().db() == other.master.redis_settings().db()
            && self.addresses.iter().any(|a| other.addresses.contains(a))
    }

    /// What identifies the group: the master name, the database and the sentinels, sorted.
    pub(crate) fn identity(&self) -> String {
        let mut addresses = self.addresses.clone();
        addresses.sort();
        format!(
            "sentinel:{}/{}@{}",
            self.master_name,
            self.master.redis_settings().db(),
            addresses.join(",")
        )
    }

    /// The master's settings; its address is the first sentinel's until one is resolved.
    pub(crate) fn master_settings(&self) -> &ConnectionInfo {
        &self.master
    }

    /// The master that answered last, as `host:port`.
    pub(crate) fn answered(&self) -> Option<String> {
        self.answered.lock().ok().and_then(|a| a.clone())
    }

    /// Connects to the group's current master within `timeout`: every sentinel is asked at once;
    /// each master named is tried as its answer arrives, and used only if its `ROLE` says
    /// master, so a stale sentinel or a demoted master never gets our writes. A stopped sentinel
    /// costs nothing while another answers; the whole costs `timeout` at most.
    pub(crate) fn connect(&self, timeout: Duration) -> RedisResult<Connection> {
        let deadline = BootInstant::now().add(timeout);
        let (answers, asked) = mpsc::channel();
        for (index, sentinel) in self.sentinels.iter().enumerate() {
            let sentinel = sentinel.clone();
            let name = self.master_name.clone();
            let answers = answers.clone();
            // Not joined: a black-holed sentinel's thread ends by its own timeout, later.
            let _ = std::thread::Builder::new()
                .stack_size(ASKER_STACK)
                .spawn(move || {
                    let _ = answers.send((index, ask(&sentinel, &name, timeout)));
                });
        }
        drop(answers);
        let mut tried: Vec<(String, u16)> = Vec::new();
        let mut unknown = 0;
        let mut failures: Vec<String> = Vec::new();
        let mut heard = 0;
        while heard < self.sentinels.len() {
            let left = deadline.remaining();
            let Ok((index, answer)) = asked.recv_timeout(left) else {
                break;
            };
            heard += 1;
            let sentinel = &self.addresses[index];
            match answer {
                Ok(None) => unknown += 1,
                Ok(Some(master)) if tried.contains(&master) => {}
                Ok(Some((host, port))) => {
                    tried.push((host.clone(), port));
                    match self.connect_master(&host, port, deadline) {
                        Ok(connection) => {
                            if let Ok(mut answered) = self.answered.lock() {
                                *answered = Some(format!("{host}:{port}"));
                            }
                            return Ok(connection);
                        }
                        Err(err) => failures.push(format!("master {host}:{port}: {}", why(&err))),
                    }
                }
                Err(err) => failures.push(format!("sentinel {sentinel}: {}", why(&err))),
            }
        }
        let message = if unknown == self.sentinels.len() {
            format!(
                "no sentinel knows a master named '{}'; check the name after the hosts in the URL",
                self.master_name
            )
        } else if failures.is_empty() && unknown == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::TimedOut).into());
        } else {
            if unknown > 0 {
                failures.push(format!(
                    "{unknown} sentinel(s) know no master named '{}'",
                    self.master_name
                ));
            }
            if heard < self.sentinels.len() {
                failures.push(format!(
                    "{} sentinel(s): no answer in time",
                    self.sentinels.len() - heard
                ));
            }
            format!(
                "no master for '{}': {}",
                self.master_name,
                failures.join(", ")
            )
        };
        Err(std::io::Error::other(message).into())
    }

    fn connect_master(
        &self,
        host: &str,
        port: u16,
        deadline: BootInstant,
    ) -> RedisResult<Connection> {
        let addr = match self.master.addr() {
            ConnectionAddr::TcpTls { insecure, .. } => ConnectionAddr::TcpTls {
                host: host.to_string(),
                port,
                insecure: *insecure,
                tls_params: None,
            },
            _ => ConnectionAddr::Tcp(host.to_string(), port),
        };
        let info = self.master.clone().set_addr(addr);
        let client = client(&info, &self.tls)?;
        let mut connection = client.get_connection_with_timeout(time_left(deadline)?)?;
        connection.set_read_timeout(Some(time_left(deadline)?))?;
        connection.set_write_timeout(Some(time_left(deadline)?))?;
        let role: Vec<redis::Value> = redis::cmd("ROLE").query(&mut connection)?;
        match role.first() {
            Some(redis::Value::BulkString(role)) if role.as_slice() == b"master" => Ok(connection),
            Some(redis::Value::BulkString(role)) => Err(std::io::Error::other(format!(
                "is a {}, not the master",
                String::from_utf8_lossy(role)
            ))
            .into()),
            _ => Err(std::io::Error::other("did not say its role").into()),
        }
    }
}

/// One sentinel's answer: the master's address, or `None` when it knows no such master.
fn ask(
    sentinel: &Client,
    master_name: &str,
    timeout: Duration,
) -> RedisResult<Option<(String, u16)>> {
    let mut connection = sentinel.get_connection_with_timeout(timeout)?;
    connection.set_read_timeout(Some(timeout))?;
    connection.set_write_timeout(Some(timeout))?;
    let answer: Option<(String, String)> = redis::cmd("SENTINEL")
        .arg("get-master-addr-by-name")
        .arg(master_name)
        .query(&mut connection)?;
    answer
        .map(|(host, port)| match port.parse() {
            Ok(port) => Ok((host, port)),
            Err(_) => Err(std::io::Error::other(format!("answered port '{port}'")).into()),
        })
        .transpose()
}

/// One failure in a few words; an authentication failure says where the password comes from.
fn why(err: &redis::RedisError) -> String {
    if err.is_timeout() {
        return "no answer in time".into();
    }
    if err.is_connection_refusal() {
        return "connection refused".into();
    }
    let text = lowercase_first(first_line(&err.to_string()));
    if text.contains("auth") || err.code() == Some("NOAUTH") || err.code() == Some("WRONGPASS") {
        format!("{text} (sentinels take REDLOCK_SENTINEL_PASSWORD, masters the URL's password or REDLOCK_PASSWORD)")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(url: &str) -> Result<Group, String> {
        parse(
            url,
            &super::super::url::redact(url),
            (None, None),
            &SentinelCredentials::default(),
            &Tls::default(),
        )
    }

    #[test]
    fn urls_name_sentinels_master_and_database() {
        let g = group("redis+sentinel://u:pw@h1,H2:26380,[::1],h1:26379/mymaster/3").unwrap();
        assert_eq!(g.addresses, ["h1:26379", "h2:26380", "[::1]:26379"]);
        assert_eq!(g.sentinels.len(), 3);
        assert_eq!(g.master_name, "mymaster");
        assert_eq!(g.master.redis_settings().db(), 3);
        assert_eq!(g.master.redis_settings().password(), Some("pw"));
        assert_eq!(g.master.redis_settings().username(), Some("u"));
        let tls = |g: &Group| matches!(g.master.addr(), ConnectionAddr::TcpTls { .. });
        assert!(!tls(&g));
        assert!(tls(&group("rediss+sentinel://h1/m").unwrap()));
    }

    #[test]
    fn comma_split_host_lists_are_joined_again() {
        let pieces: Vec<String> = [
            "redis://a:1",
            "redis+sentinel://h1",
            " h2:26380",
            "h3/m",
            "rediss+sentinel://:pw@h4/n",
            "/tmp/r.sock",
            "h5",
            "redis+cluster://c1:7000",
            "c2:7001",
            "redis://a:2",
        ]
        .map(String::from)
        .into();
        assert_eq!(
            rejoin_host_lists(&pieces),
            [
                "redis://a:1",
                "redis+sentinel://h1,h2:26380,h3/m",
                "rediss+sentinel://:pw@h4/n",
                "/tmp/r.sock",
                "h5",
                "redis+cluster://c1:7000,c2:7001",
                "redis://a:2"
            ]
        );
    }

    #[test]
    fn the_same_group_twice_is_recognised() {
        let a = group("redis+sentinel://h1,h2/m").unwrap();
        let b = group("redis+sentinel://h2:26379,h3/m/0").unwrap();
        let other_name = group("redis+sentinel://h1,h2/n").unwrap();
        let other_db = group("redis+sentinel://h1,h2/m/1").unwrap();
        assert!(a.same_as(&b));
        assert!(!a.same_as(&other_name));
        assert!(!a.same_as(&other_db));
        assert_eq!(
            a.identity(),
            group("redis+sentinel://h2,h1/m").unwrap().identity()
        );
    }

    #[test]
    fn bad_sentinel_urls_say_what_is_expected_without_the_password() {
        for url in [
            "redis+sentinel://:pw@h1",
            "redis+sentinel://:pw@h1/",
            "redis+sentinel://:pw@h1,,h2/m",
            "redis+sentinel://:pw@h1/m/x",
            "redis+sentinel://:pw@h1/m?password=pw",
            "redis+sentinel://:pw@h1:99999/m",
            "redis+sentinel://:p/w@h1/m",
            "redis+sentinel://:p#w@h1/m",
        ] {
            let err = group(url).err().unwrap_or_else(|| panic!("{url} parsed"));
            assert!(err.contains(EXPECTED), "{err}");
            assert!(!err.contains("pw"), "{err}");
        }
    }
}
