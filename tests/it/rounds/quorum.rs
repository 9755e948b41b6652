//! The quorum: a majority of distinct servers decides; a stopped minority costs no timeout (the
//! round is decided on the others, plain, TLS or a Sentinel group's relay alike), servers killed or black-holed cost one
//! timeout between them, not one each, and an attempt that fails or is decided without them
//! leaves no key behind.

use crate::support::groups::{Group, Passwords};
use crate::support::*;
use std::time::{Duration, Instant};

#[test]
fn quorum_is_a_majority_of_distinct_servers() {
    // N = 1: the one server decides.
    let one = Cluster::start(1);
    one.acquire_token("job", &[]);
    // N = 5 with 2 killed still reaches 3 votes; with 3 killed it cannot.
    let mut five = Cluster::start(5);
    five.servers[0].kill();
    five.servers[1].kill();
    let token = five.acquire_token("job", &["--timeout", "500ms"]);
    assert_eq!(five.holding(KEY, &token), 3);
    five.call(["release", "job", "--token", &token]).succeeds();
    five.servers[2].kill();
    five.call(["acquire", "job"]).exits(69);
    // N = 4 (even) warns, and needs 3: one down is fine, two down is not.
    let mut four = Cluster::start(4);
    four.servers[0].kill();
    let acquired = four.call(["acquire", "job"]).succeeds().stderr_has("even");
    let token = acquired.stdout_text();
    four.call(["release", "job", "--token", &token]).succeeds();
    four.servers[1].kill();
    four.call(["acquire", "job"]).exits(69);
}

#[test]
fn duplicate_servers_are_counted_once() {
    let cluster = Cluster::start(1);
    let url = cluster.servers[0].url();
    // Two spellings of one server: still one vote, so no even-number warning.
    call(["-s", &url, "-s", &format!("{url}/0"), "acquire", "job"])
        .succeeds()
        .stderr(predicate::str::contains("even").not());
}

#[test]
fn a_minority_of_stopped_servers_costs_no_timeout() {
    let cluster = Cluster::start(5);
    let servers: Vec<&dyn Stoppable> = cluster.servers.iter().map(|s| s as _).collect();
    a_stopped_minority_costs_nothing(&servers, &[3, 4], &[]);
}

#[test]
fn a_stopped_tls_server_costs_no_timeout_either() {
    let certs = Certs::generate();
    let tls: Vec<TlsRedis> = (0..3).map(|_| TlsRedis::start(&certs, false)).collect();
    let servers: Vec<&dyn Stoppable> = tls.iter().map(|s| s as _).collect();
    // A stopped TLS server accepts the connection (the kernel does) and never answers the
    // handshake: the round's TLS is the poll loop's own (server/socket.rs), which waits for it
    // no more than for a plain server's reply.
    a_stopped_minority_costs_nothing(&servers, &[0], &["--tls-ca", &certs.path("ca.crt")]);
}

#[test]
fn a_stopped_sentinel_group_costs_no_timeout_either() {
    let groups = Group::start_many(1, Passwords::default());
    let plain = Cluster::start(2);
    let group = WholeGroup(&groups[0]);
    let servers: Vec<&dyn Stoppable> = vec![&group, &plain.servers[0], &plain.servers[1]];
    // Its sentinels answer and name the master, which accepts the connection (the kernel
    // does) and never answers: the relay's thread waits for it (server/relay), the round and
    // the exit do not.
    a_stopped_minority_costs_nothing(&servers, &[0], &[]);
}

/// A Sentinel group stopped whole, its master and its replica: its sentinels stay up, and with
/// no replica to promote they cannot fail over while the test runs.
struct WholeGroup<'a>(&'a Group);

impl Stoppable for WholeGroup<'_> {
    fn url(&self) -> String {
        self.0.url()
    }

    fn stop(&self) {
        self.0.nodes.iter().for_each(|node| node.stop());
    }

    fn resume(&self) {
        self.0.nodes.iter().for_each(|node| node.resume());
    }

    fn get(&self, key: &str) -> Option<String> {
        self.0.nodes[0].get(key)
    }
}

/// Acquire, extend and release with the servers `stopped` SIGSTOPped: each is decided on the
/// others the moment they have answered, and none waits for the stopped ones (nodes/mod.rs).
/// `trust` is what redlock needs to trust the servers.
fn a_stopped_minority_costs_nothing(servers: &[&dyn Stoppable], stopped: &[usize], trust: &[&str]) {
    // Long enough that waiting for a stopped server stands out from a loaded machine's delays.
    const TIMEOUT: Duration = Duration::from_secs(2);
    const TTL: Duration = Duration::from_secs(3);
    for &index in stopped {
        servers[index].stop();
    }
    let running: Vec<&dyn Stoppable> = (0..servers.len())
        .filter(|index| !stopped.contains(index))
        .map(|index| servers[index])
        .collect();
    let urls: Vec<String> = servers.iter().map(|server| server.url()).collect();
    let (timeout, ttl) = (
        format!("{}ms", TIMEOUT.as_millis()),
        format!("{}ms", TTL.as_millis()),
    );
    let run = |args: &[&str]| {
        let started = Instant::now();
        let ran = redlock_cmd([trust, &["--timeout", &timeout], args].concat())
            .env("REDLOCK_SERVERS", urls.join(","))
            .assert()
            .success();
        let took = started.elapsed();
        // Decided without the stopped servers: a round trip or two to each running one (a new
        // connection, its handshake), far from one `--timeout`.
        assert!(took < TIMEOUT / 4, "{args:?} took {took:?}");
        stdout_of(ran.get_output())
    };
    let token = run(&["acquire", "job", "--ttl", &ttl]);
    let holding = |value: &str| {
        running
            .iter()
            .filter(|server| server.get(KEY).as_deref() == Some(value))
            .count()
    };
    assert_eq!(holding(&token), running.len());
    run(&["extend", "job", "--token", &token, "--ttl", &ttl]);
    run(&["release", "job", "--token", &token]);
    assert!(running.iter().all(|server| server.get(KEY).is_none()));
    // The late grants: once they run again, the stopped servers apply what reached them (a
    // plain server the SET, then the release's delete, in whichever order they read the two
    // processes' connections; a TLS server nothing, its handshake never done before we went);
    // a SET applied last expires with its ttl.
    for &index in stopped {
        servers[index].resume();
    }
    wait_for(
        "the late grants to be released or expire",
        TTL + TIMEOUT * 5,
        || servers.iter().all(|server| server.get(KEY).is_none()),
    );
}

/// Five servers, the first and the third stopped (SIGSTOP): a quorum of three still runs.
fn five_with_two_stopped() -> Cluster {
    let cluster = Cluster::start(5);
    cluster.servers[0].stop();
    cluster.servers[2].stop();
    cluster
}

#[test]
fn exec_with_a_minority_stopped_does_not_wait_for_it() {
    const TIMEOUT: Duration = Duration::from_secs(2);
    let cluster = five_with_two_stopped();
    let timeout = format!("{}ms", TIMEOUT.as_millis());
    let started = Instant::now();
    cluster
        .cmd(["exec", "job", "--timeout", &timeout, "--", "true"])
        .assert()
        .success();
    let took = started.elapsed();
    assert!(took < TIMEOUT / 4, "exec -- true took {took:?}");
    assert!([1, 3, 4]
        .iter()
        .all(|&i| cluster.servers[i].get(KEY).is_none()));
    cluster.servers[0].resume();
    cluster.servers[2].resume();
    // Its grant on the stopped two (set late) is deleted by its release, sent behind it.
    wait_for("the late grants to be released", TIMEOUT * 5, || {
        cluster
            .servers
            .iter()
            .all(|server| server.get(KEY).is_none())
    });
}

#[test]
fn a_server_that_accepts_no_connection_costs_no_timeout_either() {
    // Waiting for it cost each round a whole timeout, and each exit one more: long enough to
    // stand out from a loaded machine's delays.
    const TIMEOUT: Duration = Duration::from_secs(4);
    // A stopped server whose listen queue is full accepts no connection: the kernel drops the
    // handshake, as for a host that is down. A crowd of short-lived waiters fills the default
    // queue (511) of a stopped server; a queue of one fills at once.
    let mut servers = vec![Redis::start_with(&["--tcp-backlog", "1"])];
    servers.extend((0..4).map(|_| Redis::start()));
    let cluster = Cluster { servers };
    let unreachable = &cluster.servers[0];
    unreachable.stop();
    let _queued = unreachable.fill_listen_queue();
    let running = &cluster.servers[1..];
    let timeout = format!("{}ms", TIMEOUT.as_millis());
    let timed = |args: &[&str]| {
        let started = Instant::now();
        let ran = cluster
            .cmd([&["--timeout", &timeout], args].concat())
            .assert()
            .success();
        let took = started.elapsed();
        assert!(took < TIMEOUT / 2, "{args:?} took {took:?}");
        stdout_of(ran.get_output())
    };
    let token = timed(&["acquire", "job", "--ttl", "60s"]);
    assert!(running.iter().all(|s| s.get(KEY) == Some(token.clone())));
    timed(&["extend", "job", "--token", &token, "--ttl", "60s"]);
    timed(&["release", "job", "--token", &token]);
    assert!(running.iter().all(|s| s.get(KEY).is_none()));
    // A waiter woken by a release takes the lock, runs its command and releases it without
    // waiting for the server either: a crowd's hand-overs stay as quick as with it healthy.
    let holder = timed(&["acquire", "job", "--ttl", "60s"]);
    let waiter = cluster
        .redlock()
        .args(["--timeout", &timeout, "exec", "job", "--wait", "60s", "--"])
        .args(["true"])
        .spawn();
    wait_for("the waiter to queue", TIMEOUT * 5, || {
        running.iter().all(|server| {
            redis::cmd("ZCARD")
                .arg(format!("{KEY}\u{1f}queue"))
                .query::<usize>(&mut server.connection())
                .unwrap()
                == 1
        })
    });
    let released = Instant::now();
    timed(&["release", "job", "--token", &holder]);
    let ran = waiter.finish(TIMEOUT * 5);
    assert!(ran.status.success(), "{}", stderr_of(&ran));
    let took = released.elapsed();
    assert!(
        took < TIMEOUT / 2,
        "the waiter took {took:?} after the release"
    );
    unreachable.resume();
}

#[test]
fn a_hold_and_a_waiter_that_gives_up_do_not_wait_for_a_stopped_minority() {
    const TIMEOUT: Duration = Duration::from_secs(2);
    const WAIT: Duration = Duration::from_millis(200);
    let cluster = five_with_two_stopped();
    let timeout = format!("{}ms", TIMEOUT.as_millis());
    // The give-back of a hold (KEEP) is decided at its quorum, as a release is.
    let started = Instant::now();
    cluster
        .cmd([
            "exec",
            "job",
            "--timeout",
            &timeout,
            "--hold-at-least",
            "60s",
            "--",
            "true",
        ])
        .assert()
        .success();
    let took = started.elapsed();
    assert!(took < TIMEOUT / 4, "exec --hold-at-least took {took:?}");
    for i in [1, 3, 4] {
        let kept = cluster.servers[i].get(KEY).unwrap_or_default();
        assert!(kept.contains(":kept:"), "server {i} holds {kept:?}");
    }
    // A waiter that gives up leaves the queue at its quorum too.
    let wait = format!("{}ms", WAIT.as_millis());
    let started = Instant::now();
    cluster
        .cmd(["acquire", "job", "--timeout", &timeout, "--wait", &wait])
        .assert()
        .code(75);
    let took = started.elapsed();
    assert!(
        took < WAIT + TIMEOUT / 4,
        "a waiter giving up took {took:?}"
    );
    for i in [1, 3, 4] {
        let queued: usize = redis::cmd("ZCARD")
            .arg(format!("{KEY}\u{1f}queue"))
            .query(&mut cluster.servers[i].connection())
            .unwrap();
        assert_eq!(queued, 0, "server {i} still queues the waiter that gave up");
    }
    cluster.servers[0].resume();
    cluster.servers[2].resume();
}

#[test]
fn a_black_holed_server_is_one_vote_against_within_the_timeout() {
    // Long enough that one timeout more stands out from a loaded machine's delays.
    const TIMEOUT: Duration = Duration::from_secs(1);
    let cluster = Cluster::start(2);
    let hole = BlackHole::start();
    let servers = format!("{},{}", cluster.urls(), hole.url());
    let started = Instant::now();
    let timeout = format!("{}ms", TIMEOUT.as_millis());
    let acquired = redlock_cmd(["acquire", "job", "--timeout", &timeout])
        .env("REDLOCK_SERVERS", &servers)
        .assert();
    let elapsed = started.elapsed();
    let acquired = acquired.success();
    // One timeout for the black hole, not one per step (connect, handshake, script).
    assert!(elapsed < TIMEOUT * 2, "{elapsed:?}");
    assert_eq!(cluster.holding(KEY, &stdout_of(acquired.get_output())), 2);
}

#[test]
fn a_majority_down_exits_69_and_leaves_no_key_behind() {
    let mut cluster = Cluster::start(5);
    cluster.servers[0].kill();
    cluster.servers[1].kill();
    cluster.servers[2].stop();
    cluster
        .call(["acquire", "job", "--timeout", "200ms"])
        .exits(69)
        .stderr(
            predicate::str::contains("no quorum")
                .and(predicate::str::contains("connection refused")),
        );
    assert_eq!(cluster.servers[3].get(KEY), None);
    assert_eq!(cluster.servers[4].get(KEY), None);
    cluster.servers[2].resume();
}

#[test]
fn release_reports_unavailable_when_too_few_servers_answer() {
    let mut cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &[]);
    cluster.servers[0].kill();
    cluster.servers[1].kill();
    cluster
        .call(["release", "job", "--token", &token])
        .exits(69);
    cluster.call(["status", "job"]).exits(69);
}

#[test]
fn a_late_yes_to_an_attempt_decided_without_it_is_cleaned_up() {
    let cluster = Cluster::start(5);
    // Someone else holds a quorum: the attempt is decided (busy) on their three no's, without
    // waiting for the stopped fifth server, whose yes comes only once it is resumed.
    for server in &cluster.servers[..3] {
        server.set(KEY, "someone-else");
    }
    cluster.servers[4].stop();
    let resume = std::thread::spawn({
        let pid = cluster.servers[4].pid();
        move || {
            std::thread::sleep(Duration::from_millis(500));
            signal(pid, libc::SIGCONT);
        }
    });
    let refused = cluster.call(["acquire", "job", "--timeout", "3s"]);
    resume.join().unwrap();
    refused.exits(75);
    // The late SET landed on the fifth server and was deleted after it: the clean-up went out
    // behind it on the same connection (before redlock exited, without waiting for the answer).
    wait_for(
        "the late SET to be cleaned up",
        Duration::from_secs(15),
        || cluster.servers[4].get(KEY).is_none(),
    );
    assert_eq!(cluster.servers[3].get(KEY), None);
}

#[test]
fn waiters_connect_to_a_stopped_server_once_or_twice_not_once_an_attempt() {
    // Short, so that each waiter outlives many of its attempts' deadlines.
    const TIMEOUT: Duration = Duration::from_millis(100);
    const WAITERS: usize = 6;
    let cluster = Cluster::start(3);
    let mut watch = cluster.servers[2].connection();
    let before = Redis::connections_received(&mut watch);
    cluster.servers[2].stop();
    let timeout = format!("{}ms", TIMEOUT.as_millis());
    // Each holds for five timeouts, so the last waiter waits through about thirty.
    let hold = format!("{}", (TIMEOUT * 5).as_secs_f64());
    let waiters: Vec<Running> = (0..WAITERS)
        .map(|_| {
            cluster.spawn(&[
                "exec",
                "job",
                "--timeout",
                &timeout,
                "--wait",
                "60s",
                "--",
                "sleep",
                &hold,
            ])
        })
        .collect();
    for waiter in waiters {
        let output = waiter.wait();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    cluster.servers[2].resume();
    // A connection on which nothing ever came back is kept, not replaced at each deadline
    // (lock/nodes/behind.rs, `retire_stalled`): a new one would only wait in the stopped
    // server's listen queue, which a crowd fills. One each, and one more for a process whose
    // first one had answered before the server stopped.
    let received = Redis::connections_received(&mut watch) - before;
    assert!(
        received <= 2 * WAITERS as u64,
        "{received} connections reached the stopped server from {WAITERS} waiters"
    );
}
