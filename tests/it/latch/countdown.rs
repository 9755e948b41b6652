//! The countdown latch across servers (`redlock latch`): waiters open after the COUNT-th
//! distinct count-down and never before, over stopped, emptied and split servers; a latch that
//! expires while waited on says so; count-downs wake a crowd without a read each; a lost message
//! is made up for, and a signal stops a waiter.

use crate::support::latches::*;
use crate::support::waiters::spawn_workers;
use crate::support::*;
use std::time::{Duration, Instant};

/// The per-server timeout the tests run with, as a duration.
fn timeout() -> Duration {
    humantime::parse_duration(TEST_TIMEOUT).unwrap()
}

/// How many processes listen on the latch's channel, summed over the running servers.
fn listeners(cluster: &Cluster) -> usize {
    cluster
        .servers
        .iter()
        .filter(|server| server.is_running())
        .map(|server| {
            let (_, n): (String, usize) = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg(CHANNEL)
                .query(&mut server.connection())
                .unwrap();
            n
        })
        .sum()
}

/// `count` waiters in the background, each a shell that runs `latch wait etl --wait 60s` and
/// then writes, to `$DIR/waiter-<pid>`, its exit status and how many count-downs had started
/// (`$DIR/started-*`, each made just before its `done` runs).
fn spawn_waiters(cluster: &Cluster, count: usize, dir: &std::path::Path) -> Vec<Running> {
    let script = r#"
        "$REDLOCK" latch wait etl --wait "$WAIT"; code=$?
        echo "$code $(ls "$DIR" | grep -c '^started-')" > "$DIR/waiter-$$"
        exit $code"#;
    spawn_workers(
        cluster,
        (count, 1, Duration::from_secs(60)),
        script,
        dir,
        &[],
    )
}

/// Waits until `n` processes listen on the latch on every running server.
fn until_listening(cluster: &Cluster, n: usize) {
    let running = cluster.servers.iter().filter(|s| s.is_running()).count();
    wait_for(
        "the waiters to listen on every running server",
        Duration::from_secs(30),
        || listeners(cluster) == n * running,
    );
}

/// Marks count-down `id` as started, then runs it.
fn start_count_down(cluster: &Cluster, dir: &std::path::Path, id: &str) {
    std::fs::write(dir.join(format!("started-{id}")), "").unwrap();
    count_down(cluster, id);
}

/// A bounded look at the waiters: none has exited within `window`. A waiter that opened early
/// exits within a few milliseconds of hearing the count-down; nothing else can be awaited.
fn none_exits_within(waiters: &mut [Running], window: Duration) {
    let until = Instant::now() + window;
    while Instant::now() < until {
        for waiter in waiters.iter_mut() {
            assert!(
                waiter.try_wait().is_none(),
                "a waiter exited before the last count-down"
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every waiter exits 0 within `limit`, and each had seen `started` count-downs begin.
fn all_open(waiters: Vec<Running>, dir: &std::path::Path, started: usize, limit: Duration) {
    let count = waiters.len();
    for waiter in waiters {
        let output = waiter.finish(limit);
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    let reports: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|entry| {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            name.starts_with("waiter-")
                .then(|| std::fs::read_to_string(entry.path()).unwrap())
        })
        .collect();
    assert_eq!(reports.len(), count);
    for report in reports {
        assert_eq!(
            report.trim(),
            format!("0 {started}"),
            "a waiter opened early"
        );
    }
}

#[test]
fn five_waiters_open_after_the_third_count_down_and_never_before() {
    let cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    latch(&cluster, &["set", "etl", "--count", "3", "--ttl", "5m"])
        .assert()
        .success();
    let mut waiters = spawn_waiters(&cluster, 5, dir.path());
    until_listening(&cluster, 5);
    for host in ["host-a", "host-b"] {
        start_count_down(&cluster, dir.path(), host);
    }
    // Two of three: a fresh look says not open, and no waiter opens.
    latch(&cluster, &["wait", "etl", "--wait", "0s"])
        .assert()
        .code(75);
    none_exits_within(&mut waiters, timeout() * 3);
    let third = Instant::now();
    start_count_down(&cluster, dir.path(), "host-c");
    // Woken by the count-down's message: well within the 5 s shortest pause of a waiter's own
    // re-read.
    all_open(waiters, dir.path(), 3, timeout() * 10);
    assert!(third.elapsed() < timeout() * 10, "{:?}", third.elapsed());
    wait_for("the listeners to go", Duration::from_secs(5), || {
        listeners(&cluster) == 0
    });
}

#[test]
fn two_of_five_stopped_and_one_restarted_empty_never_open_it_early() {
    let mut cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    latch(&cluster, &["set", "etl", "--count", "3", "--ttl", "5m"])
        .assert()
        .success();
    let mut waiters = spawn_waiters(&cluster, 3, dir.path());
    until_listening(&cluster, 3);
    cluster.servers[3].stop();
    cluster.servers[4].stop();
    start_count_down(&cluster, dir.path(), "host-a");
    start_count_down(&cluster, dir.path(), "host-b");
    // One of the stopped servers comes back empty: it knows nothing of the latch.
    cluster.servers[4].restart();
    none_exits_within(&mut waiters, timeout() * 3);
    // A newcomer reads the three that hold it and the empty one: not open either.
    let look = latch(&cluster, &["wait", "etl", "--wait", "0s", "--json"])
        .assert()
        .code(75);
    assert_eq!(document(look.get_output())["done"], 2);
    start_count_down(&cluster, dir.path(), "host-c");
    all_open(waiters, dir.path(), 3, timeout() * 10);
    // The count-down gave the emptied server the latch back, with its own id only.
    assert!(cluster.servers[4].pttl(LATCH_KEY) > 0);
    let look = latch(&cluster, &["wait", "etl", "--wait", "0s", "--json"])
        .assert()
        .success();
    assert_eq!(document(look.get_output())["state"], "open");
    cluster.servers[3].resume();
}

#[test]
fn the_union_over_a_quorum_counts_downs_recorded_on_different_quorums() {
    let cluster = Cluster::start(5);
    latch(&cluster, &["set", "etl", "--count", "2"])
        .assert()
        .success();
    // host-a is recorded on servers 0, 1 and 2 only, host-b on 2, 3 and 4 only: each count-down
    // sees five servers, two of them black holes standing in for the others (a stopped server
    // would still apply the request it was sent once it runs again).
    let holes = [BlackHole::start(), BlackHole::start(), BlackHole::start()];
    let urls = |real: &[usize]| -> String {
        let mut holes = holes.iter();
        (0..5)
            .map(|i| {
                if real.contains(&i) {
                    cluster.servers[i].url()
                } else {
                    holes.next().unwrap().url()
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    for (id, real) in [("host-a", [0, 1, 2]), ("host-b", [2, 3, 4])] {
        one_shot(
            redlock_on(&urls(&real)),
            ["latch", "done", "etl", "--id", id],
        )
        .assert()
        .success();
    }
    // Without server 2, the only one with both: no server holds both ids, and any quorum of
    // the other four holds both between them.
    cluster.servers[2].stop();
    let look = latch(&cluster, &["wait", "etl", "--wait", "0s", "--json"])
        .assert()
        .success();
    let look = document(look.get_output());
    assert_eq!(look["done"], 2);
    for id in look["ids"].as_array().unwrap() {
        assert_eq!(id["servers_holding"], 2, "{id}");
    }
    cluster.servers[2].resume();
}

#[test]
fn a_count_down_gives_the_latch_back_to_servers_that_restarted_empty() {
    let mut cluster = Cluster::start(5);
    latch(&cluster, &["set", "etl", "--count", "2", "--ttl", "10m"])
        .assert()
        .success();
    count_down(&cluster, "host-a");
    // A minority restarted empty: the three others, a majority of all five, hold count 2.
    cluster.servers[0].restart();
    cluster.servers[1].restart();
    let done = latch(&cluster, &["done", "etl", "--id", "host-b", "--json"])
        .assert()
        .success();
    let done = document(done.get_output());
    assert_eq!(done["repaired"], 2);
    assert_eq!(done["votes"], 5);
    // Given back with the survivors' shortest TTL, never a longer one.
    let survivor = cluster.servers[2..]
        .iter()
        .map(|server| server.pttl(LATCH_KEY))
        .min()
        .unwrap();
    for server in &cluster.servers[..2] {
        let ttl = server.pttl(LATCH_KEY);
        assert!(ttl > 0 && ttl <= survivor + 1000, "{ttl} vs {survivor}");
    }
    // host-a survives on three servers only: with every server answering, the union has both.
    latch(&cluster, &["wait", "etl", "--wait", "0s"])
        .assert()
        .success();
}

#[test]
fn a_latch_that_expires_while_waited_on_exits_75_saying_so() {
    let cluster = Cluster::start(3);
    let ttl = Duration::from_secs(2);
    let wait = Duration::from_secs(30);
    let set_at = Instant::now();
    latch(&cluster, &["set", "etl", "--count", "2", "--ttl", "2s"])
        .assert()
        .success();
    count_down(&cluster, "host-a");
    let waiter = cluster.spawn(&["latch", "wait", "etl", "--wait", "30s", "--json"]);
    let output = waiter.finish(wait);
    let took = set_at.elapsed();
    assert_eq!(output.status.code(), Some(75), "{}", stderr_of(&output));
    assert!(
        stderr_of(&output).contains("latch 'etl' expired while waited on; 1 of 2 had counted down"),
        "{}",
        stderr_of(&output)
    );
    assert_eq!(document(&output)["expired"], true);
    // Not before its TTL, and long before --wait: it was the expiry that ended the wait.
    assert!(took >= ttl && took < wait / 2, "{took:?}");
}

#[test]
fn a_lost_message_is_made_up_for_by_the_waiters_own_reads() {
    let cluster = Cluster::start(3);
    latch(&cluster, &["set", "etl", "--count", "1"])
        .assert()
        .success();
    let waiter = cluster.spawn(&["latch", "wait", "etl", "--wait", "60s"]);
    until_listening(&cluster, 1);
    for server in &cluster.servers {
        let _: i64 = redis::cmd("CLIENT")
            .arg("KILL")
            .arg("TYPE")
            .arg("pubsub")
            .query(&mut server.connection())
            .unwrap();
    }
    count_down(&cluster, "host-a");
    // Its own re-read (every 5 to 15 s) finds it open, well before its --wait.
    let output = waiter.finish(Duration::from_secs(60));
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
}

#[test]
fn count_downs_wake_a_crowd_of_waiters_without_a_read_each() {
    const WAITERS: usize = 20;
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    latch(&cluster, &["set", "etl", "--count", "3"])
        .assert()
        .success();
    let waiters = spawn_waiters(&cluster, WAITERS, dir.path());
    until_listening(&cluster, WAITERS);
    let server = &cluster.servers[0];
    server.reset_stats();
    for host in ["host-a", "host-b", "host-c"] {
        start_count_down(&cluster, dir.path(), host);
    }
    all_open(waiters, dir.path(), 3, timeout() * 25);
    // Each count-down's script reads the hash once; each waiter's read of the latch does too.
    let hgetall = server
        .command_calls()
        .get("hgetall")
        .copied()
        .unwrap_or_default() as usize;
    let reads = hgetall.saturating_sub(3);
    // A read per waiter per count-down would be 60; each waiter may have made one re-read of
    // its own (every 5 to 15 s) meanwhile.
    assert!(reads < WAITERS, "{reads} reads by {WAITERS} waiters");
}

#[test]
fn a_signal_stops_a_waiter_with_nothing_written() {
    let cluster = Cluster::start(3);
    latch(&cluster, &["set", "etl", "--count", "2"])
        .assert()
        .success();
    let waiter = cluster.spawn(&["latch", "wait", "etl", "--wait", "60s"]);
    until_listening(&cluster, 1);
    signal(waiter.id() as i32, libc::SIGTERM);
    let output = waiter.finish(Duration::from_secs(10));
    assert_eq!(output.status.code(), Some(128 + libc::SIGTERM));
    let status = latch(&cluster, &["status", "etl", "--json"]).assert();
    assert_eq!(document(status.get_output())["done"], 0);
}
