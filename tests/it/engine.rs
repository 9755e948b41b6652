//! acquire, release, extend and status against real servers, with real faults.

use crate::support::waiters::subscribers;
use crate::support::*;
use std::time::{Duration, Instant};

#[test]
fn acquire_sets_the_token_on_every_server_and_release_removes_it() {
    const TTL: Duration = Duration::from_secs(10);
    let cluster = Cluster::start(3);
    let acquiring = Instant::now();
    let token = cluster.acquire_token("job", &["--ttl", &format!("{}s", TTL.as_secs())]);
    assert_eq!(cluster.holding(KEY, &token), 3);
    for server in &cluster.servers {
        assert_left("pttl", server.pttl(KEY) as u64, TTL, acquiring);
    }
    cluster
        .redlock()
        .args(["release", "job", "--token", &token])
        .assert()
        .code(0);
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
}

#[test]
fn second_acquirer_is_busy_with_75_and_minus_e_changes_the_code() {
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &[]);
    let output = cluster.redlock().args(["acquire", "job"]).output().unwrap();
    assert_eq!(output.status.code(), Some(75));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("busy") && stderr.contains("pid "),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    cluster
        .redlock()
        .args(["acquire", "job", "-E", "3"])
        .assert()
        .code(3);
    // The refused attempts left the holder's key alone everywhere.
    assert_eq!(cluster.holding(KEY, &token), 3);
}

#[test]
fn a_refused_acquire_names_the_holder_without_asking_the_servers_again() {
    let cluster = Cluster::start(3);
    cluster.acquire_token("job", &[]);
    for server in &cluster.servers {
        server.reset_stats();
    }
    let output = cluster.redlock().args(["acquire", "job"]).output().unwrap();
    assert_eq!(output.status.code(), Some(75));
    assert!(
        stderr_of(&output).contains("pid "),
        "{}",
        stderr_of(&output)
    );
    for server in &cluster.servers {
        let calls = server.command_calls();
        // One script call (the SET that also returned the holder), and no second look.
        let scripts = calls.get("evalsha").unwrap_or(&0) + calls.get("eval").unwrap_or(&0);
        assert_eq!(scripts, 1, "{calls:?}");
    }
}

#[test]
fn a_key_set_by_another_client_makes_acquire_busy() {
    let cluster = Cluster::start(3);
    for server in &cluster.servers {
        server.set(KEY, "other");
    }
    cluster.redlock().args(["acquire", "job"]).assert().code(75);
    assert_eq!(cluster.holding(KEY, "other"), 3);
    cluster
        .redlock()
        .args(["release", "job", "--token", "mine"])
        .assert()
        .code(1);
    assert_eq!(cluster.holding(KEY, "other"), 3);
}

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
    five.redlock()
        .args(["release", "job", "--token", &token])
        .assert()
        .code(0);
    five.servers[2].kill();
    five.redlock().args(["acquire", "job"]).assert().code(69);
    // N = 4 (even) warns, and needs 3: one down is fine, two down is not.
    let mut four = Cluster::start(4);
    four.servers[0].kill();
    let output = four.redlock().args(["acquire", "job"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(
        stderr_of(&output).contains("even"),
        "{}",
        stderr_of(&output)
    );
    let token = stdout_of(&output);
    four.redlock()
        .args(["release", "job", "--token", &token])
        .assert()
        .code(0);
    four.servers[1].kill();
    four.redlock().args(["acquire", "job"]).assert().code(69);
}

#[test]
fn duplicate_servers_are_counted_once() {
    let cluster = Cluster::start(1);
    let url = cluster.servers[0].url();
    // Two spellings of one server: still one vote, so no even-number warning.
    let output = redlock()
        .args(["-s", &url, "-s", &format!("{url}/0"), "acquire", "job"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(
        !stderr_of(&output).contains("even"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn tokens_are_unique_per_acquisition() {
    let cluster = Cluster::start(1);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..20 {
        let token = cluster.acquire_token("job", &[]);
        assert!(token.len() >= 32);
        assert!(seen.insert(token.clone()), "token reused: {token}");
        cluster
            .redlock()
            .args(["release", "job", "--token", &token])
            .assert()
            .code(0);
    }
}

#[test]
fn two_concurrent_acquirers_never_both_win() {
    let cluster = Cluster::start(3);
    for round in 0..10 {
        let name = format!("race{round}");
        let spawned: Vec<_> = (0..2).map(|_| cluster.spawn(&["acquire", &name])).collect();
        let codes: Vec<i32> = spawned
            .into_iter()
            .map(|c| c.wait().status.code().unwrap())
            .collect();
        let winners = codes.iter().filter(|&&c| c == 0).count();
        assert_eq!(winners, 1, "round {round}: exit codes {codes:?}");
    }
}

#[test]
fn a_wrong_token_can_neither_release_nor_extend() {
    const TTL: Duration = Duration::from_secs(5);
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &["--ttl", &format!("{}s", TTL.as_secs())]);
    let wrong = format!("{}x", token);
    cluster
        .redlock()
        .args(["release", "job", "--token", &wrong])
        .assert()
        .code(1);
    cluster
        .redlock()
        .args(["extend", "job", "--token", &wrong, "--ttl", "60s"])
        .assert()
        .code(1);
    assert_eq!(cluster.holding(KEY, &token), 3);
    let ttl = TTL.as_millis() as i64;
    assert!(cluster.servers.iter().all(|s| s.pttl(KEY) <= ttl));
}

#[test]
fn extend_renews_the_ttl_and_reports_fresh_validity() {
    const TTL: Duration = Duration::from_secs(60);
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &["--ttl", "2s"]);
    let extending = Instant::now();
    let output = cluster
        .redlock()
        .args(["extend", "job", "--token", &token, "--ttl", "60s"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let validity: u64 = stdout_of(&output).parse().unwrap();
    // 60 s minus drift minus the round trip: far above the 2 s we started with.
    assert_left("validity", validity, TTL - drift(TTL), extending);
    for server in &cluster.servers {
        assert_left("pttl", server.pttl(KEY) as u64, TTL, extending);
    }
    let again = Instant::now();
    let json = cluster
        .redlock()
        .args(["extend", "job", "--token", &token, "--ttl", "30s", "--json"])
        .output()
        .unwrap();
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["token"], token.as_str());
    let validity = value["validity_ms"].as_u64().unwrap();
    assert_left("validity", validity, TTL / 2 - drift(TTL / 2), again);
}

#[test]
fn extend_of_an_expired_lock_fails_and_does_not_recreate_it() {
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &["--ttl", "300ms", "--timeout", "100ms"]);
    wait_for("the lock to expire", Duration::from_secs(5), || {
        cluster.values(KEY).iter().all(Option::is_none)
    });
    cluster
        .redlock()
        .args(["extend", "job", "--token", &token])
        .assert()
        .code(1);
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
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
    let output = redlock()
        .env("REDLOCK_SERVERS", &servers)
        .args(["acquire", "job", "--timeout", &timeout])
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    // One timeout for the black hole, not one per step (connect, handshake, script).
    assert!(elapsed < TIMEOUT * 2, "{elapsed:?}");
    assert_eq!(cluster.holding(KEY, &stdout_of(&output)), 2);
}

#[test]
fn a_majority_down_exits_69_and_leaves_no_key_behind() {
    let mut cluster = Cluster::start(5);
    cluster.servers[0].kill();
    cluster.servers[1].kill();
    cluster.servers[2].stop();
    let output = cluster
        .redlock()
        .args(["acquire", "job", "--timeout", "200ms"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(69));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("no quorum") && stderr.contains("connection refused"),
        "{stderr}"
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
        .redlock()
        .args(["release", "job", "--token", &token])
        .assert()
        .code(69);
    cluster.redlock().args(["status", "job"]).assert().code(69);
}

#[test]
fn usage_errors_exit_64_with_one_line_and_touch_no_server() {
    let cluster = Cluster::start(1);
    let cases: &[&[&str]] = &[
        &["acquire", "job", "--ttl", "30"],
        &["acquire", "job", "--ttl", "0s"],
        &["acquire", "job", "--ttl", "-5s"],
        &["acquire", "job", "--ttl", "150ms", "--timeout", "200ms"],
        &["acquire", ""],
        &["acquire", "job", "--bogus"],
        &["-s", "http://u:hunter2@host", "acquire", "job"],
        &["release", "job"],
        &["acquire", "job", "--ttl", "99999999999h"],
        &["acquire", "job", "--wait", "30d"],
        &["acquire", "job", "--timeout", "2m"],
        &["exec", "job", "--kill-after", "2h", "--", "true"],
        &["release", "job", "--token", ""],
        &["release", "job", "--token", "  "],
        &["extend", "job", "--token", ""],
    ];
    for args in cases {
        let output = cluster.redlock().args(*args).output().unwrap();
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(64), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query(&mut cluster.servers[0].connection())
        .unwrap();
    assert!(keys.is_empty(), "left behind: {keys:?}");
}

#[test]
fn an_unprintable_token_is_an_internal_error_and_the_lock_is_released() {
    let cluster = Cluster::start(3);
    let output = cluster
        .redlock()
        .args(["acquire", "job"])
        .stdout(
            std::fs::File::options()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(70), "{}", stderr_of(&output));
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
}

#[test]
fn a_signal_while_waiting_stops_cleanly() {
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &[]);
    cluster.servers[0].reset_stats();
    let child = cluster.spawn(&["acquire", "job", "--wait", "60s", "--retry-delay", "50ms"]);
    // Waiting means at least one refused attempt; let it make a few.
    wait_for("a few refused attempts", SLACK, || {
        let calls = cluster.servers[0].command_calls();
        let scripts = calls.get("evalsha").unwrap_or(&0) + calls.get("eval").unwrap_or(&0);
        blocks_sigterm(child.id()) && scripts >= 3
    });
    signal(child.id() as i32, libc::SIGTERM);
    let output = child.wait();
    assert_eq!(output.status.code(), Some(143), "{}", stderr_of(&output));
    assert_eq!(cluster.holding(KEY, &token), 3);
}

#[test]
fn a_signal_stops_a_waiting_exec_while_it_listens_and_nothing_is_queued() {
    // A waiter on plain servers listens on its attempts' own connections and polls a signalfd
    // beside them, with no thread: the signal must still end the wait at once.
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &["--ttl", "60s"]);
    let child = cluster.spawn(&["exec", "job", "--wait", "60s", "--", "true"]);
    wait_for("the waiter to listen everywhere", SLACK, || {
        blocks_sigterm(child.id()) && subscribers(&cluster) == 3
    });
    signal(child.id() as i32, libc::SIGINT);
    let output = child.finish(SLACK);
    assert_eq!(output.status.code(), Some(130), "{}", stderr_of(&output));
    assert_eq!(cluster.holding(KEY, &token), 3);
    for server in &cluster.servers {
        let queued: Vec<String> = redis::cmd("KEYS")
            .arg("*queue*")
            .query(&mut server.connection())
            .unwrap();
        assert_eq!(queued, Vec::<String>::new(), "{}", server.url());
    }
}

#[test]
fn a_signal_during_a_single_attempt_gives_the_lock_back() {
    let cluster = Cluster::start(1);
    // A stopped server holds the attempt open until it is resumed.
    cluster.servers[0].stop();
    let child = cluster.spawn(&["acquire", "job", "--timeout", "10s"]);
    wait_for("redlock to block SIGTERM", Duration::from_secs(5), || {
        blocks_sigterm(child.id())
    });
    // Pending while the attempt runs: the attempt succeeds, then the signal is seen.
    signal(child.id() as i32, libc::SIGTERM);
    cluster.servers[0].resume();
    let output = child.wait();
    assert_eq!(output.status.code(), Some(143), "{}", stderr_of(&output));
    assert_eq!(
        stdout_of(&output),
        "",
        "a token nobody will use was printed"
    );
    assert_eq!(cluster.values(KEY), vec![None]);
}

/// True once process `pid` blocks SIGTERM: it has started and its signals wait for it.
fn blocks_sigterm(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigBlk:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (libc::SIGTERM - 1)) != 0)
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

#[test]
fn status_shows_each_server_and_the_quorum_verdict() {
    let mut cluster = Cluster::start(3);
    cluster.redlock().args(["status", "job"]).assert().code(1);
    let token = cluster.acquire_token("job", &[]);
    cluster.servers[2].kill();
    let output = cluster.redlock().args(["status", "job"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let text = stdout_of(&output);
    assert!(
        text.contains("held by pid") && text.contains("on 2 of 3 servers"),
        "{text}"
    );
    assert!(text.contains(&token), "{text}");
    assert!(text.contains("connection refused"), "{text}");
    for server in &cluster.servers {
        assert!(text.contains(&server.url()), "{text}");
    }
    let output = cluster
        .redlock()
        .args(["status", "job", "--json"])
        .output()
        .unwrap();
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["held"], true);
    assert_eq!(value["token"], token.as_str());
    assert_eq!(value["key"], KEY);
    assert!(value["validity_ms"].as_u64().unwrap() > 25_000);
    assert_eq!(value["servers"], 3);
    let servers = value["per_server"].as_array().unwrap();
    assert_eq!(servers.len(), 3);
    assert_eq!(servers[0]["holds_key"], true);
    assert_eq!(servers[2]["reachable"], false);
    // Without a name: every lock under the prefix.
    let output = cluster
        .redlock()
        .args(["status", "--json"])
        .output()
        .unwrap();
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["locks"][0]["name"], "job");
    assert_eq!(value["locks"][0]["token"], token.as_str());
    let output = cluster.redlock().arg("status").output().unwrap();
    assert!(stdout_of(&output).contains("job") && stdout_of(&output).contains("2/3"));
}

#[test]
fn passwords_never_appear_in_any_output() {
    let secret = "s3cretPassw0rd";
    let protected = Redis::start_with(&["--requirepass", secret]);
    let open = Cluster::start(2);
    let servers = format!("{},{}", open.urls(), protected.url_with_password());
    let run = |args: &[&str]| {
        redlock()
            .env("REDLOCK_SERVERS", &servers)
            .args(args)
            .output()
            .unwrap()
    };
    let acquired = run(&["acquire", "job", "--json"]);
    assert_eq!(acquired.status.code(), Some(0), "{}", stderr_of(&acquired));
    let token: serde_json::Value = serde_json::from_slice(&acquired.stdout).unwrap();
    assert_eq!(protected.get(KEY).as_deref(), token["token"].as_str());
    let wrong = format!("redis://:wrong{secret}@127.0.0.1:{}", protected.port);
    let outputs = [
        acquired,
        run(&["status", "job"]),
        run(&["status", "job", "--json"]),
        run(&["status"]),
        run(&["acquire", "job"]),
        redlock()
            .args(["-s", &wrong, "acquire", "job"])
            .output()
            .unwrap(),
        redlock()
            .args(["-s", &wrong, "status", "job", "--json"])
            .output()
            .unwrap(),
    ];
    for (i, output) in outputs.iter().enumerate() {
        let all = format!("{}{}", stdout_of(output), stderr_of(output));
        assert!(!all.contains(secret), "password printed: {all}");
        // Outputs that name the protected server name it redacted.
        if [1, 2, 5, 6].contains(&i) {
            assert!(
                all.contains(&format!(":***@127.0.0.1:{}", protected.port)),
                "{all}"
            );
        }
    }
    // The password can come from the environment instead of argv.
    let output = redlock()
        .env("REDLOCK_PASSWORD", secret)
        .args(["-s", &protected.url(), "status", "job"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
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
    let output = cluster
        .redlock()
        .args(["acquire", "job", "--timeout", "3s"])
        .output()
        .unwrap();
    resume.join().unwrap();
    assert_eq!(output.status.code(), Some(75), "{}", stderr_of(&output));
    // The late SET landed on the fifth server and was deleted after it, before redlock exited.
    assert_eq!(cluster.servers[4].get(KEY), None);
    assert_eq!(cluster.servers[3].get(KEY), None);
}
