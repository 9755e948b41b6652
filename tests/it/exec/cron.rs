//! Cron across a fleet: with `--hold-at-least` a short job runs once per schedule (also with a
//! server down) and a waiter gets the kept lock once the hold is over; `--max-runtime` stops a
//! hung command (exit 124); bad holds and runtimes are usage errors; a busy lock is quiet with
//! `-q`.

use crate::support::*;
use std::time::{Duration, Instant};

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
    let status = json(cluster.call(["status", "job", "--json"]).get_output());
    assert_eq!(status["kept"]["status"], "timeout", "{status}");
    cluster.call(["acquire", "job"]).exits(75);
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
        // Refused before anything runs: a one-shot run, though it is an exec.
        cluster
            .call(["exec", "job", flag, value, "--", "sh", "-c", &touch])
            .exits(64)
            .stderr(
                line_count(1)
                    .and(predicate::str::contains(flag))
                    .and(predicate::str::contains(value)),
            );
    }
    cluster
        .cmd(["exec", "job", "--", "sh", "-c", &touch])
        .env("REDLOCK_HOLD_AT_LEAST", "10")
        .assert()
        .code(64)
        .stderr(predicate::str::contains("--hold-at-least"));
    let token = cluster.acquire_token("job", &[]);
    cluster
        .call(["release", "job", "--token", &token, "--hold-at-least", "0s"])
        .exits(64);
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
        let busy = cluster
            .cmd(extra)
            .args(["--log-format", "json", "acquire", "job"])
            .assert()
            .code(75)
            .stderr(line_count(1));
        let stderr = stderr_of(busy.get_output());
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
