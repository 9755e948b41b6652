//! Waiting acquires: woken by a release, still served when the notification is lost, and never
//! two holders at once however many wait.

use crate::harness::*;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const CHANNEL: &str = "redlock:job:released";

/// A waiting `acquire` in the background, with a retry delay so long that only a wake-up (or
/// the holder's TTL) can explain a quick success.
fn spawn_waiter(cluster: &Cluster) -> Child {
    cluster.spawn(&["acquire", "job", "--wait", "30s", "--retry-delay", "20s"])
}

/// The waiter acquired the lock, and a quorum holds its token (not necessarily every server:
/// one slower than --timeout under load may miss the SET).
fn assert_won(cluster: &Cluster, output: &Output) {
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(output));
    assert!(cluster.holding(KEY, &stdout_of(output)) >= 2);
}

/// How many connections listen for releases of the lock, on every server.
fn subscribers(cluster: &Cluster) -> usize {
    cluster
        .servers
        .iter()
        .map(|server| {
            let (_, count): (String, usize) = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg(CHANNEL)
                .query::<Vec<(String, usize)>>(&mut server.connection())
                .unwrap()
                .remove(0);
            count
        })
        .sum()
}

fn finish(child: Child, limit: Duration) -> Output {
    let reaper = std::thread::spawn(move || child.wait_with_output().unwrap());
    wait_for("the waiter to exit", limit, || reaper.is_finished());
    reaper.join().unwrap()
}

#[test]
fn a_waiter_gets_the_lock_as_soon_as_it_is_released() {
    let cluster = Cluster::start(3);
    let holder = cluster.acquire_token("job", &["--ttl", "60s"]);
    let waiter = spawn_waiter(&cluster);
    wait_for(
        "the waiter to subscribe everywhere",
        Duration::from_secs(5),
        || subscribers(&cluster) == 3,
    );
    // Let the waiter settle into its 10–30 s pause after the look it takes on subscribing.
    std::thread::sleep(Duration::from_millis(300));
    let released = Instant::now();
    cluster
        .redlock()
        .args(["release", "job", "--token", &holder])
        .assert()
        .code(0);
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
    let output = finish(spawn_waiter(&cluster), Duration::from_secs(25));
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
    let workers: Vec<Child> = (0..8)
        .map(|_| {
            Command::new("sh")
                .args(["-c", script])
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("REDLOCK", redlock_path())
                .env("REDLOCK_SERVERS", cluster.urls())
                .env("DIR", dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for worker in workers {
        let output = finish(worker, Duration::from_secs(60));
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    assert!(
        !dir.path().join("errors").exists(),
        "two holders overlapped"
    );
    let counter = std::fs::read_to_string(dir.path().join("counter")).unwrap();
    assert_eq!(counter.trim(), "40");
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
}
