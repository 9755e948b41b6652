//! Reaching a server for `doctor`: why it could not be asked (server/diagnosis.rs's one rule,
//! and a TLS/plain mismatch told from an outage by asking once the other way), a URL that
//! reached a server of another kind, and who reads its configuration (`--read-as`).

use crate::server::{diagnose, Diagnosis, Server};
use redis::ConnectionAddr;
use std::time::Duration;

/// `--read-as`: the user that reads each server's configuration (`INFO`, `CONFIG GET`) instead
/// of redlock's own, which docs/doctor.md's ACL does not let read it.
pub(super) struct ReadAs {
    pub(super) user: String,
    pub(super) password: Option<String>,
}

/// Who reads a server's configuration: `--read-as`'s user, then redlock's own again (by AUTH,
/// before its access is checked), or redlock's own throughout.
pub(super) struct Reader<'a> {
    pub(super) read_as: Option<&'a ReadAs>,
    /// Redlock's own user and password, to AUTH as again.
    pub(super) own: (String, String),
}

impl<'a> Reader<'a> {
    pub(super) fn new(server: &Server, read_as: Option<&'a ReadAs>) -> Reader<'a> {
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

/// Why a server could not be asked: down or misconfigured (server/diagnosis.rs). A plain
/// server that is down to one scheme is asked once by the other (`redis://` by `rediss://`
/// and back): answering it, it is a TLS/plain mismatch, not an outage.
pub(super) fn unusable(server: &Server, err: &redis::RedisError, timeout: Duration) -> Diagnosis {
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

/// A redis error in a few words (the server's own, verbatim, when it sent some).
pub(super) fn why(err: &redis::RedisError) -> String {
    if let Some(words) = crate::server::refusal(err) {
        return words;
    }
    diagnose(err).words()
}
