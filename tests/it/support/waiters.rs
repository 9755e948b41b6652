//! Waiting acquires and crowds of them: a waiter in the background, the wake-up channels it
//! listens on, shell workers that take turns in a critical section, and the checks that none of
//! them overlapped; what waiters do on each server, watched on one connection per server, and a
//! waiter brought past its first attempts.

use super::binary::{redlock_path, stderr_of, stdout_of, SLACK};
use super::cluster::{Cluster, KEY, TEST_TIMEOUT};
use super::process::{Cmd, Running};
use super::redis_server::Redis;
use super::wait_for;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// On one server (its `connection`), how many waiters listen on the wake-up channels of the
/// lock key `key`, and how many are in `queue`; none where it cannot say.
pub fn waiting_on(connection: &mut redis::Connection, key: &str, queue: &str) -> (usize, usize) {
    let channels: Vec<String> = redis::cmd("PUBSUB")
        .arg("CHANNELS")
        .arg(format!("{key}\x1fwake\x1f*"))
        .query(connection)
        .unwrap_or_default();
    let queued: usize = redis::cmd("ZCARD")
        .arg(queue)
        .query(connection)
        .unwrap_or(0);
    (channels.len(), queued)
}

/// A waiter with a `--retry-delay` of `WAITER_RETRY_DELAY`, released at `released`, won by a
/// wake-up: it exited 0 before its next try of its own could have come.
pub fn assert_woken(output: &Output, released: Instant) {
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(output));
    let took = released.elapsed();
    assert!(took < WAITER_RETRY_DELAY / 2, "{took:?}");
}

/// The `--wait` of `spawn_waiter`.
pub const WAITER_WAIT: Duration = Duration::from_secs(30);

/// The `--retry-delay` of `spawn_waiter`: it pauses 10–30 s between attempts of its own, so
/// anything it does sooner than `WAITER_RETRY_DELAY / 2` after a release was a wake-up.
pub const WAITER_RETRY_DELAY: Duration = Duration::from_secs(20);

/// A waiting `acquire` in the background, with a retry delay so long that only a wake-up (or
/// the holder's TTL) can explain a quick success; `extra` arguments override those defaults.
pub fn spawn_waiter(cluster: &Cluster, extra: &[&str]) -> Running {
    let wait = format!("{}s", WAITER_WAIT.as_secs());
    let retry_delay = format!("{}s", WAITER_RETRY_DELAY.as_secs());
    cluster
        .redlock()
        .env("REDLOCK_WAIT", wait)
        .env("REDLOCK_RETRY_DELAY", retry_delay)
        .args(["acquire", "job"])
        .args(extra)
        .spawn()
}

/// Releases the lock `job` held with `token`.
pub fn release_holder(cluster: &Cluster, token: &str) {
    cluster
        .cmd(["release", "job", "--token", token])
        .assert()
        .success();
}

/// The waiter acquired the lock, and a quorum holds its token (not necessarily every server:
/// one slower than --timeout under load may miss the SET).
pub fn assert_won(cluster: &Cluster, output: &Output) {
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(output));
    assert!(cluster.holding(KEY, &stdout_of(output)) >= 2);
}

/// The wake-up channels listened to on `server` for the lock at `key`: each waiter has its own,
/// `<key>\x1fwake\x1f<waiter id>`.
pub fn wake_channels(server: &Redis, key: &str) -> Vec<String> {
    redis::cmd("PUBSUB")
        .arg("CHANNELS")
        .arg(format!("{key}\x1fwake\x1f*"))
        .query(&mut server.connection())
        .unwrap()
}

/// How many waiters for `job` listen for their wake-up on every running server, summed.
pub fn subscribers(cluster: &Cluster) -> usize {
    cluster
        .servers
        .iter()
        .filter(|server| server.is_running())
        .map(|server| wake_channels(server, KEY).len())
        .sum()
}

/// `count` shell workers, each running `script` once, which runs `sections` critical sections
/// of `"$REDLOCK" … --wait "$WAIT"`. With `$REDLOCK`, the cluster's servers, `$DIR`, `$WAIT`
/// and `env` in their environment. A worker may take up to its `--wait` per section.
pub fn spawn_workers(
    cluster: &Cluster,
    crowd: (usize, u32, Duration),
    script: &str,
    dir: &Path,
    env: &[(&str, &str)],
) -> Vec<Running> {
    spawn_workers_on(&cluster.urls(), crowd, script, dir, env)
}

/// `spawn_workers` on `servers` (comma-separated URLs: TLS ones, say, with `REDLOCK_TLS_CA` in
/// `env`).
pub fn spawn_workers_on(
    servers: &str,
    (count, sections, wait): (usize, u32, Duration),
    script: &str,
    dir: &Path,
    env: &[(&str, &str)],
) -> Vec<Running> {
    (0..count)
        .map(|_| {
            let mut command = Command::new("sh");
            command
                .args(["-c", script])
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("REDLOCK", redlock_path())
                .env("REDLOCK_SERVERS", servers)
                .env("REDLOCK_TIMEOUT", TEST_TIMEOUT)
                .env("DIR", dir)
                .env("WAIT", format!("{}ms", wait.as_millis()))
                .envs(env.iter().copied());
            Cmd::new(command).deadline(wait * sections + SLACK).spawn()
        })
        .collect()
}

/// Every worker succeeded, no section found another inside (`$DIR/errors`), and the counter in
/// `$DIR/counter` lost no increment.
pub fn assert_exclusive(workers: Vec<Running>, dir: &Path, expected: usize) {
    for worker in workers {
        let output = worker.wait();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    assert!(!dir.join("errors").exists(), "two holders overlapped");
    let counter = std::fs::read_to_string(dir.join("counter")).unwrap();
    assert_eq!(counter.trim(), expected.to_string());
}

/// One connection per server, opened once, to watch what waiters do there without opening a
/// connection a count would see.
pub struct Watch {
    connections: Vec<redis::Connection>,
}

impl Watch {
    pub fn new(cluster: &Cluster) -> Watch {
        Watch {
            connections: cluster.servers.iter().map(Redis::connection).collect(),
        }
    }

    fn info(&mut self, index: usize, section: &str) -> String {
        redis::cmd("INFO")
            .arg(section)
            .query(&mut self.connections[index])
            .unwrap()
    }

    /// Scripts server `index` ran (EVAL and EVALSHA): one for each attempt of a waiter.
    pub fn scripts(&mut self, index: usize) -> u64 {
        self.info(index, "commandstats")
            .lines()
            .filter(|line| {
                line.starts_with("cmdstat_eval:") || line.starts_with("cmdstat_evalsha:")
            })
            .filter_map(|line| {
                line.split("calls=")
                    .nth(1)?
                    .split(',')
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .sum()
    }

    /// Connections server `index` accepted since it started.
    pub fn accepted(&mut self, index: usize) -> u64 {
        self.info(index, "stats")
            .lines()
            .find_map(|line| line.strip_prefix("total_connections_received:"))
            .map_or(0, |value| value.trim().parse().unwrap())
    }

    /// How many waiters for `job` listen on server `index`, and how many are in its queue.
    pub fn waiting(&mut self, index: usize) -> (usize, usize) {
        let connection = &mut self.connections[index];
        let listening: Vec<String> = redis::cmd("PUBSUB")
            .arg("CHANNELS")
            .arg(format!("{KEY}\x1fwake\x1f*"))
            .query(connection)
            .unwrap();
        let queued: usize = redis::cmd("ZCARD")
            .arg(format!("{KEY}\x1fqueue"))
            .query(connection)
            .unwrap();
        (listening.len(), queued)
    }

    /// Waits until `count` waiters listen on, and are queued on, each of the servers `on`.
    pub fn wait_for_waiters(&mut self, on: &[usize], count: usize) {
        wait_for(
            "the waiters to queue and listen",
            Duration::from_secs(20),
            || {
                on.iter()
                    .all(|&index| self.waiting(index) == (count, count))
            },
        );
    }

    /// Runs `command` on each of the servers `on`.
    pub fn each(&mut self, on: &[usize], command: &redis::Cmd) {
        for &index in on {
            let _: redis::Value = command.query(&mut self.connections[index]).unwrap();
        }
    }

    /// The value of the lock `job` on server `index`.
    pub fn value(&mut self, index: usize) -> Option<String> {
        redis::cmd("GET")
            .arg(KEY)
            .query(&mut self.connections[index])
            .unwrap()
    }
}

/// Sets `job` held by the token `holder` (`release job --token holder` frees it), expiring
/// `ttl` from now.
pub fn holder_key(ttl: Duration) -> redis::Cmd {
    let mut set = redis::cmd("SET");
    set.arg(KEY)
        .arg("holder")
        .arg("PX")
        .arg(ttl.as_millis() as u64);
    set
}

/// Starts a waiter with `spawn` (whose own pauses must be 10 s or more: `WAITER_RETRY_DELAY`)
/// and returns once it has asked at least twice on every server of `live`, then settled into
/// such a pause: `holder_key` is kept short (a head's pause ends when the holder's TTL it saw
/// runs out), then made long, and the waiter is let to see the long one. The servers `live`
/// must be free of other waiters' attempts meanwhile (others in a long pause are).
pub fn past_first_attempts(
    watch: &mut Watch,
    live: &[usize],
    spawn: impl FnOnce() -> Running,
) -> Running {
    let short = Duration::from_millis(500);
    watch.each(live, &holder_key(short));
    let start: Vec<u64> = live.iter().map(|&i| watch.scripts(i)).collect();
    let waiter = spawn();
    let mut keep_short = redis::cmd("PEXPIRE");
    keep_short.arg(KEY).arg(short.as_millis() as u64);
    wait_for(
        "the waiter's second attempt",
        Duration::from_secs(20),
        || {
            watch.each(live, &keep_short);
            live.iter()
                .zip(&start)
                .all(|(&i, &s)| watch.scripts(i) >= s + 2)
        },
    );
    // Every attempt a server counts from here on saw the long TTL on every server, since every
    // SET came before every count read here.
    watch.each(live, &holder_key(Duration::from_secs(60)));
    let seen: Vec<u64> = live.iter().map(|&i| watch.scripts(i)).collect();
    wait_for(
        "an attempt that saw the long TTL",
        Duration::from_secs(20),
        || live.iter().zip(&seen).all(|(&i, &s)| watch.scripts(i) > s),
    );
    waiter
}
