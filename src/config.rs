//! From what the user typed to what the lock needs: servers parsed and de-duplicated, the
//! target (a mutex or a semaphore) built, and every lock-taking option checked against the
//! others, one message per rule. Errors here are usage errors (64) and happen before anything is
//! sent to a server.

use crate::cli::{ExtendArgs, ReleaseArgs, ServerArgs, TakeArgs};
use crate::exit::usage;
use crate::hold::{Acquired, Hold};
use crate::lock::keys::{LatchKeys, LockKeys};
use crate::lock::latch::Latch;
use crate::lock::{quorum, Kind, Redlock, Target};
use crate::report::{Level, Reporter};
use crate::schedule::Schedule;
use crate::server::{rejoin_host_lists, Credentials, SentinelCredentials, Server, Tls};
use std::path::Path;
use std::time::Duration;

const DEFAULT_SERVER: &str = "redis://127.0.0.1:6379";
const MAX_NAME_BYTES: usize = 1024;

pub(crate) struct Config {
    pub(crate) servers: Vec<Server>,
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
        let mut servers: Vec<Server> = Vec::new();
        for url in urls.iter().map(String::as_str) {
            if url.is_empty() {
                return Err(usage(
                    "empty server URL; expected e.g. redis://127.0.0.1:6379",
                ));
            }
            let server = Server::parse(url, &credentials, &tls).map_err(usage)?;
            if !servers.iter().any(|s| s.same_as(&server)) {
                servers.push(server);
            }
        }
        let tls_flags = args.tls_ca.is_some() || args.tls_cert.is_some() || args.tls_insecure;
        if tls_flags && !servers.iter().any(Server::is_tls) {
            // Better refuse than let someone believe their traffic is encrypted.
            return Err(usage(
                "TLS options were given but no server URL uses TLS; expected rediss://host:port",
            ));
        }
        let mut warnings = Vec::new();
        if servers.len().is_multiple_of(2) {
            warnings.push(format!(
                "{} servers is an even number; a quorum needs {}, so an odd number tolerates the same failures with one server fewer",
                servers.len(),
                quorum::quorum(servers.len())
            ));
        }
        Ok(Config {
            servers,
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
        lock
    }

    /// The lock `name` names: a mutex (taken `shared` or exclusively), or with `limit` a
    /// semaphore of that many slots, whose grants also get a fencing number with `fence`. The
    /// name is checked first.
    pub(crate) fn target(
        &self,
        name: &str,
        limit: Option<usize>,
        fence: bool,
        shared: bool,
    ) -> anyhow::Result<Target> {
        check_name(name)?;
        let kind = match (limit, shared) {
            (Some(_), true) => {
                return Err(usage(
                    "--shared and --limit do not go together: a semaphore's holders already share it, N at a time; expected one or the other",
                ))
            }
            (Some(slots), false) => Kind::Semaphore { slots },
            (None, true) => Kind::Shared,
            (None, false) => Kind::Mutex,
        };
        Ok(Target::new(
            name,
            LockKeys::new(&self.prefix, name),
            kind,
            fence,
        ))
    }

    /// The latch `name` names (`redlock latch`), checked as a lock name is: a latch's key is
    /// its name's lock key and a suffix after the separator (`lock::keys`).
    pub(crate) fn latch(&self, name: &str) -> anyhow::Result<Latch> {
        check_named("latch", name)?;
        Ok(Latch {
            name: name.to_string(),
            keys: LatchKeys::new(&self.prefix, name),
        })
    }

    /// What `acquire` (with `renewed_by` None) or `exec` (with its renewal schedule's
    /// `--kill-after`) is asked to take, after every check that needs no server: the name, and a
    /// TTL that leaves validity after a round and, for `exec`, room for its renewals.
    pub(crate) fn take(
        &self,
        take: &TakeArgs,
        renewed_by: Option<Duration>,
    ) -> anyhow::Result<(Target, Option<Schedule>)> {
        let target = self.target(&take.name, take.limit, take.fence, take.shared)?;
        self.check_ttl(take.ttl)?;
        let schedule = renewed_by.map(|kill_after| Schedule {
            ttl: take.ttl,
            timeout: self.timeout,
            kill_after,
        });
        if let Some(schedule) = schedule.filter(|schedule| !schedule.is_workable()) {
            // A TTL too short for the renewal schedule would report the lock lost at the first
            // renewal.
            return Err(usage(format!(
                "--ttl {} is too short for exec with a {} per-server timeout; expected at least {} ms so renewals have time",
                humantime::format_duration(schedule.ttl),
                humantime::format_duration(schedule.timeout),
                Schedule::minimum_ttl(schedule.timeout).as_millis()
            )));
        }
        Ok((target, schedule))
    }

    /// What `release` is asked to give back, and for how long to keep it (`--hold-at-least`,
    /// which counts from the acquisition time the token carries: a token that carries none is a
    /// usage error with nothing half-done).
    pub(crate) fn release(&self, args: &ReleaseArgs) -> anyhow::Result<(Target, Option<Hold>)> {
        let target = self.target(&args.name, args.limit, false, args.shared)?;
        check_hold(&target, args.hold_at_least)?;
        let hold = match (args.hold_at_least, args.token.as_deref()) {
            (Some(at_least), Some(token)) => {
                let Some(holder) = crate::token::holder(token) else {
                    return Err(usage(
                        "--hold-at-least needs a token made by `redlock acquire` (it carries the acquisition time); this one does not",
                    ));
                };
                Some(Hold {
                    at_least,
                    acquired: Acquired::Token {
                        unix_ms: holder.acquired_unix_ms,
                    },
                })
            }
            _ => None,
        };
        Ok((target, hold))
    }

    /// What `extend` is asked to renew: a holder's token, with a TTL that leaves validity.
    pub(crate) fn extension(&self, args: &ExtendArgs) -> anyhow::Result<Target> {
        let target = self.target(&args.name, args.limit, false, args.shared)?;
        self.check_ttl(args.ttl)?;
        if crate::token::holder(&args.token).is_some_and(|holder| holder.kept.is_some()) {
            // A kept lock ends when its hold does: stretching it would defeat the bound that
            // `--hold-at-least` promises (see `crate::hold`).
            return Err(usage(
                "--token is the value of a lock kept by --hold-at-least, not a holder's token; a kept lock cannot be extended",
            ));
        }
        Ok(target)
    }

    /// Checks that `ttl` leaves validity after the drift allowance and one full per-server
    /// timeout, the slowest an acquisition that counts can take.
    fn check_ttl(&self, ttl: Duration) -> anyhow::Result<()> {
        if !ttl.subsec_nanos().is_multiple_of(1_000_000) {
            return Err(usage(format!(
                "--ttl {} is not a whole number of milliseconds; expected e.g. 1500ms",
                humantime::format_duration(ttl)
            )));
        }
        let minimum = quorum::shortest_ttl_leaving(self.timeout);
        if ttl < minimum {
            return Err(usage(format!(
                "--ttl {} leaves no validity after the {} per-server timeout and the clock-drift allowance; expected at least {} ms",
                humantime::format_duration(ttl),
                humantime::format_duration(self.timeout),
                minimum.as_millis()
            )));
        }
        Ok(())
    }
}

/// `--hold-at-least` keeps a lock's key after its run; a shared holder has no key of its own to
/// keep, and keeping the shared mark would keep every other holder's share too.
pub(crate) fn check_hold(target: &Target, hold: Option<Duration>) -> anyhow::Result<()> {
    if target.is_shared() && hold.is_some() {
        return Err(usage(
            "--hold-at-least does not go with --shared: a shared holder has no key of its own to keep; expected one or the other",
        ));
    }
    Ok(())
}

/// `--limit asked` for NAME, which the servers record as a semaphore of `slots` slots
/// (`lock::Limit`): a usage error, since every user of a semaphore must give the same N.
pub(crate) fn limit_mismatch(name: &str, asked: Option<usize>, slots: usize) -> anyhow::Error {
    let given = asked.map_or("no --limit".to_string(), |asked| format!("--limit {asked}"));
    usage(format!(
        "lock '{name}' is a semaphore of {slots} slots, and {given} does not match it (every user of a semaphore must give the same N); expected --limit {slots}"
    ))
}

/// A lock name: not empty, not too long, and without control characters, so that no lock's key
/// is ever one of the keys redlock keeps beside a lock (`lock::keys`).
fn check_name(name: &str) -> anyhow::Result<()> {
    check_named("lock", name)
}

/// A `kind` (lock or latch) name, by the lock name's rules.
fn check_named(kind: &str, name: &str) -> anyhow::Result<()> {
    if name.is_empty() {
        return Err(usage(format!(
            "empty {kind} name; expected a name such as nightly-backup"
        )));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(usage(format!(
            "{kind} name of {} bytes is too long; expected at most {MAX_NAME_BYTES}",
            name.len()
        )));
    }
    if let Some(bad) = name.chars().find(|c| c.is_control()) {
        return Err(usage(format!(
            "{kind} name {name:?} contains the control character {bad:?}; expected printable text"
        )));
    }
    Ok(())
}

fn tls(args: &ServerArgs) -> anyhow::Result<Tls> {
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

fn credentials(args: &ServerArgs) -> anyhow::Result<Credentials> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(servers: &[&str]) -> ServerArgs {
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

    #[test]
    fn ttl_must_leave_validity_after_the_timeout() {
        let config = Config::from_args(&args(&[])).unwrap();
        assert!(config.check_ttl(Duration::from_secs(30)).is_ok());
        let err = config.check_ttl(Duration::from_millis(150)).unwrap_err();
        assert!(err.to_string().contains("--ttl 150ms"), "{err}");
        assert!(config.check_ttl(Duration::from_micros(1_500_500)).is_err());
    }

    #[test]
    fn names_are_checked() {
        let config = Config::from_args(&args(&[])).unwrap();
        let key = |name: &str| {
            config
                .target(name, None, false, false)
                .map(|target| target.keys.lock().to_string())
        };
        assert_eq!(key("job").unwrap(), "redlock:job");
        assert!(key("").is_err());
        assert!(key("a\nb").unwrap_err().to_string().contains("control"));
        let latch = config.latch("etl").unwrap();
        assert_eq!(latch.keys.key(), "redlock:etl\u{1f}latch");
        let err = config.latch("").unwrap_err().to_string();
        assert!(err.contains("empty latch name"), "{err}");
        assert!(config.latch("a\u{1f}b").is_err());
    }

    mod properties {
        use super::*;
        use crate::exit::{self, Outcome};
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(128))]

            #[test]
            fn a_lock_name_is_its_key_or_a_one_line_usage_error(
                name in prop_oneof![
                    any::<String>(),
                    "[a-z:/._ -]{0,8}\\PC{0,4}[\n\t\u{1b}\u{0}]?\\PC{0,4}",
                    "[a-z]{1020,1030}",
                ]
            ) {
                let config = Config::from_args(&args(&[])).unwrap();
                match config.target(&name, None, false, false) {
                    Ok(target) => {
                        prop_assert_eq!(target.keys.lock(), format!("redlock:{name}"));
                        prop_assert!(!name.is_empty() && name.len() <= MAX_NAME_BYTES);
                        prop_assert!(!name.chars().any(char::is_control), "{name:?}");
                    }
                    Err(err) => {
                        prop_assert_eq!(exit::code_of(&err).0, Outcome::Usage.code());
                        let message = err.to_string();
                        prop_assert!(!message.contains(['\n', '\r']), "{message:?}");
                        prop_assert!(message.contains("expected"), "{message}");
                    }
                }
            }
        }
    }
}
