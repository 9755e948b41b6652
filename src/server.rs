//! Server addresses: parsing `redis://`, `rediss://` and Sentinel URLs, preparing each server's
//! client (credentials and TLS settings included), and showing servers without their password.

mod sentinel;

use crate::human;
use redis::{
    Client, ClientTlsConfig, Connection, ConnectionAddr, ConnectionInfo, IntoConnectionInfo,
    RedisConnectionInfo, RedisResult,
};
use sentinel::Group;
pub(crate) use sentinel::{rejoin_host_lists, SentinelCredentials};
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
    target: Target,
}

/// Where connections go.
#[derive(Clone)]
enum Target {
    /// One fixed server. The client is built once here, so that certificates are read and
    /// checked before anything is sent.
    Direct(Box<Client>),
    /// Whichever master the group's sentinels name at the time of connecting.
    Sentinel(Arc<Group>),
}

/// TLS settings for every `rediss://` server, as PEM bytes already read from their files.
#[derive(Clone, Default)]
pub(crate) struct Tls {
    pub(crate) ca: Option<Vec<u8>>,
    /// Client certificate chain and private key.
    pub(crate) client: Option<(Vec<u8>, Vec<u8>)>,
    /// Accept any certificate (`--tls-insecure`).
    pub(crate) insecure: bool,
}

/// Credentials that come from the environment or a file rather than the URL.
#[derive(Clone, Default)]
pub(crate) struct Credentials {
    pub(crate) username: Option<String>,
    pub(crate) password: Option<String>,
    /// For the sentinels of `redis+sentinel://` groups, which may differ from the master's.
    pub(crate) sentinel: SentinelCredentials,
}

impl Server {
    pub(crate) fn parse(url: &str, credentials: &Credentials, tls: &Tls) -> Result<Server, String> {
        let display = human::printable(&redact(url));
        if sentinel::is_sentinel_url(url) {
            let group = sentinel::parse(
                url,
                &display,
                (
                    credentials.username.as_deref(),
                    credentials.password.as_deref(),
                ),
                &credentials.sentinel,
                tls,
            )?;
            return Ok(Server {
                display,
                identity: group.identity(),
                info: group.master_settings().clone(),
                target: Target::Sentinel(Arc::new(group)),
            });
        }
        let mut url = normalize(url);
        check_query(&display)?;
        if tls.insecure && url.starts_with("rediss://") && !url.contains('#') {
            // The redis crate's spelling of "do not verify the certificate".
            url.push_str("#insecure");
        }
        let info = url
            .as_str()
            .into_connection_info()
            .map_err(|e| {
                format!(
                    "invalid server URL '{display}': {}",
                    human::printable(first_line(&e.to_string()))
                )
            })
            .and_then(|info| {
                if url.contains('#') && !url.starts_with("rediss") {
                    // A '#' in a password is easy to type and silently truncates the URL.
                    Err(format!(
                        "invalid server URL '{display}': '#' must be written as %23"
                    ))
                } else {
                    Ok(info)
                }
            })?;
        let settings = with_credentials(
            info.redis_settings().clone(),
            credentials.username.as_deref(),
            credentials.password.as_deref(),
        );
        let db = settings.db();
        let identity = match info.addr() {
            ConnectionAddr::Tcp(host, port) => format!("{}:{port}/{db}", host.to_lowercase()),
            ConnectionAddr::TcpTls { host, port, .. } => {
                format!("{}:{port}/{db}", host.to_lowercase())
            }
            ConnectionAddr::Unix(path) => format!("unix:{}/{db}", path.display()),
            other => format!("{other}/{db}"),
        };
        let info = info.set_redis_settings(settings);
        let client = client(&info, tls).map_err(|e| {
            format!(
                "cannot use the TLS files for '{display}': {}; expected PEM certificates (--tls-ca, --tls-cert) and a PEM private key (--tls-key)",
                crate::human::lowercase_first(first_line(&e.to_string()))
            )
        })?;
        Ok(Server {
            display,
            identity,
            info,
            target: Target::Direct(Box::new(client)),
        })
    }

    /// Opens a connection within `timeout`, which covers everything before the first command:
    /// TCP, the TLS handshake and AUTH. The one way the engine and the wake-up subscriptions
    /// connect, so that every server kind (plain, TLS, Sentinel group) is reached the same way.
    /// For a Sentinel group, this is where its current master is found.
    pub(crate) fn connect(&self, timeout: Duration) -> RedisResult<Connection> {
        match &self.target {
            Target::Direct(client) => client.get_connection_with_timeout(timeout),
            Target::Sentinel(group) => group.connect(timeout),
        }
    }

    /// Whether a connection may be kept for the next round. A Sentinel group's is not: its
    /// master can change between rounds (a failover while the old master still accepts writes),
    /// so every round asks the sentinels again. A round's follow-up (the cleanup after a failed
    /// attempt) still goes out on the connection that carried the round, to the same master.
    pub(crate) fn keeps_connections(&self) -> bool {
        matches!(self.target, Target::Direct(_))
    }

    /// Whether `other` reaches the same data, so that the two must vote once.
    pub(crate) fn same_as(&self, other: &Server) -> bool {
        match (&self.target, &other.target) {
            (Target::Sentinel(a), Target::Sentinel(b)) => a.same_as(b),
            _ => self.identity == other.identity,
        }
    }

    /// For a Sentinel group, the master that answered last (`host:port`).
    pub(crate) fn master(&self) -> Option<String> {
        match &self.target {
            Target::Sentinel(group) => group.answered(),
            Target::Direct(_) => None,
        }
    }

    pub(crate) fn is_tls(&self) -> bool {
        matches!(self.info.addr(), ConnectionAddr::TcpTls { .. })
    }
}

/// `settings` with the user and password from the environment or a file, where the URL gave
/// none: a URL's own credentials always win.
pub(crate) fn with_credentials(
    settings: RedisConnectionInfo,
    username: Option<&str>,
    password: Option<&str>,
) -> RedisConnectionInfo {
    let mut settings = settings.set_skip_set_lib_name();
    if settings.username().is_none() {
        if let Some(username) = username {
            settings = settings.set_username(username);
        }
    }
    if settings.password().is_none() {
        if let Some(password) = password {
            settings = settings.set_password(password);
        }
    }
    settings
}

pub(crate) fn client(info: &ConnectionInfo, tls: &Tls) -> redis::RedisResult<Client> {
    let is_tls = matches!(info.addr(), ConnectionAddr::TcpTls { .. });
    if !is_tls || (tls.ca.is_none() && tls.client.is_none()) {
        // Plain servers, and rediss:// servers checked against the system's trust store.
        return Client::open(info.clone());
    }
    Client::build_with_tls(
        info.clone(),
        redis::TlsCertificates {
            client_tls: tls.client.as_ref().map(|(cert, key)| ClientTlsConfig {
                client_cert: cert.clone(),
                client_key: key.clone(),
            }),
            root_cert: tls.ca.clone(),
        },
    )
}

/// Accepts `unix:///path` and a bare `/path/to/redis.sock` as Unix socket forms.
fn normalize(url: &str) -> String {
    if url.starts_with('/') {
        format!("unix://{url}")
    } else {
        url.to_string()
    }
}

pub(crate) fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// Replaces the password of a URL (`scheme://user:password@host`) with `***`. Works on any
/// string, parseable or not, because it is also used on URLs we are about to reject.
///
/// Everything up to the *last* `@` counts as user and password: people paste passwords with
/// `/`, `?`, `#` or `@` in them unescaped, and hiding too much of a malformed URL is better
/// than showing part of a password. Query values that may be secret (`?password=`) are hidden
/// too, and so is a bare socket path's `?pass=`.
pub(crate) fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        // A bare socket path may still carry `?pass=`.
        return redact_query(url);
    };
    let authority_start = scheme_end + 3;
    let Some(at) = url[authority_start..].rfind('@') else {
        return format!(
            "{}{}",
            &url[..authority_start],
            redact_query(&url[authority_start..])
        );
    };
    let userinfo = &url[authority_start..authority_start + at];
    let redacted_userinfo = match userinfo.split_once(':') {
        // A user name with an '@' in it may as well be a password followed by a host.
        Some((user, _)) if !user.contains('@') => format!("{user}:***"),
        _ if userinfo.is_empty() => String::new(),
        // `redis://secret@host` is how many clients spell a password without a user.
        _ => "***".to_string(),
    };
    format!(
        "{}{}{}",
        &url[..authority_start],
        redacted_userinfo,
        redact_query(&url[authority_start + at..])
    )
}

/// Query parameters whose values are never secret; every other value is shown as `***`, since
/// `?password=…` (redis-py's spelling) and `?pass=…` (the redis crate's, for sockets) are common.
const PLAIN_PARAMETERS: [&str; 3] = ["db", "protocol", "user"];

/// `path?a=1&password=x#frag` with every value not in `PLAIN_PARAMETERS` replaced by `***`.
fn redact_query(path_and_after: &str) -> String {
    let Some(question) = path_and_after.find('?') else {
        return path_and_after.to_string();
    };
    let (path, after) = path_and_after.split_at(question + 1);
    let (query, fragment) = after.split_at(after.find('#').unwrap_or(after.len()));
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if !PLAIN_PARAMETERS.contains(&name) => format!("{name}=***"),
            _ => pair.to_string(),
        })
        .collect();
    format!("{path}{}{fragment}", pairs.join("&"))
}

/// Refuses query parameters the redis crate would silently ignore (`?password=` among them,
/// which would otherwise end in NOAUTH from the server): `protocol` for TCP URLs, and `db`,
/// `user`, `pass` and `protocol` for Unix sockets. Reads the URL's redacted `display`.
fn check_query(display: &str) -> Result<(), String> {
    // The redacted form: its user information cannot be mistaken for a query.
    let without_fragment = display.split('#').next().unwrap_or(display);
    let Some((_, query)) = without_fragment.split_once('?') else {
        return Ok(());
    };
    let socket = ["unix:", "redis+unix:", "/"];
    let known: &[&str] = if socket.iter().any(|form| display.starts_with(form)) {
        &["db", "user", "pass", "protocol"]
    } else {
        &["protocol"]
    };
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let name = pair.split('=').next().unwrap_or(pair);
        if !known.contains(&name) {
            let hint = if name.contains("pass") {
                " (a password goes in the URL as redis://:PASSWORD@host, or in REDLOCK_PASSWORD)"
            } else {
                ""
            };
            return Err(format!(
                "invalid server URL '{display}': unknown query parameter '{name}'; expected only {}{hint}",
                known.join(", ")
            ));
        }
    }
    Ok(())
}

/// What is left until `deadline`, as a time-out error once nothing is: every step of a
/// connection (sentinel query, connect, read, write) is bounded by the same deadline.
pub(crate) fn time_left(deadline: crate::clock::BootInstant) -> redis::RedisResult<Duration> {
    let left = deadline.remaining();
    if left.is_zero() {
        Err(std::io::Error::from(std::io::ErrorKind::TimedOut).into())
    } else {
        Ok(left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_passwords_in_every_form() {
        assert_eq!(
            redact("redis://user:s3cret@host:6379/0"),
            "redis://user:***@host:6379/0"
        );
        assert_eq!(redact("redis://:s3cret@host"), "redis://:***@host");
        assert_eq!(redact("rediss://s3cret@host"), "rediss://***@host");
        assert_eq!(redact("redis://a:b@c@host/1"), "redis://a:***@host/1");
        assert_eq!(redact("redis://host:6379"), "redis://host:6379");
        assert_eq!(redact("not a url"), "not a url");
        assert_eq!(redact("redis://u:a/b?c#d@host/1"), "redis://u:***@host/1");
        // An '@' further on may end a password typed with a '/' in it: hide, to be safe.
        assert_eq!(redact("redis://host/0?x=a@b"), "redis://***@b");
        assert_eq!(redact("redis://:ab/c+d=@h:1/0"), "redis://:***@h:1/0");
        assert_eq!(redact("redis://u:p#w@h"), "redis://u:***@h");
        assert_eq!(redact("redis://:p?w@h/0"), "redis://:***@h/0");
        assert_eq!(
            redact("redis+sentinel://u:pw@h1,h2:26380/m"),
            "redis+sentinel://u:***@h1,h2:26380/m"
        );
        assert_eq!(redact("rediss://h:1#insecure"), "rediss://h:1#insecure");
        assert_eq!(redact("/tmp/r.sock?pass=pw"), "/tmp/r.sock?pass=***");
        assert_eq!(
            redact("redis://u:pw@host/?password=pw&protocol=3#insecure"),
            "redis://u:***@host/?password=***&protocol=3#insecure"
        );
        assert_eq!(
            redact("unix:///tmp/r.sock?db=1&pass=pw"),
            "unix:///tmp/r.sock?db=1&pass=***"
        );
    }

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
