//! A crowd of waiters: a release wakes one of them, a dead or deaf waiter holds nobody up, the
//! crowd survives a server dying, and waiters are served in the order they arrived.

use crate::support::waiters::*;
use crate::support::*;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Starts `count` waiters one after another, each once the one before it listens on every
/// server (so their arrival order is certain), at least `apart` from each other.
fn queue_waiters(
    cluster: &Cluster,
    count: usize,
    apart: Duration,
    spawn: impl Fn(usize) -> Running,
) -> Vec<Running> {
    let running = cluster.servers.iter().filter(|s| s.is_running()).count();
    (0..count)
        .map(|i| {
            let started = Instant::now();
            let child = spawn(i);
            wait_for(
                "the waiter to listen everywhere",
                Duration::from_secs(20),
                || subscribers(cluster) == (i + 1) * running,
            );
            std::thread::sleep(apart.saturating_sub(started.elapsed()));
            child
        })
        .collect()
}

/// Watches `server` with MONITOR until `done` says stop, and returns the waiters that ran the
/// acquire script meanwhile, by the queue entry they sent (its fifth script argument; a one-shot sends
/// none, a release has no such argument). A process that asks twice, on two connections, counts
/// once.
fn acquirers_while(server: &Redis, done: impl FnOnce()) -> BTreeSet<String> {
    let mut monitor = server.connection();
    monitor
        .send_packed_command(&redis::cmd("MONITOR").get_packed_command())
        .unwrap();
    let _: String = redis::from_redis_value(monitor.recv_response().unwrap()).unwrap();
    monitor
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = std::thread::spawn({
        let stop = stop.clone();
        move || {
            let mut seen = BTreeSet::new();
            loop {
                match monitor.recv_response() {
                    Ok(value) => {
                        let line: String = redis::from_redis_value(value).unwrap_or_default();
                        let Some((_, command)) = line
                            .split_once(" [")
                            .and_then(|(_, rest)| rest.split_once("] "))
                        else {
                            continue;
                        };
                        // "evalsha" "sha" "3" key queue index token ttl n fenced entry stamp
                        // lease prefix reserve semaphore queued trusted indexed: a mutex's
                        // acquire script without --fence
                        let items: Vec<&str> = command.split("\" \"").collect();
                        if items[0].eq_ignore_ascii_case("\"evalsha") && items.len() == 19 {
                            seen.insert(items[10].to_string());
                        }
                    }
                    Err(err) if err.is_timeout() && !stop.load(Ordering::Relaxed) => {}
                    Err(_) => return seen,
                }
            }
        }
    });
    done();
    stop.store(true, Ordering::Relaxed);
    reader.join().unwrap()
}

#[test]
fn a_release_with_16_queued_waiters_makes_only_one_of_them_ask() {
    let cluster = Cluster::start(3);
    let holder = cluster.acquire_token("job", &["--ttl", "60s"]);
    let mut waiters = queue_waiters(&cluster, 16, Duration::ZERO, |_| {
        spawn_waiter(&cluster, &["--wait", "60s", "--retry-delay", "30s"])
    });
    let acquirers = acquirers_while(&cluster.servers[0], || {
        release_holder(&cluster, &holder);
        // The first to arrive is the one woken, and it wins.
        let first = waiters.remove(0).wait();
        assert_won(&cluster, &first);
        // Before the fix every waiter asked within a few ms of the release; give any straggler
        // a moment to show itself.
        std::thread::sleep(Duration::from_millis(300));
    });
    assert_eq!(acquirers.len(), 1, "{acquirers:?}");
    assert!(waiters.iter_mut().all(|w| w.try_wait().is_none()));
    for waiter in waiters {
        waiter.kill();
    }
}

#[test]
fn a_killed_waiter_does_not_stall_the_waiters_behind_it() {
    let cluster = Cluster::start(3);
    let holder = cluster.acquire_token("job", &["--ttl", "60s"]);
    // With `WAITER_RETRY_DELAY`, the second waiter's own schedule would not ask before that long
    // (half the delay, times two for its place in the queue). Only a wake-up explains sooner.
    let mut waiters = queue_waiters(&cluster, 2, Duration::ZERO, |_| spawn_waiter(&cluster, &[]));
    waiters.remove(0).kill();
    wait_for(
        "the killed waiter's subscriptions to close",
        Duration::from_secs(10),
        || subscribers(&cluster) == 3,
    );
    let released = Instant::now();
    release_holder(&cluster, &holder);
    let second = waiters.remove(0).wait();
    assert_eq!(second.status.code(), Some(0), "{}", stderr_of(&second));
    assert!(
        released.elapsed() < WAITER_RETRY_DELAY,
        "the second waiter waited for its own schedule: {:?}",
        released.elapsed()
    );
}

#[test]
fn a_waiter_whose_notification_is_lost_still_gets_the_lock() {
    let cluster = Cluster::start(3);
    let holder = cluster.acquire_token("job", &["--ttl", "60s"]);
    let waiter = spawn_waiter(&cluster, &["--retry-delay", "1s"]);
    wait_for(
        "the waiter to listen everywhere",
        Duration::from_secs(10),
        || subscribers(&cluster) == 3,
    );
    for server in &cluster.servers {
        let _: i64 = redis::cmd("CLIENT")
            .arg("KILL")
            .arg("TYPE")
            .arg("pubsub")
            .query(&mut server.connection())
            .unwrap();
    }
    assert_eq!(subscribers(&cluster), 0);
    release_holder(&cluster, &holder);
    let output = waiter.wait();
    assert_won(&cluster, &output);
}

#[test]
fn a_crowd_of_waiters_over_five_servers_keeps_exclusion_when_one_server_dies() {
    let mut cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("counter"), "0\n").unwrap();
    // mkdir fails if another holder is inside; the read-increment-write loses counts if two
    // sections overlap.
    let section = r#"mkdir "$DIR/inside" || echo overlap >> "$DIR/errors"
        n=$(cat "$DIR/counter"); echo $((n + 1)) > "$DIR/counter"
        rmdir "$DIR/inside""#;
    let script = r#"for i in 1 2 3 4 5; do
          "$REDLOCK" exec job --wait "$WAIT" -- sh -c "$SECTION" || exit 1
        done"#;
    // 12 waiters (32 with REDLOCK_TEST_FULL=1), four times the servers, of 5 sections each.
    let count = stress(12, 32);
    let crowd = (count, 5, Duration::from_secs(120));
    let workers = spawn_workers(&cluster, crowd, script, dir.path(), &[("SECTION", section)]);
    let counter = || {
        std::fs::read_to_string(dir.path().join("counter"))
            .ok()
            .and_then(|n| n.trim().parse::<usize>().ok())
            .unwrap_or(0)
    };
    wait_for("half of the sections", Duration::from_secs(120), || {
        counter() >= count * 5 / 2
    });
    cluster.servers[0].kill();
    assert_exclusive(workers, dir.path(), count * 5);
    // A release hands the lock to the next waiter for a moment (`next:<waiter>`); one that
    // won before a server's hand-over reached it leaves that placeholder to lapse.
    wait_for(
        "nothing left on the servers",
        Duration::from_secs(5),
        || cluster.values(KEY) == vec![None; 5],
    );
}

#[test]
fn waiters_are_served_in_the_order_they_arrived() {
    let cluster = Cluster::start(3);
    let holder = cluster.acquire_token("job", &["--ttl", "60s"]);
    let dir = tempfile::tempdir().unwrap();
    let order = dir.path().join("order");
    let waiters = queue_waiters(&cluster, 8, Duration::from_millis(100), |i| {
        // A retry delay far beyond the test: each is served only by its wake-up.
        cluster.spawn(&[
            "exec",
            "job",
            "--wait",
            "60s",
            "--retry-delay",
            "60s",
            "--",
            "sh",
            "-c",
            &format!("echo {i} >> '{}'", order.display()),
        ])
    });
    release_holder(&cluster, &holder);
    for waiter in waiters {
        let output = waiter.wait();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    let served: Vec<String> = std::fs::read_to_string(&order)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(served, (0..8).map(|i| i.to_string()).collect::<Vec<_>>());
}
