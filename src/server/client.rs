//! How the redis client for one server is made: the TLS settings every `rediss://` server shares
//! (CA, client certificate, `--tls-insecure`), the credentials from the environment or a file
//! that fill in what a URL lacks, and the one deadline that bounds every step of a connection.

use crate::clock::BootInstant;
use crate::human::{first_line, lowercase_first};
use redis::{
    Client, ClientTlsConfig, Connection, ConnectionAddr, ConnectionInfo, RedisConnectionInfo,
    RedisError, RedisResult,
};
use std::time::Duration;

/// TLS settings for every `rediss://` server, as PEM bytes already read from their files.
#[derive(Clone, Default)]
pub(crate) struct Tls {
    pub(crate) ca: Option<Vec<u8>>,
    /// Client certificate chain and private key.
    pub(crate) client: Option<(Vec<u8>, Vec<u8>)>,
    /// Accept any certificate (`--tls-insecure`).
    pub(crate) insecure: bool,
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

/// The client for one server: with the CA and client certificate for a `rediss://` server that
/// names them, otherwise the redis crate's own (the system's trust store).
pub(crate) fn client(info: &ConnectionInfo, tls: &Tls) -> RedisResult<Client> {
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

/// Why the TLS files cannot serve the server shown as `display`, and what they must be.
pub(crate) fn unusable_tls_files(display: &str, err: &RedisError) -> String {
    format!(
        "cannot use the TLS files for '{display}': {}; expected PEM certificates (--tls-ca, --tls-cert) and a PEM private key (--tls-key)",
        lowercase_first(first_line(&err.to_string()))
    )
}

/// `template`'s settings (database, user, password, TLS) for the server at `host:port`: a
/// Sentinel group's master as a sentinel named it, a cluster's node.
pub(crate) fn at(template: &ConnectionInfo, host: &str, port: u16) -> ConnectionInfo {
    let addr = match template.addr() {
        ConnectionAddr::TcpTls { insecure, .. } => ConnectionAddr::TcpTls {
            host: host.to_string(),
            port,
            insecure: *insecure,
            tls_params: None,
        },
        _ => ConnectionAddr::Tcp(host.to_string(), port),
    };
    template.clone().set_addr(addr)
}

/// A connection made by `deadline`, which also bounds its first reads and writes.
pub(crate) fn connect(client: &Client, deadline: BootInstant) -> RedisResult<Connection> {
    let connection = client.get_connection_with_timeout(time_left(deadline)?)?;
    connection.set_read_timeout(Some(time_left(deadline)?))?;
    connection.set_write_timeout(Some(time_left(deadline)?))?;
    Ok(connection)
}

/// What is left until `deadline`, as a time-out error once nothing is: every step of a
/// connection (sentinel query, connect, read, write) is bounded by the same deadline.
pub(crate) fn time_left(deadline: BootInstant) -> RedisResult<Duration> {
    let left = deadline.remaining();
    if left.is_zero() {
        Err(std::io::Error::from(std::io::ErrorKind::TimedOut).into())
    } else {
        Ok(left)
    }
}
