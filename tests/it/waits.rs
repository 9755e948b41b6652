//! Waiting acquires: woken by a release, still served when the notification is lost, and never
//! two holders at once however many wait.

use crate::harness::*;
use std::path::Path;
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

/// A waiting `acquire` in the background, with a retry delay so long that only a wake-up (or
/// the holder's TTL) can explain a quick success; `extra` arguments override those defaults.
pub fn spawn_waiter(cluster: &Cluster, extra: &[&str]) -> Child {
    let mut command = cluster.process();
    command
        .env("REDLOCK_WAIT", "30s")
        .env("REDLOCK_RETRY_DELAY", "20s")
        .args(["acquire", "job"])
        .args(extra);
    spawn_captured(command)
}

/// Releases the lock `job` held with `token`.
pub fn release_holder(cluster: &Cluster, token: &str) {
    cluster
        .redlock()
        .args(["release", "job", "--token", token])
        .assert()
        .code(0);
}

/// The waiter acquired the lock, and a quorum holds its token (not necessarily every server:
/// one slower than --timeout under load may miss the SET).
pub fn assert_won(cluster: &Cluster, output: &Output) {
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(output));
    assert!(cluster.holding(KEY, &stdout_of(output)) >= 2);
}

/// How many waiters listen for their wake-up on every server, summed: each waiter has its own
/// channel, `<key>\x1fwake\x1f<waiter id>`.
pub fn subscribers(cluster: &Cluster) -> usize {
    cluster
        .servers
        .iter()
        .filter(|server| server.is_running())
        .map(|server| {
            let channels: Vec<String> = redis::cmd("PUBSUB")
                .arg("CHANNELS")
                .arg(format!("{KEY}\x1fwake\x1f*"))
                .query(&mut server.connection())
                .unwrap();
            channels.len()
        })
        .sum()
}

pub fn finish(child: Child, limit: Duration) -> Output {
    let reaper = std::thread::spawn(move || child.wait_with_output().unwrap());
    wait_for("the waiter to exit", limit, || reaper.is_finished());
    reaper.join().unwrap()
}

/// `count` shell workers running `script`, with `$REDLOCK`, the cluster's servers, `$DIR` and
/// `env` in their environment.
pub fn spawn_workers(
    cluster: &Cluster,
    count: usize,
    script: &str,
    dir: &Path,
    env: &[(&str, &str)],
) -> Vec<Child> {
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
                .envs(env.iter().copied());
            spawn_captured(command)
        })
        .collect()
}

/// Every worker succeeded, no section found another inside (`$DIR/errors`), and the counter in
/// `$DIR/counter` lost no increment.
pub fn assert_exclusive(workers: Vec<Child>, dir: &Path, expected: usize) {
    for worker in workers {
        let output = finish(worker, Duration::from_secs(120));
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    assert!(!dir.join("errors").exists(), "two holders overlapped");
    let counter = std::fs::read_to_string(dir.join("counter")).unwrap();
    assert_eq!(counter.trim(), expected.to_string());
}

#[test]
fn a_waiter_gets_the_lock_as_soon_as_it_is_released() {
    let cluster = Cluster::start(3);
    let holder = cluster.acquire_token("job", &["--ttl", "60s"]);
    let waiter = spawn_waiter(&cluster, &[]);
    wait_for(
        "the waiter to subscribe everywhere",
        Duration::from_secs(5),
        || subscribers(&cluster) == 3,
    );
    // Let the waiter settle into its 10–30 s pause after the look it takes on subscribing.
    std::thread::sleep(Duration::from_millis(300));
    let released = Instant::now();
    release_holder(&cluster, &holder);
    let output = finish(waiter, Duration::from_secs(25));
    let took = released.elapsed();
    assert_won(&cluster, &output);
    assert!(
        took < Duration::from_secs(3),
        "took {took:?} after the release"
    );
    // Not a terminal: no progress line.
    assert_eq!(stderr_of(&output), "");
    // The subscriptions end with the wait.
    wait_for("the subscriptions to close", Duration::from_secs(5), || {
        subscribers(&cluster) == 0
    });
}

#[test]
fn a_waiter_gets_an_expired_lock_without_a_notification() {
    let cluster = Cluster::start(3);
    // The holder never releases: its key expires, and expiry announces nothing.
    cluster.acquire_token("job", &["--ttl", "2s"]);
    let started = Instant::now();
    let output = finish(spawn_waiter(&cluster, &[]), Duration::from_secs(25));
    let took = started.elapsed();
    assert_won(&cluster, &output);
    assert!(
        took < Duration::from_secs(6),
        "took {took:?} for a lock whose ttl was 2s"
    );
}

#[test]
fn many_waiters_never_hold_the_lock_together() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("counter"), "0\n").unwrap();
    // Each critical section claims a marker with mkdir, which fails if another holder is inside,
    // and does a read-increment-write that loses counts if two overlap.
    let script = r#"
        for i in 1 2 3 4 5; do
          token=$("$REDLOCK" acquire job --wait 60s --retry-delay 2s) || exit 1
          mkdir "$DIR/inside" || echo overlap >> "$DIR/errors"
          n=$(cat "$DIR/counter"); echo $((n + 1)) > "$DIR/counter"
          rmdir "$DIR/inside"
          "$REDLOCK" release job --token "$token" || exit 2
        done"#;
    let workers = spawn_workers(&cluster, 8, script, dir.path(), &[]);
    assert_exclusive(workers, dir.path(), 40);
    // A release hands the lock to the next waiter for a moment (`next:<waiter>`); one that
    // won before a server's hand-over reached it leaves that placeholder to lapse.
    wait_for(
        "nothing left on the servers",
        Duration::from_secs(5),
        || cluster.values(KEY) == vec![None, None, None],
    );
}

#[test]
fn a_release_right_after_a_waiter_subscribed_is_picked_up_before_its_timeout() {
    // A long per-server timeout: a waiter that sat out that budget before looking again could not
    // have finished before `spawned + TIMEOUT`, however fast the machine.
    const TIMEOUT: Duration = Duration::from_secs(5);
    let cluster = Cluster::start(3);
    let holder = cluster.acquire_token("job", &["--ttl", "60s"]);
    let spawned = Instant::now();
    let waiter = spawn_waiter(&cluster, &["--timeout", "5s"]);
    wait_for(
        "the waiter to subscribe everywhere",
        Duration::from_secs(5),
        || subscribers(&cluster) == 3,
    );
    release_holder(&cluster, &holder);
    let output = finish(waiter, Duration::from_secs(25));
    let exited = spawned.elapsed();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert!(
        exited < TIMEOUT,
        "the waiter exited {exited:?} after it started: it sat out its {TIMEOUT:?} timeout"
    );
}
