//! The quorum: a majority of distinct servers decides; servers killed, stopped or black-holed
//! cost one timeout between them, not one each, and an attempt that fails or is decided without
//! them leaves no key behind.

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
    five.cmd(["release", "job", "--token", &token])
        .assert()
        .success();
    five.servers[2].kill();
    five.cmd(["acquire", "job"]).assert().code(69);
    // N = 4 (even) warns, and needs 3: one down is fine, two down is not.
    let mut four = Cluster::start(4);
    four.servers[0].kill();
    let acquired = four
        .cmd(["acquire", "job"])
        .assert()
        .success()
        .stderr(predicate::str::contains("even"));
    let token = stdout_of(acquired.get_output());
    four.cmd(["release", "job", "--token", &token])
        .assert()
        .success();
    four.servers[1].kill();
    four.cmd(["acquire", "job"]).assert().code(69);
}

#[test]
fn duplicate_servers_are_counted_once() {
    let cluster = Cluster::start(1);
    let url = cluster.servers[0].url();
    // Two spellings of one server: still one vote, so no even-number warning.
    redlock_cmd(["-s", &url, "-s", &format!("{url}/0"), "acquire", "job"])
        .assert()
        .success()
        .stderr(predicate::str::contains("even").not());
}

#[test]
fn a_minority_of_stopped_servers_costs_one_timeout_not_one_each() {
    // Long enough that one timeout more stands out from a loaded machine's delays.
    const TIMEOUT: Duration = Duration::from_secs(1);
    let cluster = Cluster::start(5);
    cluster.servers[3].stop();
    cluster.servers[4].stop();
    let started = Instant::now();
    let timeout = format!("{}ms", TIMEOUT.as_millis());
    let token = cluster.acquire_token("job", &["--timeout", &timeout]);
    let elapsed = started.elapsed();
    // The late votes are waited for (their clean-up may be due) up to the timeout, once: in
    // sequence the two stopped servers would take two.
    assert!(elapsed >= TIMEOUT, "{elapsed:?}: did it wait at all?");
    assert!(elapsed < TIMEOUT * 2, "{elapsed:?}: timeouts added up");
    cluster.servers[3].resume();
    cluster.servers[4].resume();
    assert!(cluster.holding(KEY, &token) >= 3);
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
        .cmd(["acquire", "job", "--timeout", "200ms"])
        .assert()
        .code(69)
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
        .cmd(["release", "job", "--token", &token])
        .assert()
        .code(69);
    cluster.cmd(["status", "job"]).assert().code(69);
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
    let refused = cluster.cmd(["acquire", "job", "--timeout", "3s"]).assert();
    resume.join().unwrap();
    refused.code(75);
    // The late SET landed on the fifth server and was deleted after it, before redlock exited.
    assert_eq!(cluster.servers[4].get(KEY), None);
    assert_eq!(cluster.servers[3].get(KEY), None);
}
