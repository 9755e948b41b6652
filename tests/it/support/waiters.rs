//! Waiting acquires and crowds of them: a waiter in the background, the wake-up channels it
//! listens on, shell workers that take turns in a critical section, and the checks that none of
//! them overlapped.

use super::binary::{redlock_path, stderr_of, stdout_of, SLACK};
use super::cluster::{Cluster, KEY, TEST_TIMEOUT};
use super::process::{Cmd, Running};
use super::redis_server::Redis;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

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
                .env("REDLOCK_SERVERS", cluster.urls())
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
