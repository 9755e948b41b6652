//! Cron across a fleet: `--hold-at-least` keeps a short run's lock so later starts find it busy,
//! `--max-runtime` stops a hung command (exit 124), and a busy lock is quiet with `-q`.

use crate::support::*;
use std::time::{Duration, Instant};

/// The `status job --json` of the cluster.
fn status_json(cluster: &Cluster) -> serde_json::Value {
    json(&run(cluster, &["status", "job", "--json"]))
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
    assert_eq!(run(cluster, &["acquire", "job"]).status.code(), Some(75));
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

/// Two hosts start the same 100 ms job one second apart: with the hold, the second finds the
/// lock kept and exits 0 quietly; once the hold is over, the next start runs.
fn one_run_per_schedule(cluster: &Cluster) {
    const HOLD: Duration = Duration::from_secs(3);
    let hold = format!("{}s", HOLD.as_secs());
    let dir = tempfile::tempdir().unwrap();
    let ran = dir.path().join("ran");
    let job = |host: &str| format!("echo {host} >> {}; sleep 0.1", ran.display());
    let cron = |host: &str| {
        let script = job(host);
        let args = [
            "-q",
            "exec",
            "job",
            "--hold-at-least",
            &hold,
            "-E",
            "0",
            "--",
            "sh",
            "-c",
            &script,
        ];
        run(cluster, &args)
    };
    let started = Instant::now();
    let first = cron("host-a");
    assert_eq!(first.status.code(), Some(0), "{}", stderr_of(&first));
    // The second host's cron wakes a second after the first's (scenario timing, not a wait).
    std::thread::sleep(Duration::from_secs(1).saturating_sub(started.elapsed()));
    let second = cron("host-b");
    assert_eq!(second.status.code(), Some(0), "{}", stderr_of(&second));
    assert_eq!(
        stderr_of(&second),
        "",
        "a busy lock with -q printed something"
    );
    assert_eq!(stdout_of(&second), "");
    assert_eq!(read(&ran), "host-a", "both hosts ran the job");
    wait_for("the hold to run out", HOLD + SLACK, || {
        cluster.values(KEY).iter().all(Option::is_none)
    });
    // Acquired after `started`, the lock is kept for HOLD from then.
    let gone = started.elapsed();
    assert!(gone >= HOLD - CLOCK_SKEW, "gone {gone:?} after the start");
    let third = cron("host-c");
    assert_eq!(third.status.code(), Some(0), "{}", stderr_of(&third));
    assert_eq!(read(&ran), "host-a\nhost-c");
}

#[test]
fn hold_at_least_runs_a_short_job_once_per_schedule() {
    one_run_per_schedule(&Cluster::start(1));
}

#[test]
fn hold_at_least_runs_once_with_one_of_three_servers_killed() {
    let mut cluster = Cluster::start(3);
    cluster.servers[2].kill();
    one_run_per_schedule(&cluster);
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
fn max_runtime_stops_the_command_and_its_grandchildren_with_124() {
    const MAX_RUNTIME: Duration = Duration::from_secs(1);
    /// `--kill-after` when none is given: the longest a command may take to go after SIGTERM.
    const KILL_AFTER: Duration = Duration::from_secs(5);
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let script = hung_command(dir.path());
    let started = Instant::now();
    let args = [
        "exec",
        "job",
        "--max-runtime",
        &format!("{}s", MAX_RUNTIME.as_secs()),
        "--",
        "sh",
        "-c",
        &script,
    ];
    let output = run(&cluster, &args);
    let took = started.elapsed();
    assert_eq!(output.status.code(), Some(124), "{}", stderr_of(&output));
    assert!(took >= MAX_RUNTIME, "{took:?}");
    assert!(took < MAX_RUNTIME + KILL_AFTER, "{took:?}");
    assert_eq!(read(&dir.path().join("term")), "term", "no SIGTERM");
    let grandchild: i32 = read(&dir.path().join("pid")).parse().unwrap();
    wait_for("the grandchild to die", Duration::from_secs(2), || {
        !alive(grandchild)
    });
    assert!(
        stderr_of(&output).contains("--max-runtime 1s"),
        "{}",
        stderr_of(&output)
    );
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
}

#[test]
fn max_runtime_with_a_hold_keeps_the_lock_and_kills_a_command_that_ignores_term() {
    let cluster = Cluster::start(3);
    let args = [
        "exec",
        "job",
        "--max-runtime",
        "1s",
        "--kill-after",
        "300ms",
        "--hold-at-least",
        "5s",
        "--",
        "sh",
        "-c",
        "trap '' TERM; sleep 30",
    ];
    let output = run(&cluster, &args);
    assert_eq!(output.status.code(), Some(124), "{}", stderr_of(&output));
    assert!(cluster.values(KEY).iter().all(Option::is_some));
    let status = status_json(&cluster);
    assert_eq!(status["kept"]["status"], "timeout", "{status}");
    assert_eq!(run(&cluster, &["acquire", "job"]).status.code(), Some(75));
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
    let output = run(
        &cluster,
        &[
            "release",
            "job",
            "--token",
            &token,
            "--hold-at-least",
            &hold,
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_kept_instead_of(&cluster, &token);
    let hold_ms = HOLD.as_millis() as i64;
    assert!(cluster
        .servers
        .iter()
        .all(|s| (1..=hold_ms).contains(&s.pttl(KEY))));
    // Neither the token nor the kept value stretches the hold.
    let again = run(&cluster, &["extend", "job", "--token", &token]);
    assert_eq!(again.status.code(), Some(1));
    let kept = cluster.values(KEY)[0].clone().unwrap();
    let stretch = run(
        &cluster,
        &["extend", "job", "--token", &kept, "--ttl", "1m"],
    );
    assert_eq!(stretch.status.code(), Some(64), "{}", stderr_of(&stretch));
    assert!(cluster.servers.iter().all(|s| s.pttl(KEY) <= hold_ms));
    let status = status_json(&cluster);
    assert_eq!(status["kept"]["status"], "release", "{status}");
    let table = stdout_of(&run(&cluster, &["status", "job"]));
    assert!(
        table.contains("kept after `release --hold-at-least` at"),
        "{table}"
    );
    wait_for("the hold to run out", HOLD + SLACK, || {
        cluster.values(KEY).iter().all(Option::is_none)
    });

    // A hold that is already over is a plain release.
    let token = cluster.acquire_token("job", &[]);
    let output = run(
        &cluster,
        &[
            "release",
            "job",
            "--token",
            &token,
            "--hold-at-least",
            "1ms",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
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
    assert_eq!(kept["servers_kept"], 3);
    let held_ms = A_MINUTE.as_millis() as u64;
    assert!(kept["remaining_ms"].as_u64().unwrap() <= held_ms, "{kept}");
    let status = run(&cluster, &["status", "job"]);
    assert_eq!(status.status.code(), Some(0), "a kept lock is held");
    let table = stdout_of(&status);
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
    let list = stdout_of(&run(&cluster, &["status"]));
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

#[test]
fn a_zero_negative_or_bare_hold_or_max_runtime_is_a_usage_error() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let touch = format!("touch {}", marker.display());
    for (flag, value) in [
        ("--hold-at-least", "0s"),
        ("--hold-at-least", "-5s"),
        ("--hold-at-least", "5"),
        ("--max-runtime", "0ms"),
        ("--max-runtime", "-1m"),
        ("--max-runtime", "30"),
    ] {
        let output = run(
            &cluster,
            &["exec", "job", flag, value, "--", "sh", "-c", &touch],
        );
        assert_eq!(output.status.code(), Some(64), "{flag} {value}");
        let stderr = stderr_of(&output);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(flag) && stderr.contains(value), "{stderr}");
    }
    let env = cluster
        .redlock()
        .env("REDLOCK_HOLD_AT_LEAST", "10")
        .args(["exec", "job", "--", "sh", "-c", &touch])
        .output()
        .unwrap();
    assert_eq!(env.status.code(), Some(64));
    assert!(
        stderr_of(&env).contains("--hold-at-least"),
        "{}",
        stderr_of(&env)
    );
    let token = cluster.acquire_token("job", &[]);
    let release = run(
        &cluster,
        &["release", "job", "--token", &token, "--hold-at-least", "0s"],
    );
    assert_eq!(release.status.code(), Some(64));
    assert!(!marker.exists(), "the command ran");
    // The refused release sent nothing: the scripted lock is untouched.
    assert_eq!(cluster.values(KEY), vec![Some(token)]);
}

#[test]
fn a_busy_lock_is_quiet_with_q_one_line_without_and_a_busy_event_in_json() {
    let cluster = Cluster::start(3);
    let _token = cluster.acquire_token("job", &[]);
    let quiet = run(&cluster, &["-q", "exec", "job", "--", "true"]);
    assert_eq!(quiet.status.code(), Some(75));
    assert_eq!(stderr_of(&quiet), "");
    let normal = run(&cluster, &["exec", "job", "-E", "0", "--", "true"]);
    assert_eq!(normal.status.code(), Some(0));
    let line = stderr_of(&normal);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains("lock 'job' is busy: held by pid"), "{line}");
    for extra in [&["-q"][..], &[][..]] {
        let output = cluster
            .redlock()
            .args(extra)
            .args(["--log-format", "json", "acquire", "job"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(75));
        let stderr = stderr_of(&output);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        let event: serde_json::Value = serde_json::from_str(&stderr).unwrap();
        assert_eq!(event["event"], "busy");
        assert_eq!(event["exit_code"], 75);
        assert!(
            event["held_by"].as_str().unwrap().starts_with("pid "),
            "{event}"
        );
    }
}

#[test]
fn a_waiter_gets_a_kept_lock_when_the_hold_is_over() {
    const HOLD: Duration = Duration::from_secs(2);
    let cluster = Cluster::start(3);
    let started = Instant::now();
    let hold = format!("{}s", HOLD.as_secs());
    let kept = run(
        &cluster,
        &["exec", "job", "--hold-at-least", &hold, "--", "true"],
    );
    assert_eq!(kept.status.code(), Some(0), "{}", stderr_of(&kept));
    let token = cluster.acquire_token("job", &["--wait", "10s"]);
    // Nothing announces an expiry: the waiter retried when the kept key's TTL ran out.
    let took = started.elapsed();
    assert!(took >= HOLD - CLOCK_SKEW, "{took:?}");
    assert!(took < HOLD * 3, "{took:?}");
    // A quorum: a server whose kept key outlived the others' a moment may have refused.
    assert!(cluster.holding(KEY, &token) >= 2);
}
