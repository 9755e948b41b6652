//! The servers most tests lock on: N redis-server processes as one lock sees them, the redlock
//! command configured for them (for either harness), what each server holds, and a black-holed
//! server.

use super::binary::{redlock_command, stdout_of};
use super::one_shot::{one_shot, Call};
use super::process::{Cmd, Running};
use super::redis_server::{is_index, Redis};
use std::ffi::OsStr;
use std::net::TcpListener;
use std::process::Output;
use std::time::{Duration, Instant};

/// The per-server timeout tests run with unless they say otherwise.
pub const TEST_TIMEOUT: &str = "400ms";

/// The key of the lock named `job`, which most tests take.
pub const KEY: &str = "redlock:job";

/// Whether `key` is one every run leaves on the servers by design, not something a test of
/// what is left counts: a lock's run history (docs/recipes.md: "Did last night's job run?") or
/// the listing's index of the keys under the prefix (docs/reference.md, `<prefix>␟index`).
pub fn is_kept_by_design(key: &str) -> bool {
    key.ends_with("\u{1f}history") || is_index(key)
}

/// How far a server's expiry may seem early on the tests' clock: Redis counts in whole
/// milliseconds on the wall clock, the tests on the monotonic one. Lower bounds on when a key
/// can be gone allow this much, and no more.
pub const CLOCK_SKEW: Duration = Duration::from_millis(5);

/// The clock drift Redlock allows for on a TTL: 1 % of it plus 2 ms. A grant's validity is the
/// TTL less this and the time the acquisition took.
pub fn drift(ttl: Duration) -> Duration {
    ttl / 100 + Duration::from_millis(2)
}

/// Asserts what is left (`left_ms`, read just now) of a TTL or validity of `full` that began no
/// earlier than `since`: no more than `full`, and no less than `full` minus the time since.
pub fn assert_left(what: &str, left_ms: u64, full: Duration, since: Instant) {
    let floor = full.saturating_sub(since.elapsed() + CLOCK_SKEW);
    let left = Duration::from_millis(left_ms);
    assert!(
        floor <= left && left <= full,
        "{what}: {left:?} left, expected from {floor:?} to {full:?}"
    );
}

/// N servers, as the lock sees them.
pub struct Cluster {
    pub servers: Vec<Redis>,
}

impl Cluster {
    pub fn start(n: usize) -> Cluster {
        // Started from this thread: PR_SET_PDEATHSIG fires when the spawning *thread* exits.
        Cluster {
            servers: (0..n).map(|_| Redis::start()).collect(),
        }
    }

    pub fn urls(&self) -> String {
        self.servers
            .iter()
            .map(|s| s.url_with_password())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `redlock` on this cluster, to spawn or run through `process`.
    pub fn redlock(&self) -> Cmd {
        Cmd::new(redlock_on(&self.urls()))
    }

    /// `redlock ARGS` on this cluster, for one `assert_cmd` run.
    pub fn cmd<I, S>(&self, args: I) -> assert_cmd::Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        one_shot(redlock_on(&self.urls()), args)
    }

    /// `redlock ARGS` on this cluster, run to its end and asserted in a chain: [`Call`].
    pub fn call<I, S>(&self, args: I) -> Call
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Call::run(redlock_on(&self.urls()), args)
    }

    /// `redlock ARGS` started in the background, stdin closed and its output captured.
    pub fn spawn(&self, args: &[&str]) -> Running {
        self.redlock().args(args).spawn()
    }

    /// `redlock acquire NAME ARGS`, which must succeed: the token it printed.
    pub fn acquire_token(&self, name: &str, args: &[&str]) -> String {
        let acquired = self.cmd([&["acquire", name], args].concat()).assert();
        stdout_of(acquired.success().get_output())
    }

    /// The lock's value on every server.
    pub fn values(&self, key: &str) -> Vec<Option<String>> {
        self.servers
            .iter()
            .map(|s| if s.is_running() { s.get(key) } else { None })
            .collect()
    }

    /// How many servers hold `value` at `key`.
    pub fn holding(&self, key: &str, value: &str) -> usize {
        self.values(key)
            .iter()
            .filter(|v| v.as_deref() == Some(value))
            .count()
    }
}

/// `redlock` with only `servers` (comma-separated URLs) configured, and no REDLOCK_* from the
/// caller's env.
pub fn redlock_on(servers: &str) -> std::process::Command {
    let mut command = redlock_command();
    command.env("REDLOCK_SERVERS", servers);
    // More than the 200ms default: a loaded CI machine must not turn a slow healthy server into
    // a missing vote. Tests about timeouts pass --timeout themselves.
    command.env("REDLOCK_TIMEOUT", TEST_TIMEOUT);
    command
}

/// `redlock ARGS` on `cluster`, run to its end.
pub fn run(cluster: &Cluster, args: &[&str]) -> Output {
    cluster.redlock().args(args).output().unwrap()
}

/// A port that accepts TCP connections and never reads or answers: a black-holed server.
pub struct BlackHole {
    listener: TcpListener,
}

impl BlackHole {
    pub fn start() -> BlackHole {
        BlackHole {
            listener: TcpListener::bind("127.0.0.1:0").unwrap(),
        }
    }

    pub fn url(&self) -> String {
        format!(
            "redis://127.0.0.1:{}",
            self.listener.local_addr().unwrap().port()
        )
    }
}
