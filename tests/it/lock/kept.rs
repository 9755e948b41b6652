//! What `--hold-at-least` keeps: a plain key in place of the token that expires at acquisition
//! plus the hold on every server, even where the keep arrives late; never a lock that was lost;
//! a scripted lock kept by `release --hold-at-least`, also from a host whose clock is an hour
//! ahead, and nothing kept when it is not held; `status` saying a lock is kept, and why; and a
//! run stopped by SIGTERM still kept.

use crate::support::clock::{clock_ahead, AHEAD};
use crate::support::*;
use std::time::{Duration, Instant};

/// The `status job --json` of the cluster.
fn status_json(cluster: &Cluster) -> serde_json::Value {
    json(cluster.call(["status", "job", "--json"]).get_output())
}

/// Every server holds a kept value in place of `token`, and nobody can take the lock.
fn assert_kept_instead_of(cluster: &Cluster, token: &str) {
    let values = cluster.values(KEY);
    assert!(
        values
            .iter()
            .all(|v| v.is_some() && v.as_deref() != Some(token)),
        "the lock was not kept: {values:?}"
    );
    cluster.call(["acquire", "job"]).exits(75);
}

/// The `--hold-at-least` of `held_a_minute`.
const A_MINUTE: Duration = Duration::from_secs(60);

/// `exec job` with a one-minute hold, running `sh -c script`.
fn held_a_minute(script: &str) -> [&str; 8] {
    [
        "exec",
        "job",
        "--hold-at-least",
        "1m",
        "--",
        "sh",
        "-c",
        script,
    ]
}

#[test]
fn a_kept_key_expires_at_acquisition_plus_the_hold_on_every_server() {
    let cluster = Cluster::start(3);
    let hold = Duration::from_secs(3);
    // The command runs a second, so a hold counted from its end would show.
    let run_time = Duration::from_secs(1);
    let before = Instant::now();
    let output = run(
        &cluster,
        &[
            "exec",
            "job",
            "--hold-at-least",
            &format!("{}s", hold.as_secs()),
            "--",
            "sleep",
            &run_time.as_secs().to_string(),
        ],
    );
    let after = Instant::now();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    for server in &cluster.servers {
        let asked = Instant::now();
        let pttl = server.pttl(KEY);
        let answered = Instant::now();
        assert!(pttl > 0, "the key was not kept: pttl {pttl}");
        let expiry_low = asked + Duration::from_millis(pttl as u64);
        let expiry_high = answered + Duration::from_millis(pttl as u64);
        // The acquisition came after `before`, and at least the run's second before `after`.
        assert!(expiry_high + CLOCK_SKEW >= before + hold, "{pttl} ms left");
        assert!(
            expiry_low + run_time / 2 <= after + hold,
            "{pttl} ms left: the hold ends {:?} after the run ended",
            expiry_low.saturating_duration_since(after)
        );
        // A plain string key, as other clients see a held lock.
        let kind: String = redis::cmd("TYPE")
            .arg(KEY)
            .query(&mut server.connection())
            .unwrap();
        assert_eq!(kind, "string");
    }
    // Another client's SET NX fails until the hold is over, then succeeds.
    let set_nx = |server: &Redis| -> bool {
        let reply: Option<String> = redis::cmd("SET")
            .arg(KEY)
            .arg("other-client")
            .arg("NX")
            .arg("PX")
            .arg(60_000)
            .query(&mut server.connection())
            .unwrap();
        reply.is_some()
    };
    let mut taken = [false; 3];
    let mut take_all = || {
        for (server, taken) in cluster.servers.iter().zip(taken.iter_mut()) {
            if !*taken && set_nx(server) {
                // The answer came after the server let it through.
                let at = before.elapsed();
                assert!(
                    at >= hold - CLOCK_SKEW,
                    "SET NX succeeded {at:?} into {hold:?}"
                );
                *taken = true;
            }
        }
        taken.iter().all(|t| *t)
    };
    while before.elapsed() < hold {
        take_all();
        std::thread::sleep(Duration::from_millis(100));
    }
    wait_for("the kept key to expire", hold + SLACK, take_all);
    // Counted from the acquisition, a run's length before `after`.
    assert!(after.elapsed() < hold + run_time / 2);

    // A hold that is over when the command ends is a plain release.
    let other = [
        "exec",
        "other",
        "--hold-at-least",
        "10ms",
        "--",
        "sleep",
        "0.1",
    ];
    assert_eq!(run(&cluster, &other).status.code(), Some(0));
    assert_eq!(cluster.values("redlock:other"), vec![None, None, None]);
}

#[test]
fn a_keep_that_reaches_a_server_late_does_not_stretch_the_hold() {
    let cluster = Cluster::start(3);
    let hold = Duration::from_secs(3);
    let stopped_for = Duration::from_millis(1_500);
    // The command stops one server as it ends: the keep reaches that server only when it
    // resumes, 1.5 s later, and must still end the hold at acquisition + 3 s, not 1.5 s later.
    // The acquisition round ends at a quorum, so that server may not have the key yet when the
    // command starts (its SET would then land late too, and count from its own arrival): the
    // command waits until it has.
    let stop = format!(
        r#"until [ "$(redis-cli -p {port} get "$REDLOCK_KEY")" = "$REDLOCK_TOKEN" ]; do sleep 0.01; done
        kill -STOP {pid}"#,
        port = cluster.servers[0].port,
        pid = cluster.servers[0].pid()
    );
    // A server that has seen a keep before runs the late request from its script cache.
    let warm = ["exec", "warm-up", "--hold-at-least", "1s", "--", "true"];
    assert_eq!(run(&cluster, &warm).status.code(), Some(0));
    let before = Instant::now();
    let args = [
        "exec",
        "job",
        "--ttl",
        "10s",
        "--hold-at-least",
        &format!("{}s", hold.as_secs()),
        "--",
        "sh",
        "-c",
        &stop,
    ];
    let output = run(&cluster, &args);
    let after = Instant::now();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    // The fault's length is the scenario, not a wait for something.
    std::thread::sleep(stopped_for.saturating_sub(before.elapsed()));
    cluster.servers[0].resume();
    let kept = cluster.servers[1].get(KEY).expect("kept on the others");
    wait_for("the late keep to land", Duration::from_secs(5), || {
        cluster.servers[0].get(KEY).as_deref() == Some(kept.as_str())
    });
    let asked = Instant::now();
    let pttl = cluster.servers[0].pttl(KEY);
    assert!(pttl > 0);
    // The key cannot expire before `asked + pttl`; the hold ends by the time the late server
    // had the key (before the command ran, before `after`) plus the hold.
    let expiry = asked + Duration::from_millis(pttl as u64);
    assert!(
        expiry <= after + hold + CLOCK_SKEW,
        "the late keep ends the hold {:?} after acquisition",
        expiry - before
    );
}

#[test]
fn a_lost_lock_is_not_kept() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--hold-at-least", "1m"];
    let (child, _) = exec_long_command(&cluster, dir.path(), &flags);
    cluster.servers[0].set(KEY, "someone-else");
    let output = child.finish(LONG_COMMAND_TTL + SLACK);
    assert_eq!(output.status.code(), Some(125), "{}", stderr_of(&output));
    assert_eq!(cluster.servers[0].get(KEY).as_deref(), Some("someone-else"));
    assert_eq!(
        cluster.servers[0].pttl(KEY),
        -1,
        "the new holder's key was touched"
    );
}

#[test]
fn release_hold_at_least_keeps_a_scripted_lock() {
    const HOLD: Duration = Duration::from_secs(3);
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &[]);
    let hold = format!("{}s", HOLD.as_secs());
    cluster
        .call([
            "release",
            "job",
            "--token",
            &token,
            "--hold-at-least",
            &hold,
        ])
        .succeeds();
    assert_kept_instead_of(&cluster, &token);
    let hold_ms = HOLD.as_millis() as i64;
    assert!(cluster
        .servers
        .iter()
        .all(|s| (1..=hold_ms).contains(&s.pttl(KEY))));
    // Neither the token nor the kept value stretches the hold.
    cluster.call(["extend", "job", "--token", &token]).exits(1);
    let kept = cluster.values(KEY)[0].clone().unwrap();
    cluster
        .call(["extend", "job", "--token", &kept, "--ttl", "1m"])
        .exits(64);
    assert!(cluster.servers.iter().all(|s| s.pttl(KEY) <= hold_ms));
    let status = status_json(&cluster);
    assert_eq!(status["kept"]["status"], "release", "{status}");
    cluster
        .call(["status", "job"])
        .stdout(predicate::str::contains(
            "kept after `release --hold-at-least` at",
        ));
    wait_for("the hold to run out", HOLD + SLACK, || {
        cluster.values(KEY).iter().all(Option::is_none)
    });

    // A hold that is already over is a plain release.
    let token = cluster.acquire_token("job", &[]);
    cluster
        .call([
            "release",
            "job",
            "--token",
            &token,
            "--hold-at-least",
            "1ms",
        ])
        .succeeds();
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
}

#[test]
fn release_hold_at_least_from_a_host_an_hour_ahead_keeps_the_lock_from_its_acquisition() {
    const HOLD: Duration = Duration::from_secs(6);
    let Some(ahead) = clock_ahead() else {
        eprintln!("a static build: no process of it can be given a clock of its own");
        return;
    };
    let cluster = Cluster::start(3);
    let acquired = Instant::now();
    let token = cluster.acquire_token("job", &[]);
    cluster
        .redlock()
        .env("LD_PRELOAD", ahead)
        .args(["release", "job", "--token", &token, "--hold-at-least", "6s"])
        .assert()
        .code(0);
    // The releasing host's clock did read an hour later: the run's end it recorded says so.
    let status = status_json(&cluster);
    let finished = status["kept"]["finished_unix_ms"].as_u64().unwrap();
    let acquired_ms: u64 = token.split(':').nth(3).unwrap().parse().unwrap();
    assert!(
        finished >= acquired_ms + AHEAD.as_millis() as u64,
        "{status}"
    );
    // Kept on every server, until the acquisition plus the hold by the servers' clocks.
    assert_kept_instead_of(&cluster, &token);
    for server in &cluster.servers {
        assert_left("the kept key", server.pttl(KEY) as u64, HOLD, acquired);
    }
}

/// What the acquiring host's clock does: its time in the token is all the servers count from.
#[test]
fn an_acquiring_host_ahead_keeps_it_at_most_the_hold_and_one_far_behind_not_at_all() {
    const HOLD: Duration = Duration::from_secs(6);
    let cluster = Cluster::start(3);
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let hour_ms = AHEAD.as_millis() as u64;
    for (acquired_ms, kept) in [(now_ms + hour_ms, true), (now_ms - hour_ms, false)] {
        // A token as `acquire` on that host makes it, held on every server.
        let token = format!("{}:host-a:42:{acquired_ms}", "ab".repeat(16));
        for server in &cluster.servers {
            let _: () = redis::cmd("SET")
                .arg(KEY)
                .arg(&token)
                .arg("PX")
                .arg(60_000)
                .query(&mut server.connection())
                .unwrap();
        }
        let released = Instant::now();
        cluster
            .call(["release", "job", "--token", &token, "--hold-at-least", "6s"])
            .succeeds();
        for server in &cluster.servers {
            if kept {
                assert_left("the kept key", server.pttl(KEY) as u64, HOLD, released);
            } else {
                assert_eq!(server.pttl(KEY), -2);
            }
        }
        if kept {
            cluster.call(["release", "job", "--force"]).succeeds();
        }
    }
}

#[test]
fn a_refused_release_hold_at_least_keeps_nothing_and_leaves_what_a_release_would() {
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &["--ttl", "60s"]);
    // Another holder has it on servers 0 and 1 (ours expired there, and it took them).
    for server in &cluster.servers[..2] {
        server.set(KEY, "someone-else");
    }
    cluster
        .call(["release", "job", "--token", &token, "--hold-at-least", "1h"])
        .exits(1);
    // Not held: nothing kept on server 2, where our token was; a release deletes it there.
    assert_eq!(
        cluster.values(KEY),
        vec![
            Some("someone-else".into()),
            Some("someone-else".into()),
            None
        ]
    );
}

#[test]
fn status_says_a_lock_is_kept_after_its_run() {
    let cluster = Cluster::start(3);
    let output = cluster
        .redlock()
        .args(["--log-format", "json"])
        .args(held_a_minute("exit 3"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr_of(&output));
    // The lifecycle log says the lock was kept, not released.
    let events = json_lines(&stderr_of(&output));
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert!(kinds.ends_with(&["child_exited", "kept"]), "{kinds:?}");
    let kept = events.last().unwrap();
    // The give-back ends at its quorum (lock/keep.rs): a slower server keeps it unseen.
    let confirmed = kept["servers_kept"].as_u64().unwrap();
    assert!((2..=3).contains(&confirmed), "{kept}");
    let held_ms = A_MINUTE.as_millis() as u64;
    assert!(kept["remaining_ms"].as_u64().unwrap() <= held_ms, "{kept}");
    // A kept lock is held, on every server once the last keep, sent before the run ended, is in.
    wait_for("the keep to reach every server", SLACK, || {
        cluster
            .call(["status", "job"])
            .succeeds()
            .stdout_text()
            .contains("on 3 of 3 servers")
    });
    let status = cluster.call(["status", "job"]).succeeds();
    let table = status.stdout_text();
    for expected in [
        "kept after a run that finished at",
        "with exit status 3",
        "until about",
        "(sh -c exit 3)",
        "on 3 of 3 servers",
    ] {
        assert!(
            table.contains(expected),
            "{expected:?} missing from:\n{table}"
        );
    }
    let json = status_json(&cluster);
    assert_eq!(json["held"], true);
    assert_eq!(json["kept"]["status"], "exit-3", "{json}");
    assert_eq!(json["holder"]["command"], "sh -c exit 3");
    let finished = json["kept"]["finished_unix_ms"].as_u64().unwrap();
    let until = json["kept"]["until_unix_ms"].as_u64().unwrap();
    let acquired = json["holder"]["acquired_unix_ms"].as_u64().unwrap();
    assert!(acquired <= finished && finished < until, "{json}");
    // The token is stamped (whole milliseconds) before the acquisition round starts.
    let stamped_early_ms = 1_000;
    assert!(until <= acquired + held_ms + stamped_early_ms, "{json}");
    let list = cluster.call(["status"]);
    let list = list.stdout_text();
    assert!(
        list.lines().any(|l| l.starts_with("job ")
            && l.contains(" held ")
            && l.contains("kept after its run")),
        "{list}"
    );
}

#[test]
fn sigterm_to_redlock_during_a_held_run_still_keeps_the_lock() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let script = format!("touch {}; while :; do sleep 0.05; done", ready.display());
    let child = cluster
        .redlock()
        .args(held_a_minute(&script))
        .spawn_until("the command to start", || ready.exists());
    let token = cluster.values(KEY)[0].clone().unwrap();
    signal(child.id() as i32, libc::SIGTERM);
    let output = child.wait();
    assert_eq!(output.status.code(), Some(143), "{}", stderr_of(&output));
    assert_kept_instead_of(&cluster, &token);
    assert_eq!(status_json(&cluster)["kept"]["status"], "signal-15");
}
