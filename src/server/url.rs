//! Server URLs as text: the forms accepted beyond the redis crate's (a bare socket path, a
//! Sentinel group's or a cluster's host list), the query parameters refused because the client
//! would ignore them, a plain server's URL read into the crate's settings and the identity two
//! spellings of it share, and redaction, which replaces every password with `***` before a URL
//! is shown anywhere.

use crate::human;
use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo};

/// A plain server's (or a socket's) `url`, shown as `display`, read into the crate's settings;
/// with `insecure`, a `rediss://` server's certificate is not checked.
pub(crate) fn plain_info(
    url: &str,
    display: &str,
    insecure: bool,
) -> Result<ConnectionInfo, String> {
    let mut url = normalize(url);
    if !url.contains("://") {
        // `-s 127.0.0.1:6379`, the form redis-cli and most clients take.
        return Err(format!(
            "invalid server URL '{display}': not a URL; write redis://{display} (or rediss:// for TLS)"
        ));
    }
    check_query(display)?;
    if insecure && url.starts_with("rediss://") && !url.contains('#') {
        // The redis crate's spelling of "do not verify the certificate".
        url.push_str("#insecure");
    }
    let info = url.as_str().into_connection_info().map_err(|e| {
        format!(
            "invalid server URL '{display}': {}",
            human::printable(&super::failure::unusable_url(&e))
        )
    })?;
    if url.contains('#') && !url.starts_with("rediss") {
        // A '#' in a password is easy to type and silently truncates the URL.
        return Err(format!(
            "invalid server URL '{display}': '#' must be written as %23"
        ));
    }
    Ok(info)
}

/// What identifies a plain server reached as `info` says, database `db`: host (in lower case),
/// port and database, or socket path and database. Two URLs with the same identity are the same
/// server and vote once.
pub(crate) fn identity(info: &ConnectionInfo, db: i64) -> String {
    match info.addr() {
        ConnectionAddr::Tcp(host, port) => format!("{}:{port}/{db}", host.to_lowercase()),
        ConnectionAddr::TcpTls { host, port, .. } => {
            format!("{}:{port}/{db}", host.to_lowercase())
        }
        ConnectionAddr::Unix(path) => format!("unix:{}/{db}", path.display()),
        other => format!("{other}/{db}"),
    }
}

pub(crate) fn is_sentinel_url(url: &str) -> bool {
    url.starts_with("redis+sentinel://") || url.starts_with("rediss+sentinel://")
}

pub(crate) fn is_cluster_url(url: &str) -> bool {
    url.starts_with("redis+cluster://") || url.starts_with("rediss+cluster://")
}

/// Undoes the comma split of `-s`/`REDLOCK_SERVERS` inside a Sentinel URL's or a cluster URL's
/// host list: `redis+sentinel://h1`, `h2:26380/mymaster` become one URL again. A piece continues
/// the one before it only while that one is a Sentinel URL without its master name yet, or a
/// cluster URL without a path, and only when the piece has no scheme of its own.
pub(crate) fn rejoin_host_lists(pieces: &[String]) -> Vec<String> {
    let mut urls: Vec<String> = Vec::new();
    // Commas and whitespace alike separate URLs (`REDLOCK_SERVERS="redis://a redis://b"`); a
    // URL holds no whitespace (a space in a password is written %20). An empty piece stays,
    // to be refused by name.
    let split = pieces.iter().flat_map(|piece| {
        let words: Vec<&str> = piece.split_whitespace().collect();
        if words.is_empty() {
            vec![""]
        } else {
            words
        }
    });
    for piece in split {
        match urls.last_mut() {
            Some(open)
                if (is_sentinel_url(open) || is_cluster_url(open))
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

/// A URL that names several hosts (`redis+sentinel://`, `redis+cluster://`), taken apart up to
/// its hosts and path: the form both kinds share, checked once.
pub(crate) struct HostList<'a> {
    /// `rediss+…`: TLS to every host.
    pub(crate) secure: bool,
    /// The user and password before the last '@', as written.
    pub(crate) userinfo: Option<&'a str>,
    /// The hosts, then '/' and the path, if any.
    pub(crate) rest: &'a str,
    /// `#insecure` on a TLS URL, or `--tls-insecure`.
    pub(crate) insecure: bool,
}

impl<'a> HostList<'a> {
    /// `url` taken apart; `secure_scheme` is the kind's TLS scheme, `bad` words an error.
    pub(crate) fn split(
        url: &'a str,
        secure_scheme: &str,
        tls_insecure: bool,
        bad: &dyn Fn(&str) -> String,
    ) -> Result<HostList<'a>, String> {
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no scheme"))?;
        let secure = scheme == secure_scheme;
        // As in `redact`: everything up to the last '@' is the user and password.
        let (userinfo, rest) = match rest.rsplit_once('@') {
            Some((userinfo, rest)) => (Some(userinfo), rest),
            None => (None, rest),
        };
        if userinfo.is_some_and(|u| u.contains(['/', '?', '#'])) {
            return Err(bad(
                "write '/', '?' and '#' in a user or password as %2F, %3F and %23",
            ));
        }
        let (rest, fragment) = match rest.split_once('#') {
            Some((rest, fragment)) => (rest, Some(fragment)),
            None => (rest, None),
        };
        let insecure = match fragment {
            None => tls_insecure,
            Some("insecure") if secure => true,
            Some(_) => return Err(bad("'#' must be written as %23")),
        };
        if rest.contains('?') {
            return Err(bad("query parameters are not supported here"));
        }
        Ok(HostList {
            secure,
            userinfo,
            rest,
            insecure,
        })
    }
}

/// Accepts `unix:///path` and a bare `/path/to/redis.sock` as Unix socket forms.
pub(crate) fn normalize(url: &str) -> String {
    if url.starts_with('/') {
        format!("unix://{url}")
    } else {
        url.to_string()
    }
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
pub(crate) fn check_query(display: &str) -> Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
