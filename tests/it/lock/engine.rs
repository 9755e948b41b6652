//! acquire, release, extend and status against real servers: what each does on every server,
//! what it prints and with which exit status, busy and wrong-token refusals, usage errors, and
//! passwords that never show.

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
        .call(["release", "job", "--token", &token])
        .succeeds();
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
}

#[test]
fn second_acquirer_is_busy_with_75_and_minus_e_changes_the_code() {
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &[]);
    cluster.call(["acquire", "job"]).exits(75).stderr(
        predicate::str::contains("busy")
            .and(predicate::str::contains("pid "))
            .and(line_count(1)),
    );
    cluster.call(["acquire", "job", "-E", "3"]).exits(3);
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
    // With -v the round waits for every server (without it, a refusal is decided at its quorum
    // and the server not waited for gets the failed attempt's clean-up, a second script).
    cluster
        .call(["acquire", "job", "-v"])
        .exits(75)
        .stderr_has("pid ");
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
    cluster.call(["acquire", "job"]).exits(75);
    assert_eq!(cluster.holding(KEY, "other"), 3);
    cluster.call(["release", "job", "--token", "mine"]).exits(1);
    assert_eq!(cluster.holding(KEY, "other"), 3);
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
            .call(["release", "job", "--token", &token])
            .succeeds();
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
    cluster.call(["release", "job", "--token", &wrong]).exits(1);
    cluster
        .call(["extend", "job", "--token", &wrong, "--ttl", "60s"])
        .exits(1);
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
    let extended = cluster
        .call(["extend", "job", "--token", &token, "--ttl", "60s"])
        .succeeds();
    let validity: u64 = extended.stdout_text().parse().unwrap();
    // 60 s minus drift minus the round trip: far above the 2 s we started with.
    assert_left("validity", validity, TTL - drift(TTL), extending);
    for server in &cluster.servers {
        assert_left("pttl", server.pttl(KEY) as u64, TTL, extending);
    }
    let again = Instant::now();
    let json = cluster.call(["extend", "job", "--token", &token, "--ttl", "30s", "--json"]);
    let value: serde_json::Value = json.json();
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
    cluster.call(["extend", "job", "--token", &token]).exits(1);
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
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
        cluster
            .call(*args)
            .exits(64)
            .stderr_lines(1)
            .never_shows("hunter2");
    }
    let keys = cluster.servers[0].keys();
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
fn status_shows_each_server_and_the_quorum_verdict() {
    let mut cluster = Cluster::start(3);
    cluster.call(["status", "job"]).exits(1);
    let token = cluster.acquire_token("job", &[]);
    cluster.servers[2].kill();
    let output = cluster.call(["status", "job"]).succeeds();
    let text = output.stdout_text();
    assert!(
        text.contains("held by pid") && text.contains("on 2 of 3 servers"),
        "{text}"
    );
    assert!(text.contains(&token), "{text}");
    assert!(text.contains("connection refused"), "{text}");
    for server in &cluster.servers {
        assert!(text.contains(&server.url()), "{text}");
    }
    let output = cluster.call(["status", "job", "--json"]);
    let value: serde_json::Value = output.json();
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
    let output = cluster.call(["status", "--json"]);
    let value: serde_json::Value = output.json();
    assert_eq!(value["locks"][0]["name"], "job");
    assert_eq!(value["locks"][0]["token"], token.as_str());
    cluster
        .call(["status"])
        .stdout(predicate::str::contains("job").and(predicate::str::contains("2/3")));
}

#[test]
fn passwords_never_appear_in_any_output() {
    let secret = "s3cretPassw0rd";
    let protected = Redis::start_with(&["--requirepass", secret]);
    let open = Cluster::start(2);
    let servers = format!("{},{}", open.urls(), protected.url_with_password());
    let run = |args: &[&str]| {
        let run = redlock_cmd(args).env("REDLOCK_SERVERS", &servers).assert();
        run.get_output().clone()
    };
    let acquired = redlock_cmd(["acquire", "job", "--json"])
        .env("REDLOCK_SERVERS", &servers)
        .assert()
        .success();
    let acquired = acquired.get_output().clone();
    let token: serde_json::Value = serde_json::from_slice(&acquired.stdout).unwrap();
    assert_eq!(protected.get(KEY).as_deref(), token["token"].as_str());
    let wrong = format!("redis://:wrong{secret}@127.0.0.1:{}", protected.port);
    let outputs = [
        acquired,
        run(&["status", "job"]),
        run(&["status", "job", "--json"]),
        run(&["status"]),
        run(&["acquire", "job"]),
        call(["-s", &wrong, "acquire", "job"]).get_output().clone(),
        call(["-s", &wrong, "status", "job", "--json"])
            .get_output()
            .clone(),
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
    redlock_cmd(["-s", &protected.url(), "status", "job"])
        .env("REDLOCK_PASSWORD", secret)
        .assert()
        .success();
}
