//! Waiting acquires: woken by a release, still served when the notification is lost, and never
//! two holders at once however many wait (over TLS too).

use crate::support::waiters::*;
use crate::support::*;
use std::time::{Duration, Instant};

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
    let output = waiter.wait();
    let took = released.elapsed();
    assert_won(&cluster, &output);
    assert!(
        took < WAITER_RETRY_DELAY / 2,
        "took {took:?} after the release: as long as a retry of its own"
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
    const TTL: Duration = Duration::from_secs(2);
    let cluster = Cluster::start(3);
    // The holder never releases: its key expires, and expiry announces nothing.
    let acquiring = Instant::now();
    cluster.acquire_token("job", &["--ttl", &format!("{}s", TTL.as_secs())]);
    let output = spawn_waiter(&cluster, &[]).wait();
    let took = acquiring.elapsed();
    assert_won(&cluster, &output);
    // Not before the holder's key expired; not as late as a retry of the waiter's own.
    assert!(
        took >= TTL - CLOCK_SKEW,
        "took {took:?} for a lock whose ttl was {TTL:?}"
    );
    assert!(
        took < TTL + WAITER_RETRY_DELAY / 2,
        "took {took:?} for a lock whose ttl was {TTL:?}"
    );
}

/// A worker of the crowds below: five critical sections, each taken with `acquire --wait` and
/// given back with `release`. Each claims a marker with mkdir, which fails if another holder is
/// inside, and does a read-increment-write that loses counts if two overlap.
const FIVE_SECTIONS: &str = r#"
    for i in 1 2 3 4 5; do
      token=$("$REDLOCK" acquire job --wait "$WAIT" --retry-delay 2s) || exit 1
      mkdir "$DIR/inside" || echo overlap >> "$DIR/errors"
      n=$(cat "$DIR/counter"); echo $((n + 1)) > "$DIR/counter"
      rmdir "$DIR/inside"
      "$REDLOCK" release job --token "$token" || exit 2
    done"#;

#[test]
fn many_waiters_never_hold_the_lock_together() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("counter"), "0\n").unwrap();
    let crowd = (8, 5, Duration::from_secs(60));
    let workers = spawn_workers(&cluster, crowd, FIVE_SECTIONS, dir.path(), &[]);
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
fn many_waiters_over_tls_never_hold_the_lock_together() {
    let certs = Certs::generate();
    let servers: Vec<TlsRedis> = (0..3).map(|_| TlsRedis::start(&certs, false)).collect();
    // Every round on the poll loop's TLS wires, decided at its quorum, and every waiter
    // listening on its rounds' TLS connections for the release that hands it the lock.
    let urls: Vec<String> = servers.iter().map(TlsRedis::url).collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("counter"), "0\n").unwrap();
    let ca = certs.path("ca.crt");
    let crowd = (6, 5, Duration::from_secs(60));
    let env = [("REDLOCK_TLS_CA", ca.as_str())];
    let workers = spawn_workers_on(&urls.join(","), crowd, FIVE_SECTIONS, dir.path(), &env);
    assert_exclusive(workers, dir.path(), 30);
    // The lock is free on a quorum once the hand-over placeholders lapse. (A release decided
    // on two servers reaches the third too unless its handshake there is slower than a
    // one-shot waits for when it goes, lock/nodes/behind.rs: on a machine this busy, that
    // copy may stay until its ttl; rounds/poll.rs checks the releases of a quieter one.)
    wait_for("the lock free on a quorum", Duration::from_secs(5), || {
        servers
            .iter()
            .filter(|server| server.get(KEY).is_none())
            .count()
            >= 2
    });
}

#[test]
fn a_release_right_after_a_waiter_subscribed_is_picked_up_before_its_timeout() {
    // A long per-server timeout: a waiter that sat out that budget before looking again could not
    // have finished before `spawned + TIMEOUT`, however fast the machine.
    const TIMEOUT: Duration = Duration::from_secs(5);
    let cluster = Cluster::start(3);
    let holder = cluster.acquire_token("job", &["--ttl", "60s"]);
    let spawned = Instant::now();
    let waiter = spawn_waiter(&cluster, &["--timeout", &format!("{}s", TIMEOUT.as_secs())]);
    wait_for(
        "the waiter to subscribe everywhere",
        Duration::from_secs(5),
        || subscribers(&cluster) == 3,
    );
    release_holder(&cluster, &holder);
    let output = waiter.wait();
    let exited = spawned.elapsed();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert!(
        exited < TIMEOUT,
        "the waiter exited {exited:?} after it started: it sat out its {TIMEOUT:?} timeout"
    );
}

#[test]
fn wait_gets_the_lock_once_the_holder_lets_go() {
    const TTL: Duration = Duration::from_secs(1);
    let cluster = Cluster::start(3);
    let acquiring = Instant::now();
    let ttl = format!("{}s", TTL.as_secs());
    let token = cluster.acquire_token("job", &["--ttl", &ttl, "--timeout", "100ms"]);
    let second = cluster.acquire_token("job", &["--wait", "10s", "--retry-delay", "50ms"]);
    assert_ne!(second, token);
    let took = acquiring.elapsed();
    assert!(
        took >= TTL - CLOCK_SKEW,
        "{took:?}: the first holder's key had not expired"
    );
    // The first holder's key expires on each server at its own moment: any quorum will do.
    assert!(cluster.holding(KEY, &second) >= 2);
    let output = cluster
        .redlock()
        .args(["acquire", "job", "--wait", "300ms"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(75));
    assert!(
        stderr_of(&output).contains("after waiting 300ms"),
        "{}",
        stderr_of(&output)
    );
}
