//! What redlock shows a server to be let in, read from files and the environment: the username
//! and password (`--password-file`, `REDLOCK_PASSWORD`, Sentinel's own), and the TLS CA and
//! client certificate, each file checked before any connection is tried.

use crate::cli::ServerArgs;
use crate::exit::usage;
use crate::server::{Credentials, SentinelCredentials, Tls};
use std::path::Path;

pub(super) fn tls(args: &ServerArgs) -> anyhow::Result<Tls> {
    let ca = args
        .tls_ca
        .as_deref()
        .map(|path| read_pem("--tls-ca", path))
        .transpose()?;
    let client = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            Some((read_pem("--tls-cert", cert)?, read_pem("--tls-key", key)?))
        }
        (None, None) => None,
        _ => {
            return Err(usage(
                "--tls-cert and --tls-key go together; expected both or neither",
            ))
        }
    };
    Ok(Tls {
        ca,
        client,
        insecure: args.tls_insecure,
    })
}

fn read_pem(flag: &str, path: &Path) -> anyhow::Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(|e| {
        usage(format!(
            "{flag} {}: {}; expected a readable PEM file",
            path.display(),
            io_reason(&e)
        ))
    })?;
    if !bytes.windows(11).any(|w| w == b"-----BEGIN ") {
        return Err(usage(format!(
            "{flag} {}: not PEM; expected a file with -----BEGIN ...----- blocks",
            path.display()
        )));
    }
    Ok(bytes)
}

/// `No such file or directory (os error 2)` without the errno, lowercased.
fn io_reason(err: &std::io::Error) -> String {
    let text = err.to_string();
    crate::human::lowercase_first(text.split(" (os error").next().unwrap_or(&text))
}

pub(super) fn credentials(args: &ServerArgs) -> anyhow::Result<Credentials> {
    let password = match &args.password_file {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                usage(format!(
                    "--password-file {}: {}; expected a readable file holding the password",
                    path.display(),
                    io_reason(&e)
                ))
            })?;
            Some(text.trim_end_matches(['\n', '\r']).to_string())
        }
        None => std::env::var("REDLOCK_PASSWORD")
            .ok()
            .filter(|p| !p.is_empty()),
    };
    Ok(Credentials {
        username: args.username.clone().filter(|u| !u.is_empty()),
        password,
        sentinel: SentinelCredentials::from_env(),
    })
}
