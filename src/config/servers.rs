//! The servers and the options every command shares: each URL parsed (with the credentials and
//! TLS it needs) and counted once (one URL twice, or one server under two names: `aliases`),
//! the key prefix and per-server timeout, and the engine over them.

use super::aliases::{split, Alias};
use super::credentials::{credentials, tls};
use crate::cli::ServerArgs;
use crate::exit::usage;
use crate::lock::{quorum, Redlock};
use crate::report::{event, Level, Reporter};
use crate::server::{rejoin_host_lists, Server};
use std::time::Duration;

const DEFAULT_SERVER: &str = "redis://127.0.0.1:6379";

pub(crate) struct Config {
    /// The servers that vote, each once.
    pub(crate) servers: Vec<Server>,
    /// Servers listed again under another name (another host name for the same address, another
    /// database): they do not vote; `doctor` names them.
    pub(crate) aliases: Vec<Alias>,
    pub(crate) prefix: String,
    pub(crate) timeout: Duration,
    /// Things worth saying on stderr that do not stop us (an even number of servers).
    pub(crate) warnings: Vec<String>,
}

impl Config {
    pub(crate) fn from_args(args: &ServerArgs) -> anyhow::Result<Config> {
        let credentials = credentials(args)?;
        let tls = tls(args)?;
        let urls: Vec<String> = if args.servers.is_empty() {
            vec![DEFAULT_SERVER.to_string()]
        } else {
            rejoin_host_lists(&args.servers)
        };
        let mut listed: Vec<Server> = Vec::new();
        for url in urls.iter().map(String::as_str) {
            if url.is_empty() {
                return Err(usage(
                    "empty server URL; expected e.g. redis://127.0.0.1:6379",
                ));
            }
            let server = Server::parse(url, &credentials, &tls).map_err(usage)?;
            if !listed.iter().any(|s| s.same_as(&server)) {
                listed.push(server);
            }
        }
        let tls_flags = args.tls_ca.is_some() || args.tls_cert.is_some() || args.tls_insecure;
        if tls_flags && !listed.iter().any(Server::is_tls) {
            // Better refuse than let someone believe their traffic is encrypted.
            return Err(usage(
                "TLS options were given but no server URL uses TLS; expected rediss://host:port",
            ));
        }
        let (servers, aliases) = split(listed, args.timeout);
        let mut warnings: Vec<String> = aliases.iter().map(|a| a.warning(&servers)).collect();
        if servers.len().is_multiple_of(2) {
            warnings.push(format!(
                "{} servers is an even number; a quorum needs {}, so an odd number tolerates the same failures with one server fewer",
                servers.len(),
                quorum::quorum(servers.len())
            ));
        }
        Ok(Config {
            servers,
            aliases,
            prefix: args.prefix.clone(),
            timeout: args.timeout,
            warnings,
        })
    }

    /// The engine over the configured servers; with `-v`, every round it makes is reported.
    pub(crate) fn redlock(&self, reporter: Reporter) -> Redlock {
        let mut lock = Redlock::new(self.servers.clone(), self.timeout);
        if reporter.level == Level::Verbose {
            lock.set_observer(Box::new(move |round| reporter.round(round)));
        }
        // Every command says once per run what is left of the fault margin when a server could
        // not vote: without it a run on two good servers of three succeeds silently, with one
        // failure left before every lock stops.
        lock.set_margin_sink(Box::new(move |margin| {
            reporter.margin(&event::Margin {
                servers: margin.servers,
                can_vote: margin.answered,
                quorum: margin.quorum,
                cannot_vote: margin
                    .failing
                    .iter()
                    .map(|(server, why)| event::CannotVote {
                        server: server.clone(),
                        why: why.clone(),
                        misconfigured: crate::server::cannot_vote(why),
                    })
                    .collect(),
            })
        }));
        lock
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The shared options as typed, with `servers` and defaults for the rest.
    pub(in crate::config) fn args(servers: &[&str]) -> ServerArgs {
        ServerArgs {
            servers: servers.iter().map(|s| s.to_string()).collect(),
            prefix: "redlock:".into(),
            timeout: Duration::from_millis(200),
            username: None,
            password_file: None,
            tls_ca: None,
            tls_cert: None,
            tls_key: None,
            tls_insecure: false,
        }
    }

    #[test]
    fn duplicate_servers_vote_once_and_even_counts_warn() {
        let config = Config::from_args(&args(&[
            "redis://127.0.0.1:7001",
            "redis://127.0.0.1:7001/0",
            "redis://127.0.0.1:7002",
        ]))
        .unwrap();
        assert_eq!(config.servers.len(), 2);
        assert_eq!(config.warnings.len(), 1);
        assert!(config.warnings[0].contains("even"));
        let one = Config::from_args(&args(&[])).unwrap();
        assert_eq!(one.servers[0].display, DEFAULT_SERVER);
        assert!(one.warnings.is_empty());
    }
}
