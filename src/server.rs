//! Server addresses: parsing `redis://` URLs and showing them without their password.

use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo};

/// One Redis server as the user named it: how to connect, and how to show it safely.
#[derive(Clone)]
pub(crate) struct Server {
    /// The URL with any password replaced by `***`: the only form that is ever printed.
    pub(crate) display: String,
    /// Host, port, database (or socket path, database): two URLs with the same identity are the
    /// same server and vote once.
    pub(crate) identity: String,
    pub(crate) info: ConnectionInfo,
}

/// Credentials that come from the environment or a file rather than the URL.
#[derive(Clone, Default)]
pub(crate) struct Credentials {
    pub(crate) username: Option<String>,
    pub(crate) password: Option<String>,
}

impl Server {
    pub(crate) fn parse(url: &str, credentials: &Credentials) -> Result<Server, String> {
        let display = redact(url);
        let url = normalize(url);
        let info = url
            .as_str()
            .into_connection_info()
            .map_err(|e| {
                format!(
                    "invalid server URL '{display}': {}",
                    first_line(&e.to_string())
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
        let mut settings = info.redis_settings().clone().set_skip_set_lib_name();
        if settings.username().is_none() {
            if let Some(username) = &credentials.username {
                settings = settings.set_username(username);
            }
        }
        if settings.password().is_none() {
            if let Some(password) = &credentials.password {
                settings = settings.set_password(password);
            }
        }
        let db = settings.db();
        let identity = match info.addr() {
            ConnectionAddr::Tcp(host, port) => format!("{}:{port}/{db}", host.to_lowercase()),
            ConnectionAddr::TcpTls { host, port, .. } => {
                format!("{}:{port}/{db}", host.to_lowercase())
            }
            ConnectionAddr::Unix(path) => format!("unix:{}/{db}", path.display()),
            other => format!("{other}/{db}"),
        };
        Ok(Server {
            display,
            identity,
            info: info.set_redis_settings(settings),
        })
    }
}

/// Accepts `unix:///path` and a bare `/path/to/redis.sock` as Unix socket forms.
fn normalize(url: &str) -> String {
    if url.starts_with('/') {
        format!("unix://{url}")
    } else {
        url.to_string()
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// Replaces the password of a URL (`scheme://user:password@host`) with `***`. Works on any
/// string, parseable or not, because it is also used on URLs we are about to reject.
pub(crate) fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let authority_start = scheme_end + 3;
    let rest = &url[authority_start..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_len];
    let Some(at) = authority.rfind('@') else {
        return url.to_string();
    };
    let userinfo = &authority[..at];
    let redacted_userinfo = match userinfo.find(':') {
        Some(colon) => format!("{}:***", &userinfo[..colon]),
        // `redis://secret@host` is how many clients spell a password without a user.
        None if !userinfo.is_empty() => "***".to_string(),
        None => String::new(),
    };
    format!(
        "{}{}{}",
        &url[..authority_start],
        redacted_userinfo,
        &url[authority_start + at..]
    )
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
        assert_eq!(redact("redis://host/0?x=a@b"), "redis://host/0?x=a@b");
    }

    #[test]
    fn identity_ignores_spelling_and_credentials() {
        let none = Credentials::default();
        let a = Server::parse("redis://LocalHost:7000/0", &none).unwrap();
        let b = Server::parse("redis://:pw@localhost:7000", &none).unwrap();
        let c = Server::parse("redis://localhost:7000/1", &none).unwrap();
        assert_eq!(a.identity, b.identity);
        assert_ne!(a.identity, c.identity);
        let unix = Server::parse("/tmp/redis.sock", &none).unwrap();
        assert_eq!(unix.identity, "unix:/tmp/redis.sock/0");
    }

    #[test]
    fn credentials_fill_in_but_never_override_the_url() {
        let creds = Credentials {
            username: Some("app".into()),
            password: Some("from-env".into()),
        };
        let plain = Server::parse("redis://h:1", &creds).unwrap();
        assert_eq!(plain.info.redis_settings().password(), Some("from-env"));
        assert_eq!(plain.info.redis_settings().username(), Some("app"));
        let explicit = Server::parse("redis://u:url-pw@h:1", &creds).unwrap();
        assert_eq!(explicit.info.redis_settings().password(), Some("url-pw"));
    }

    #[test]
    fn bad_urls_are_named_without_their_password() {
        let err = Server::parse("http://u:pw@host", &Credentials::default())
            .err()
            .unwrap();
        assert!(err.contains("http://u:***@host"), "{err}");
        assert!(!err.contains("pw@"), "{err}");
    }
}
