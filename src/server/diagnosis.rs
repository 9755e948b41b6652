//! Why a server could not be used, told by one rule wherever a connection or a request fails:
//! a server is **down** when the transport failed before it said anything (refused, timed out,
//! reset or closed before any reply, unreachable), or when it said something that passes by
//! itself (`LOADING`, `BUSY`, `MASTERDOWN`, `TRYAGAIN`, `CLUSTERDOWN`): it may come back, so it
//! is a warning. Anything else it said (an authentication error, a TLS alert or a certificate
//! it presented that this host refuses, a reply that is not Redis's, a reply that shows it is a
//! server of another kind than its URL says) will not fix itself: it is **misconfigured**, an
//! error, and the words say what to change, naming the option or the URL form.
//!
//! The words come first in plain language (`what` and `fix`); the library's own words, kept
//! verbatim in `detail`, are for `-v` and `--json`. `SIGNS` is the one table of what each
//! misconfiguration looks like in a server's or the client library's words.

/// The one verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerFault {
    /// It may come back by itself.
    Down,
    /// It will not come back until someone changes the URL, the options or the server.
    Misconfigured,
}

/// What went wrong with a server, in words for people and in the library's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Diagnosis {
    pub(crate) verdict: ServerFault,
    /// What is wrong, in plain words: `wrong password or user`, `no answer in time`.
    pub(crate) what: String,
    /// What to change (empty for a server that is down).
    pub(crate) fix: String,
    /// The error as the server or the library said it, verbatim (its first line).
    pub(crate) detail: String,
}

impl Diagnosis {
    /// `what: fix`, or `what` alone.
    pub(crate) fn words(&self) -> String {
        if self.fix.is_empty() {
            self.what.clone()
        } else {
            format!("{}: {}", self.what, self.fix)
        }
    }

    pub(crate) fn misconfigured(&self) -> bool {
        self.verdict == ServerFault::Misconfigured
    }
}

/// One misconfiguration: any of its needles in the error's text (case-sensitive: servers and
/// libraries spell their codes one way), what it is, and what to change.
struct Sign {
    needles: &'static [&'static str],
    what: &'static str,
    fix: &'static str,
}

/// Every misconfiguration redlock recognises, first match wins (the more specific first).
const SIGNS: &[Sign] = &[
    // Sentinels have a user and password of their own (sentinel/discovery.rs says so).
    Sign {
        needles: &["sentinels take REDLOCK_SENTINEL_PASSWORD"],
        what: "its sentinels refuse the password given them, or want one",
        fix: "give the sentinels' password in REDLOCK_SENTINEL_PASSWORD (REDLOCK_SENTINEL_USERNAME for an ACL user); the master's is the URL's or REDLOCK_PASSWORD",
    },
    Sign {
        needles: &["called without any password configured"],
        what: "a password was sent, but the server has none (no requirepass)",
        fix: "leave the password out of its URL, or unset --password-file / REDLOCK_PASSWORD",
    },
    Sign {
        needles: &[
            "NOAUTH",
            "Authentication required",
            "unauthenticated multibulk length",
            "unauthenticated bulk length",
        ],
        what: "the server requires a password, and none was given",
        fix: "give it in the URL (redis://:PASSWORD@host:port, or USER:PASSWORD@ for an ACL user), or with --password-file FILE (REDLOCK_PASSWORD)",
    },
    Sign {
        needles: &[
            "WRONGPASS",
            "invalid password",
            "invalid username-password pair",
            "password authentication failed",
            "Password authentication failed",
        ],
        what: "wrong password or user",
        fix: "check the user and password in its URL (redis://USER:PASSWORD@host:port), or --username and --password-file (REDLOCK_USERNAME, REDLOCK_PASSWORD)",
    },
    Sign {
        needles: &["CertificateRequired", "certificate required"],
        what: "the server requires a TLS client certificate",
        fix: "pass one with --tls-cert FILE and --tls-key FILE (REDLOCK_TLS_CERT, REDLOCK_TLS_KEY)",
    },
    Sign {
        needles: &["UnknownIssuer", "unable to get local issuer", "self-signed", "self signed"],
        what: "its TLS certificate is signed by a CA this host does not trust",
        fix: "pass that CA's certificate with --tls-ca FILE (REDLOCK_TLS_CA)",
    },
    Sign {
        needles: &["not valid for name", "NotValidForName", "hostname mismatch"],
        what: "its TLS certificate is for another name than the URL's host",
        fix: "write a host the certificate names in its URL, or give the server a certificate for this one",
    },
    Sign {
        needles: &["Expired", "certificate has expired", "NotValidYet"],
        what: "its TLS certificate has expired (or is not valid yet)",
        fix: "renew the server's certificate, and check this host's clock",
    },
    Sign {
        needles: &[
            "InvalidContentType",
            "corrupt message",
            "wrong version number",
            "InvalidMessage",
            "answers without TLS",
        ],
        what: "it does not speak TLS",
        fix: "write redis:// instead of rediss://",
    },
    Sign {
        needles: &["speaks TLS"],
        what: "it speaks TLS only",
        fix: "write rediss:// instead of redis:// (and --tls-ca FILE if its CA is not the system's)",
    },
    Sign {
        needles: &["is a Redis Cluster node", "MOVED ", "CROSSSLOT"],
        what: "a Redis Cluster node, listed as a single server",
        fix: "name the cluster as redis+cluster://host:port (one URL for all its nodes)",
    },
    Sign {
        needles: &["cluster support disabled", "not in cluster mode"],
        what: "a single server (not in cluster mode), listed as a cluster",
        fix: "name it as redis://host:port",
    },
    Sign {
        needles: &["is a Sentinel"],
        what: "a Sentinel, listed as a server",
        fix: "name its group as redis+sentinel://host:port[,host:port…]/MASTER-NAME",
    },
    Sign {
        needles: &["READONLY", "read only replica"],
        what: "replica (read-only)",
        fix: "list its master, or the group as redis+sentinel://",
    },
    Sign {
        needles: &["no sentinel knows a master named", "know no master named"],
        what: "its sentinels know no master named",
        fix: "check the master name after the hosts in its redis+sentinel:// URL (SENTINEL MASTERS lists them)",
    },
    // sentinel/discovery.rs's own words, which name who names what: kept as they are.
    Sign {
        needles: &["sentinels disagree on the master"],
        what: "",
        fix: "",
    },
    Sign {
        needles: &["Parse error", "invalid response", "not a Redis server"],
        what: "something answers there, but not as a Redis server does",
        fix: "check the host and port in its URL",
    },
];

/// Replies that pass by themselves: the server is down for now, not misconfigured.
const PASSING: &[&str] = &["LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN"];

/// The misconfiguration `err` shows, if `SIGNS` has it.
pub(crate) fn recognised(err: &redis::RedisError) -> Option<Diagnosis> {
    let detail = verbatim(err);
    let text = format!("{err} {detail}");
    let sign = SIGNS
        .iter()
        .find(|sign| sign.needles.iter().any(|needle| text.contains(needle)))
        .or_else(|| {
            let wrong_password = SIGNS.iter().find(|s| s.needles.contains(&"WRONGPASS"));
            wrong_password.filter(|_| err.kind() == redis::ErrorKind::AuthenticationFailed)
        })?;
    // A name the error quotes (a master name) is said again: `… named 'nosuch'`.
    let what = match sign.what.ends_with("named") {
        _ if sign.what.is_empty() => detail.clone(),
        true => match detail.split('\'').nth(1) {
            Some(name) => format!("{} '{name}'", sign.what),
            None => format!("{} that", sign.what),
        },
        false => sign.what.to_string(),
    };
    Some(Diagnosis {
        verdict: ServerFault::Misconfigured,
        what,
        fix: sign.fix.into(),
        detail,
    })
}

/// The one rule (module comment), applied to any error a connection or request met.
pub(crate) fn diagnose(err: &redis::RedisError) -> Diagnosis {
    let detail = verbatim(err);
    let text = err.to_string();
    let misconfigured = |what: &str, fix: &str| Diagnosis {
        verdict: ServerFault::Misconfigured,
        what: what.into(),
        fix: fix.into(),
        detail: detail.clone(),
    };
    if let Some(seen) = recognised(err) {
        return seen;
    }
    let down = |what: &str| Diagnosis {
        verdict: ServerFault::Down,
        what: what.into(),
        fix: String::new(),
        detail: detail.clone(),
    };
    if err.is_timeout() {
        return down("no answer in time");
    }
    if err.is_connection_refusal() {
        return down("connection refused");
    }
    if let Some(code) = err.code() {
        // Full for now: a client that leaves makes room.
        if PASSING.contains(&code) || detail.contains("max number of clients reached") {
            return down(&detail);
        }
        // Any other reply the server gave instead of doing its part: it says so again next time.
        return misconfigured(&format!("the server refuses: {detail}"), "");
    }
    if is_closed(&text) {
        return down("the connection was closed before any reply");
    }
    down(&crate::human::lowercase_first(&detail))
}

/// The error as the server sent it (`ERR The user …`, its code as written), or the library's
/// first line.
pub(crate) fn verbatim(err: &redis::RedisError) -> String {
    match (err.code(), err.detail()) {
        (Some(code), Some(detail)) => format!("{code} {}", crate::human::first_line(detail).trim()),
        (Some(code), None) => code.to_string(),
        _ => crate::human::first_line(&err.to_string())
            .trim()
            .to_string(),
    }
}

fn is_closed(text: &str) -> bool {
    [
        "reset by peer",
        "closed",
        "Broken pipe",
        "broken pipe",
        "end of file",
    ]
    .iter()
    .any(|words| text.contains(words))
}

/// Whether words that `diagnose` (or `refusal`) gave say the server is set up wrong rather than
/// down: `-v` then says it "cannot vote" rather than that it is "down".
pub(crate) fn cannot_vote(words: &str) -> bool {
    SIGNS.iter().any(|sign| {
        (!sign.what.is_empty() && words.starts_with(sign.what))
            || (sign.what.is_empty() && sign.needles.iter().any(|n| words.contains(n)))
    }) || words.starts_with("the server refuses")
        || words.starts_with("the ACL user may not")
        || words.starts_with("does not know")
        || words.starts_with("does not speak RESP3")
}

#[cfg(test)]
mod tests {
    use super::super::failure::server_error;
    use super::*;

    fn io(kind: std::io::ErrorKind, text: &str) -> redis::RedisError {
        std::io::Error::new(kind, text.to_string()).into()
    }

    #[test]
    fn down_is_the_transport_failing_and_the_rest_is_misconfigured() {
        use std::io::ErrorKind as K;
        for err in [
            io(K::ConnectionRefused, "connection refused"),
            io(K::TimedOut, "timed out"),
            io(
                K::ConnectionReset,
                "connection reset by peer (os error 104)",
            ),
            io(K::UnexpectedEof, "the server closed the connection"),
            server_error("LOADING Redis is loading the dataset in memory"),
            server_error("MASTERDOWN Link with MASTER is down"),
            server_error("ERR max number of clients reached"),
        ] {
            let seen = diagnose(&err);
            assert_eq!(seen.verdict, ServerFault::Down, "{err}: {seen:?}");
            assert!(seen.fix.is_empty());
        }
        let cases = [
            (
                server_error("WRONGPASS invalid username-password pair or user is disabled."),
                "wrong password",
                "--password-file",
            ),
            (
                server_error("NOAUTH Authentication required."),
                "requires a password",
                "redis://:PASSWORD@",
            ),
            (
                server_error("ERR Protocol error: unauthenticated multibulk length"),
                "requires a password",
                "redis://:PASSWORD@",
            ),
            (
                server_error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"),
                "has none",
                "leave the password out",
            ),
            (
                io(K::InvalidData, "invalid peer certificate: UnknownIssuer"),
                "does not trust",
                "--tls-ca",
            ),
            (
                io(K::InvalidData, "invalid peer certificate: certificate not valid for name \"127.0.0.1\"; certificate is only valid for DnsName(\"db.example.com\")"),
                "another name",
                "host the certificate names",
            ),
            (
                io(K::InvalidData, "invalid peer certificate: Expired"),
                "expired",
                "renew",
            ),
            (
                io(K::Other, "received fatal alert: CertificateRequired"),
                "client certificate",
                "--tls-cert",
            ),
            (
                io(K::InvalidData, "received corrupt message of type InvalidContentType"),
                "does not speak TLS",
                "redis://",
            ),
            (
                (redis::ErrorKind::UnexpectedReturnType, "incompatible type", "Parse error at 1".to_string()).into(),
                "not as a Redis server",
                "host and port",
            ),
            (
                server_error("READONLY You can't write against a read only replica."),
                "replica (read-only)",
                "redis+sentinel://",
            ),
            (
                io(K::Other, "no node gave the slot map: 127.0.0.1:1: not in cluster mode (cluster support disabled): name a single server as redis://host:port"),
                "listed as a cluster",
                "redis://host:port",
            ),
            (
                io(K::Other, "no sentinel knows a master named 'x'; check the name after the hosts in the URL"),
                "know no master named 'x'",
                "master name",
            ),
        ];
        for (err, what, fix) in cases {
            let seen = diagnose(&err);
            assert_eq!(seen.verdict, ServerFault::Misconfigured, "{err}: {seen:?}");
            assert!(seen.what.contains(what), "{err}: {seen:?}");
            assert!(seen.fix.contains(fix), "{err}: {seen:?}");
            assert!(cannot_vote(&seen.words()), "{seen:?}");
        }
        // Words that already say who names what are kept whole.
        let split: redis::RedisError = io(K::Other, "the sentinels disagree on the master of 'g1' (a: h1:1; b: h2:2): the group votes only on a master 2 of its 3 sentinels name");
        let seen = diagnose(&split);
        assert!(
            seen.misconfigured()
                && seen
                    .words()
                    .starts_with("the sentinels disagree on the master of 'g1' (a: h1:1"),
            "{seen:?}"
        );
        assert!(cannot_vote(&seen.words()));
        // The server's words are kept, verbatim, for -v and --json.
        let err = server_error("ERR The user executing the script can't run this command");
        assert_eq!(
            diagnose(&err).detail,
            "ERR The user executing the script can't run this command"
        );
    }
}
