//! A `redis+sentinel://` URL read into a group: its sentinels (each with the sentinels'
//! credentials), the master's name and database, and how to log in to a master.

use super::super::blocking::Dialer;
use super::super::client::{with_credentials, Tls};
use super::super::url::HostList;
use super::group::Group;
use crate::human::{first_line, lowercase_first};
use redis::IntoConnectionInfo;

/// The port sentinels listen on unless the URL says otherwise.
const DEFAULT_PORT: u16 = 26379;

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
            .map_err(|e| bad(&super::super::failure::unusable_url(&e)))
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
            Dialer::new(&info, tls)
                .map_err(|e| bad(&lowercase_first(first_line(&e.to_string()))))?,
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
    Ok(Group::new(
        master_name,
        addresses,
        sentinels,
        template.set_redis_settings(settings),
        Tls {
            insecure,
            ..tls.clone()
        },
    ))
}

/// `host:port`, `[v6]:port` versus `host`, `[v6]`.
fn has_port(host: &str) -> bool {
    match host.rfind(']') {
        Some(close) => host[close..].contains(':'),
        None => host.contains(':'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::ConnectionAddr;

    fn group(url: &str) -> Result<Group, String> {
        parse(
            url,
            &crate::server::url::redact(url),
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
