//! A Redis Cluster under a held lock changing its mind: failovers under `exec` (to a new master
//! that has the key, and to one that does not), and a slot migrated while waiters wait. One real
//! cluster (three masters, three replicas) per test: a test's failover or migration is its own.

use crate::support::mixed::{beside, Mixed};
use crate::support::*;
use std::time::{Duration, Instant};

/// `exec job` over `setup`'s servers with a command that runs until the returned `done` file
/// exists; returns once the command has started.
fn start_exec(setup: &Mixed, ttl: Duration, extra: &[&str]) -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (started, done) = (dir.path().join("started"), dir.path().join("done"));
    let ttl = format!("{}ms", ttl.as_millis());
    let child = setup
        .redlock()
        // --wait: a loaded machine may make one attempt miss the timeout; the lock is free.
        .args(["exec", "job", "--ttl", &ttl, "--wait", "10s"])
        .args(extra)
        .arg("--")
        .args(["sh", "-c", &until_file(&started, &done)])
        .spawn_until("the command to start", || started.exists());
    (child, dir)
}

/// The TTL of the failover tests: a manual failover takes a few hundred milliseconds, so
/// renewals a third of it apart see it happen between two of them.
const FAILOVER_TTL: Duration = Duration::from_secs(3);

#[test]
fn a_cluster_failover_under_exec_keeps_the_lock_on_the_new_master() {
    let setup = Mixed::start();
    let (child, dir) = start_exec(&setup, FAILOVER_TTL, &[]);
    let old = setup.cluster.master_of(KEY).port;
    // The grant was decided at the quorum (the two plain servers may answer first): the
    // cluster's copy lands within the round's deadline after it.
    wait_for("the lock held on the cluster", SLACK, || {
        setup.cluster.node(old).get(KEY).is_some()
    });
    let token = setup
        .cluster
        .node(old)
        .get(KEY)
        .expect("held on the cluster");
    let status = || setup.call(["status", "job", "--timeout", "2s"]);
    let before = status().stdout(predicate::str::contains(format!(
        "(node 127.0.0.1:{old}, hash slot "
    )));
    let before = before.stdout_text();

    let new = setup.cluster.failover(old);
    // Only a renewal after the failover gives the key more than five sixths of the TTL once a
    // third of it has passed since.
    let failed_over = Instant::now();
    wait_for("a renewal on the new master", FAILOVER_TTL * 3, || {
        let node = setup.cluster.node(new);
        failed_over.elapsed() > FAILOVER_TTL / 3
            && node.get(KEY).as_deref() == Some(token.as_str())
            && node.pttl(KEY) > (FAILOVER_TTL * 5 / 6).as_millis() as i64
    });
    let after = status()
        .succeeds()
        .stdout(predicate::str::contains("on 3 of 3 servers"));
    let table = after.stdout_text();
    assert!(
        table.contains(&format!("(node 127.0.0.1:{new}, hash slot ")),
        "{table}"
    );
    println!("status before the failover:\n{before}");
    println!("status after the failover:\n{table}");

    std::fs::write(dir.path().join("done"), "").unwrap();
    let output = child.finish(SLACK);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(stdout_of(&output), "finished");
    assert_eq!(
        setup.cluster.node(new).get(KEY),
        None,
        "released at the end"
    );
}

#[test]
fn a_new_master_without_the_key_is_a_no_vote_and_exec_loses_the_lock_with_125() {
    let setup = Mixed::start();
    let (child, dir) = start_exec(&setup, FAILOVER_TTL, &["-v"]);
    let old = setup.cluster.master_of(KEY).port;
    let new = setup.cluster.failover(old);
    // The new master lost the key (a replica that lagged, or restarted empty).
    let _: () = redis::cmd("DEL")
        .arg(KEY)
        .query(&mut setup.cluster.node(new).connection())
        .unwrap();
    // With the two other servers stopped, the cluster's "no" is all a renewal hears.
    for server in &setup.plain.servers {
        server.stop();
    }
    let stopped = Instant::now();
    let output = child.finish(FAILOVER_TTL + SLACK);
    assert_eq!(output.status.code(), Some(125), "{}", stderr_of(&output));
    assert!(!dir.path().join("done").exists());
    assert!(
        stopped.elapsed() < FAILOVER_TTL * 2,
        "{:?}",
        stopped.elapsed()
    );
    let stderr = stderr_of(&output);
    assert!(stderr.contains("lost"), "{stderr}");
    // The cluster answered, and said no: never a silent success.
    let cluster = &setup.servers[0];
    assert!(
        stderr
            .lines()
            .any(|l| l.contains(cluster.as_str()) && l.contains("not held by this token")),
        "{stderr}"
    );
    assert_eq!(setup.cluster.node(new).get(KEY), None);
}

/// A critical section for `exec`: finds no one else inside, or says so in `$DIR/errors`.
const SECTION: &str = r#"[ -e "$DIR/inside" ] && touch "$DIR/errors"; touch "$DIR/inside"; sleep 0.1; rm "$DIR/inside"; echo x >> "$DIR/count""#;

#[test]
fn a_slot_migrated_while_waiters_wait_keeps_them_exclusive_and_asks_are_followed() {
    let setup = Mixed::start();
    let dir = tempfile::tempdir().unwrap();
    let (holder, holder_dir) = start_exec(&setup, Duration::from_secs(10), &[]);
    const WAITERS: usize = 3;
    let waiters: Vec<Running> = (0..WAITERS)
        .map(|_| {
            setup
                .redlock()
                .env("DIR", dir.path())
                .args(["exec", "job", "--wait", "60s", "--retry-delay", "100ms"])
                .args(["--", "sh", "-c", SECTION])
                .spawn()
        })
        .collect();
    let from = setup.cluster.master_of(KEY).port;
    let to = setup
        .cluster
        .masters()
        .iter()
        .map(|m| m.port)
        .find(|&p| p != from)
        .unwrap();
    let queue = beside(KEY, "queue");
    wait_for("every waiter to queue", SLACK, || {
        let queued: usize = redis::cmd("ZCARD")
            .arg(&queue)
            .query(&mut setup.cluster.node(from).connection())
            .unwrap_or(0);
        queued == WAITERS
    });

    let slot = setup.cluster.slot_of(KEY);
    setup.cluster.start_migration(slot, from, to);
    // The lock and its queue: the keys a waiter's attempt names, now on the importing node.
    assert!(setup.cluster.move_keys(slot, from, to) >= 2);
    let importing = setup.cluster.node(to);
    wait_for(
        "a waiter's attempt to be asked of the importing node",
        SLACK,
        || {
            importing
                .command_calls()
                .get("asking")
                .copied()
                .unwrap_or(0)
                > 0
        },
    );
    // A one-off attempt meanwhile: the cluster's vote counts (asked of the new node, which
    // refuses: the lock is held), and nothing is taken.
    let busy = setup.call(["acquire", "job", "-v"]).exits(75);
    let busy = busy.stderr_text();
    let cluster_said = busy
        .lines()
        .any(|l| l.contains(setup.servers[0].as_str()) && l.contains("refused (key exists)"));
    assert!(cluster_said, "{busy}");
    setup.cluster.finish_migration(slot, to);

    std::fs::write(holder_dir.path().join("done"), "").unwrap();
    let output = holder.finish(SLACK);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    for waiter in waiters {
        let output = waiter.wait();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    assert!(
        !dir.path().join("errors").exists(),
        "two holders overlapped"
    );
    let count = std::fs::read_to_string(dir.path().join("count")).unwrap();
    assert_eq!(count.lines().count(), WAITERS);
    assert_eq!(
        setup.cluster.node(to).get(KEY),
        None,
        "released on the new owner"
    );
}
