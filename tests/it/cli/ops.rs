//! Operations: force-release, status listings, and what a run says: -v, -q and
//! `--log-format json`.

use crate::support::*;
use std::time::{Duration, Instant};

#[test]
fn force_release_removes_any_token_prints_it_and_exits_1_when_nothing_is_left() {
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &["--ttl", "20s"]);
    cluster.servers[2].set(KEY, "someone-else");
    let released = cluster
        .call(["release", "job", "--force"])
        .succeeds()
        .stdout(line_count(3).and(predicate::str::contains("someone-else")));
    let stdout = released.stdout_text();
    let pid = token.split(':').nth(2).unwrap();
    assert_eq!(stdout.matches(&format!("pid {pid}")).count(), 2, "{stdout}");
    assert_eq!(cluster.values(KEY), vec![None, None, None]);

    cluster
        .call(["release", "job", "--force"])
        .exits(1)
        .stdout(predicate::str::is_empty().trim())
        .stderr(predicate::str::contains("nothing to remove"));
}

#[test]
fn force_release_is_never_the_default_and_needs_a_quorum_to_say_nothing_was_there() {
    let mut cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &["--ttl", "20s"]);
    // Without --token or --force, release refuses before sending anything.
    cluster.call(["release", "job"]).exits(64);
    assert_eq!(cluster.holding(KEY, &token), 3);
    cluster
        .call(["release", "job", "--force", "--token", &token])
        .exits(64);
    cluster.servers[0].kill();
    cluster.servers[1].kill();
    cluster
        .call(["release", "other", "--force", "--timeout", "100ms"])
        .exits(69);
}

#[test]
fn status_without_a_name_lists_every_lock_sorted_with_its_holder() {
    let cluster = Cluster::start(3);
    for name in ["charlie", "alpha", "bravo"] {
        cluster.acquire_token(name, &["--ttl", "20s"]);
    }
    // A key under another prefix is not ours to list.
    cluster.servers[0].set("other:alpha", "x");
    let listed = cluster.call(["status"]).succeeds();
    let stdout = listed.stdout_text();
    let names: Vec<&str> = stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "bravo", "charlie"], "{stdout}");
    assert!(stdout
        .lines()
        .skip(1)
        .all(|l| l.contains("held") && l.contains("pid ") && l.contains("3/3")));

    let value = json(cluster.call(["status", "--json"]).get_output());
    let locks = value["locks"].as_array().unwrap();
    assert_eq!(locks.len(), 3);
    assert_eq!(locks[0]["name"], "alpha");
    assert!(locks[0]["holder"]["pid"].as_u64().is_some());
    assert!(locks[2]["validity_ms"].as_u64().unwrap() > 15_000);
}

#[test]
fn status_shows_holder_facts_and_per_server_ttl() {
    const TTL: Duration = Duration::from_secs(20);
    let cluster = Cluster::start(3);
    let acquiring = Instant::now();
    cluster.acquire_token("job", &["--ttl", &format!("{}s", TTL.as_secs())]);
    let value = json(cluster.call(["status", "job", "--json"]).get_output());
    let holder = &value["holder"];
    assert!(holder["host"].as_str().is_some_and(|h| !h.is_empty()));
    assert!(holder["pid"].as_u64().is_some());
    assert!(holder["acquired_unix_ms"].as_u64().unwrap() > 1_600_000_000_000);
    let servers = value["per_server"].as_array().unwrap();
    assert_eq!(servers.len(), 3);
    for server in servers {
        assert_left(
            "expires_in_ms",
            server["expires_in_ms"].as_u64().unwrap(),
            TTL,
            acquiring,
        );
    }
    let table = cluster.call(["status", "job"]);
    let table = table.stdout_text();
    assert!(
        table.contains("acquired ") && table.contains(" ago)"),
        "{table}"
    );
    let header = table.lines().nth(2).unwrap();
    assert!(
        header.starts_with("SERVER") && header.contains("TTL"),
        "{table}"
    );
}

#[test]
fn verbose_shows_each_server_outcome_latency_and_validity() {
    let mut cluster = Cluster::start(3);
    cluster.servers[2].kill();
    let acquired = cluster
        .call(["acquire", "job", "-v", "--ttl", "10s"])
        .succeeds()
        .stderr(
            predicate::str::contains("acquire redlock:job: 2 of 3 servers")
                .and(predicate::str::contains("validity "))
                .and(predicate::str::contains("down: connection refused"))
                .and(predicate::str::contains("ms  ")),
        );
    let stderr = acquired.stderr_text();
    assert_eq!(stderr.matches("  set").count(), 2, "{stderr}");
    // Without -v, success says only what is left of the margin, once.
    let margin = format!(
        "redlock: warning: 2 of 3 servers can vote: one more failure stops every lock ({} is down: connection refused)\n",
        cluster.servers[2].url()
    );
    cluster
        .call(["acquire", "other"])
        .stderr(predicate::str::diff(margin));
}

#[test]
fn quiet_keeps_errors_only() {
    let cluster = Cluster::start(2);
    cluster
        .call(["acquire", "job"])
        .stderr(predicate::str::contains("even"));
    // Busy is an expected outcome, not an error: the exit status says it.
    cluster
        .call(["acquire", "job", "-q"])
        .exits(75)
        .stderr(predicate::str::is_empty().trim());
    cluster
        .call(["-q", "release", "job", "--token", "not-the-token"])
        .exits(1)
        .stderr(
            predicate::str::contains("even")
                .not()
                .and(predicate::str::contains("not held by this token")),
        );
}

#[test]
fn json_log_format_gives_one_object_per_line_and_no_secrets() {
    /// The TTL when none is given.
    const TTL: Duration = Duration::from_secs(30);
    let server = Redis::start_with(&["--requirepass", "hunter2"]);
    let url = server.url_with_password();
    let acquiring = Instant::now();
    let acquired = call(["-s", &url, "--log-format", "json", "acquire", "job"]).succeeds();
    let output = acquired.get_output();
    let token = stdout_of(output);
    let lines = json_lines(&stderr_of(output));
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["event"], "acquired");
    assert_eq!(lines[0]["level"], "info");
    assert_eq!(lines[0]["name"], "job");
    assert_eq!(lines[0]["token_id"], &token[..8]);
    let validity = lines[0]["validity_ms"].as_u64().unwrap();
    assert_left("validity", validity, TTL - drift(TTL), acquiring);

    let released = redlock_cmd(["-s", &url, "--log-format", "json", "-v", "release", "job"])
        .args(["--token", &token])
        .assert()
        .stderr(
            predicate::str::contains("hunter2")
                .or(predicate::str::contains(token.as_str()))
                .not()
                .and(predicate::str::contains(":***@")),
        );
    let events: Vec<String> = json_lines(&stderr_of(released.get_output()))
        .iter()
        .map(|l| l["event"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(events, ["round", "released"]);

    // The final error is a JSON line too, with the exit status.
    let refused = redlock_cmd(["-s", &url, "--log-format", "json", "extend", "job"])
        .args(["--token", &token])
        .assert()
        .code(1);
    let lines = json_lines(&stderr_of(refused.get_output()));
    assert_eq!(lines[0]["event"], "error");
    assert_eq!(lines[0]["exit_code"], 1);
}
