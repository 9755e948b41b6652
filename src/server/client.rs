//! How the redis client for one server is made: the TLS settings every `rediss://` server shares
//! (CA, client certificate, `--tls-insecure`), the credentials from the environment or a file
//! that fill in what a URL lacks, and the one deadline that bounds every step of a connection.

use redis::{Client, ClientTlsConfig, ConnectionAddr, ConnectionInfo, RedisConnectionInfo};
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
