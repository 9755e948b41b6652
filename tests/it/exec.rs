//! `redlock exec` against real servers and real processes: exit statuses, renewal, lost locks,
//! signals, SIGKILL of redlock itself, process trees, mutual exclusion and re-entry.

use crate::harness::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

pub(crate) fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// True while a process with `pid` exists and is not a zombie.
pub(crate) fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

#[test]
fn exec_passes_the_exit_code_through_and_releases() {
    let cluster = Cluster::start(3);
    cluster
        .redlock()
        .args(["exec", "job", "--", "sh", "-c", "exit 3"])
        .assert()
        .code(3);
    cluster
        .redlock()
        .args(["exec", "job", "--", "true"])
        .assert()
        .code(0);
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
}

#[test]
fn exec_reports_a_signal_death_as_128_plus_n() {
    let cluster = Cluster::start(1);
    cluster
        .redlock()
        .args(["exec", "job", "--", "sh", "-c", "kill -TERM $$"])
        .assert()
        .code(143);
    assert_eq!(cluster.values(KEY), vec![None]);
}

#[test]
fn exec_gives_the_command_its_lock_in_the_environment() {
    let cluster = Cluster::start(3);
    let output = cluster
        .redlock()
        .args(["exec", "job", "--", "sh", "-c", "echo $REDLOCK_NAME $REDLOCK_KEY; redis-cli -p $PORT get $REDLOCK_KEY; echo $REDLOCK_TOKEN"])
        .env("PORT", cluster.servers[0].port.to_string())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let lines: Vec<String> = stdout_of(&output).lines().map(str::to_string).collect();
    assert_eq!(lines[0], "job redlock:job");
    // The token the command sees is the one on the servers.
    assert_eq!(lines[1], lines[2]);
    assert!(lines[2].len() > 32);
}

#[test]
fn exec_cannot_run_a_missing_or_non_executable_command() {
    let cluster = Cluster::start(3);
    let output = cluster
        .redlock()
        .args(["exec", "job", "--", "no-such-command-xyz"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(127));
    assert!(stderr_of(&output).contains("no-such-command-xyz"));
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("not-executable.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    cluster
        .redlock()
        .args(["exec", "job", "--"])
        .arg(&script)
        .assert()
        .code(126);
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
}

#[test]
fn exec_does_not_run_the_command_when_the_lock_is_busy() {
    let cluster = Cluster::start(3);
    let holder = cluster.redlock().args(["acquire", "job"]).output().unwrap();
    let token = stdout_of(&holder);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let touch = format!("touch {}", marker.display());
    cluster
        .redlock()
        .args(["exec", "job", "--", "sh", "-c", &touch])
        .assert()
        .code(75);
    cluster
        .redlock()
        .args(["exec", "job", "-E", "9", "--", "sh", "-c", &touch])
        .assert()
        .code(9);
    assert!(!marker.exists(), "the command ran without the lock");
    assert_eq!(cluster.holding(KEY, &token), 3);
}

#[test]
fn exec_renews_the_lock_while_the_command_runs() {
    let cluster = Cluster::start(3);
    let mut child = cluster.spawn(&[
        "exec",
        "job",
        "--ttl",
        "1s",
        "--timeout",
        "100ms",
        "--",
        "sleep",
        "3",
    ]);
    wait_for("the lock to be taken", Duration::from_secs(5), || {
        cluster.values(KEY).iter().all(Option::is_some)
    });
    let token = cluster.values(KEY)[0].clone().unwrap();
    let started = Instant::now();
    let mut highest_pttl_after_expiry = 0;
    // Past the 1 s ttl the key would be gone without renewal; watch it for 2 s.
    while started.elapsed() < Duration::from_millis(2_000) {
        assert!(
            cluster.holding(KEY, &token) >= 2,
            "lost the lock at {:?}",
            started.elapsed()
        );
        if started.elapsed() > Duration::from_millis(1_100) {
            highest_pttl_after_expiry = highest_pttl_after_expiry.max(cluster.servers[0].pttl(KEY));
        }
        cluster.redlock().args(["acquire", "job"]).assert().code(75);
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        highest_pttl_after_expiry > 600,
        "pttl was not refreshed: {highest_pttl_after_expiry}"
    );
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
    child = cluster.spawn(&["exec", "job", "--", "true"]);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// `redlock ARGS -- sh -c SCRIPT` with `$DIR` a fresh directory, returned once SCRIPT has run
/// `touch "$DIR/ready"`.
fn exec_until_ready(cluster: &Cluster, args: &[&str], script: &str) -> (Child, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut command = cluster.process();
    command
        .env("DIR", dir.path())
        .args(args)
        .args(["--", "sh", "-c", script]);
    let child = spawn_captured(command);
    let ready = dir.path().join("ready");
    wait_for("the command to start", Duration::from_secs(5), || {
        ready.exists()
    });
    (child, dir)
}

/// A command that records SIGTERM in `marker` and otherwise runs for 30 s, with a grandchild
/// whose pid goes to `grandchild`.
fn long_command(marker: &Path, grandchild: &Path) -> String {
    format!(
        "trap 'echo term > {m}; kill $pid 2>/dev/null; exit 0' TERM; sleep 30 & pid=$!; echo $pid > {g}; wait",
        m = marker.display(),
        g = grandchild.display()
    )
}

/// `redlock exec job --ttl 3s FLAGS -- sh -c <long_command>` in `dir`, once the command runs;
/// with the file its TERM trap writes to.
fn exec_long_command(cluster: &Cluster, dir: &Path, flags: &[&str]) -> (Child, PathBuf) {
    let (marker, grandchild) = (dir.join("term"), dir.join("pid"));
    let script = long_command(&marker, &grandchild);
    let mut args = vec!["exec", "job", "--ttl", "3s"];
    args.extend_from_slice(flags);
    args.extend(["--", "sh", "-c", &script]);
    let child = cluster.spawn(&args);
    wait_for("the command to start", Duration::from_secs(5), || {
        !read(&grandchild).is_empty()
    });
    (child, marker)
}

#[test]
fn exec_stops_the_command_and_exits_125_when_the_key_is_taken_over() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let (child, marker) = exec_long_command(&cluster, dir.path(), &[]);
    let started = Instant::now();
    for server in &cluster.servers {
        server.set(KEY, "someone-else");
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(125), "{}", stderr_of(&output));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(read(&marker), "term", "the command never got SIGTERM");
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("lost") && stderr.contains("taken over"),
        "{stderr}"
    );
    // The new holder's key is untouched.
    assert_eq!(cluster.holding(KEY, "someone-else"), 3);
}

#[test]
fn exec_stops_the_whole_process_tree_when_the_lock_is_lost() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    // The shell ignores SIGTERM; its grandchild (sleep) does not. Both must go.
    let script = format!(
        "trap '' TERM; sleep 30 & echo $! > {}; wait; sleep 30",
        pidfile.display()
    );
    let child = cluster.spawn(&[
        "exec",
        "job",
        "--ttl",
        "3s",
        "--kill-after",
        "500ms",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    wait_for("the grandchild to start", Duration::from_secs(5), || {
        !read(&pidfile).is_empty()
    });
    let grandchild: i32 = read(&pidfile).parse().unwrap();
    for server in &cluster.servers {
        server.set(KEY, "someone-else");
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(125), "{}", stderr_of(&output));
    wait_for("the grandchild to die", Duration::from_secs(2), || {
        !alive(grandchild)
    });
}

#[test]
fn exec_stops_the_command_when_a_majority_of_servers_stops_answering() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--timeout", "100ms", "--kill-after", "500ms"];
    let (child, marker) = exec_long_command(&cluster, dir.path(), &flags);
    let started = Instant::now();
    cluster.servers[0].stop();
    cluster.servers[1].stop();
    let output = child.wait_with_output().unwrap();
    let elapsed = started.elapsed();
    cluster.servers[0].resume();
    cluster.servers[1].resume();
    assert_eq!(output.status.code(), Some(125), "{}", stderr_of(&output));
    assert_eq!(read(&marker), "term");
    // Stopped before the 3 s lease could run out on the servers.
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    assert!(
        stderr_of(&output).contains("lost"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn signals_to_redlock_reach_the_command_and_the_lock_is_released() {
    for (signal, expected) in [
        (libc::SIGTERM, 143),
        (libc::SIGINT, 130),
        (libc::SIGHUP, 129),
    ] {
        let cluster = Cluster::start(1);
        // The trap records the signal, then dies of it, as a well-behaved command does.
        let script = format!(
            r#"trap 'echo {signal} > "$DIR/got"; trap - {signal}; kill -{signal} $$' {signal}; touch "$DIR/ready"; while :; do sleep 0.05; done"#
        );
        let (child, dir) = exec_until_ready(&cluster, &["exec", "job"], &script);
        let marker = dir.path().join("got");
        crate::harness::signal(child.id() as i32, signal);
        let output = child.wait_with_output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(expected),
            "signal {signal}: {}",
            stderr_of(&output)
        );
        assert_eq!(
            read(&marker),
            signal.to_string(),
            "signal {signal} did not reach the command"
        );
        assert_eq!(cluster.values(KEY), vec![None]);
    }
}

#[test]
fn a_command_that_traps_a_signal_decides_the_exit_status() {
    let cluster = Cluster::start(1);
    let script = r#"trap 'exit 7' TERM; touch "$DIR/ready"; while :; do sleep 0.05; done"#;
    let (child, _dir) = exec_until_ready(&cluster, &["exec", "job"], script);
    signal(child.id() as i32, libc::SIGTERM);
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(7));
    assert_eq!(cluster.values(KEY), vec![None]);
}

#[test]
fn sigkill_of_redlock_takes_the_command_and_its_children_down() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let script = format!("sleep 30 & echo $$ $! > {}; wait", pids.display());
    let mut child = cluster.spawn(&[
        "exec",
        "job",
        "--kill-after",
        "1s",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    wait_for("the command to start", Duration::from_secs(5), || {
        read(&pids).split(' ').count() == 2
    });
    let both: Vec<i32> = read(&pids).split(' ').map(|p| p.parse().unwrap()).collect();
    signal(child.id() as i32, libc::SIGKILL);
    let _ = child.wait();
    wait_for(
        "the command and its child to die",
        Duration::from_secs(3),
        || both.iter().all(|&pid| !alive(pid)),
    );
}

#[test]
fn exec_waiters_exclude_each_other_exactly() {
    let cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("counter");
    let inside = dir.path().join("inside");
    let overlaps = dir.path().join("overlaps");
    std::fs::write(&counter, "0").unwrap();
    // A non-atomic read-increment-write with a pause inside, and a tripwire for overlap.
    let section = format!(
        "if [ -e {i} ]; then echo overlap >> {o}; fi; touch {i}; n=$(cat {c}); sleep 0.01; echo $((n+1)) > {c}; rm -f {i}",
        i = inside.display(),
        o = overlaps.display(),
        c = counter.display()
    );
    let per_process = 4;
    let workers: Vec<Child> = (0..8)
        .map(|_| {
            let loop_script = format!(
                "for i in $(seq {per_process}); do \"$REDLOCK_BIN\" exec job --wait 60s --retry-delay 20ms -- sh -c '{section}' || exit 1; done"
            );
            Command::new("sh")
                .args(["-c", &loop_script])
                .env("REDLOCK_BIN", redlock_path())
                .env("REDLOCK_SERVERS", cluster.urls())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for worker in workers {
        let output = worker.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    assert_eq!(read(&counter), (8 * per_process).to_string());
    assert!(!overlaps.exists(), "two commands ran at once");
}

#[test]
fn exec_inside_exec_reenters_without_releasing_the_outer_lock() {
    let cluster = Cluster::start(3);
    let script =
        "\"$REDLOCK_BIN\" exec job --wait 0s -- sh -c 'echo inner $REDLOCK_TOKEN' || exit 9; \
                  \"$REDLOCK_BIN\" status job >/dev/null || exit 8; echo outer $REDLOCK_TOKEN";
    let output = cluster
        .redlock()
        .env("REDLOCK_BIN", redlock_path())
        .args(["exec", "job", "--", "sh", "-c", script])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        stdout_of(&output),
        stderr_of(&output)
    );
    let stdout = stdout_of(&output);
    let lines: Vec<&str> = stdout.lines().collect();
    let inner = lines[0].strip_prefix("inner ").unwrap();
    let outer = lines[1].strip_prefix("outer ").unwrap();
    assert_eq!(inner, outer, "the inner exec took a lock of its own");
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
}

#[test]
fn exec_refuses_a_ttl_too_short_to_renew_and_runs_nothing() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let output = cluster
        .redlock()
        .args(["exec", "job", "--ttl", "500ms", "--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(64));
    assert!(
        stderr_of(&output).contains("--ttl 500ms"),
        "{}",
        stderr_of(&output)
    );
    assert!(!marker.exists());
    assert_eq!(cluster.values(KEY), vec![None]);
}

#[test]
fn exec_logs_its_lifecycle_as_json_lines() {
    let cluster = Cluster::start(3);
    let output = cluster
        .redlock()
        .args([
            "--log-format",
            "json",
            "exec",
            "job",
            "--ttl",
            "1500ms",
            "--timeout",
            "100ms",
            "--",
        ])
        .args(["sh", "-c", "sleep 1; exit 4"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(4), "{}", stderr_of(&output));
    let events: Vec<serde_json::Value> = stderr_of(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    let position = |kind: &str| kinds.iter().position(|k| *k == kind);
    let (acquired, renewed, exited, released) = (
        position("acquired").expect("acquired"),
        position("renewed").expect("renewed"),
        position("child_exited").expect("child_exited"),
        position("released").expect("released"),
    );
    assert!(
        acquired < renewed && renewed < exited && exited < released,
        "{kinds:?}"
    );
    assert_eq!(events[exited]["code"], 4);
    assert!(events.iter().all(|e| e["name"] == "job"));
}

#[test]
fn exec_logs_the_loss_and_its_reason() {
    let cluster = Cluster::start(1);
    let args = ["--log-format", "json", "exec", "job", "--ttl", "3s"];
    let (child, _dir) = exec_until_ready(&cluster, &args, r#"touch "$DIR/ready"; sleep 30"#);
    cluster.servers[0].set(KEY, "someone-else");
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(125));
    let lost: Vec<serde_json::Value> = stderr_of(&output)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|e| e["event"] == "lost")
        .collect();
    assert_eq!(lost.len(), 1, "{}", stderr_of(&output));
    assert!(lost[0]["reason"].as_str().unwrap().contains("taken over"));
}

#[test]
fn exec_releases_even_when_its_idle_connections_were_closed() {
    let cluster = Cluster::start(3);
    // The command closes every client connection on every server (as a server restart, an idle
    // timeout or a NAT would), then exits: the release must reconnect, not give up.
    let kill_clients: Vec<String> = cluster
        .servers
        .iter()
        .map(|s| {
            format!(
                "redis-cli -p {} CLIENT KILL TYPE normal SKIPME yes >/dev/null",
                s.port
            )
        })
        .collect();
    let output = cluster
        .redlock()
        .args(["exec", "job", "--", "sh", "-c", &kill_clients.join("; ")])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(stderr_of(&output), "", "the release complained");
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
}

#[test]
fn exec_paused_past_its_validity_says_so_and_stops_the_command() {
    let cluster = Cluster::start(1);
    let args = ["exec", "job", "--ttl", "3s"];
    let (child, _dir) = exec_until_ready(&cluster, &args, r#"touch "$DIR/ready"; sleep 30"#);
    signal(child.id() as i32, libc::SIGSTOP);
    // The servers' clocks run on while redlock is stopped: wait for the key to expire there.
    wait_for("the key to expire", Duration::from_secs(10), || {
        cluster.servers[0].get(KEY).is_none()
    });
    signal(child.id() as i32, libc::SIGCONT);
    let output = child.wait_with_output().unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(125), "{stderr}");
    assert!(
        stderr.contains("paused past the lock's validity"),
        "{stderr}"
    );
    assert!(!stderr.contains("could not reach a quorum"), "{stderr}");
}
