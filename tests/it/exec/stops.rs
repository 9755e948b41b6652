//! When `redlock exec` stops its command: never while renewals keep the lock, but once the lock
//! is lost (taken over, a majority silent, redlock paused past its validity), with the whole
//! process tree; and on a signal to redlock, which reaches the command (a command that traps it
//! decides the exit status), or SIGKILL of redlock itself.

use crate::support::*;
use std::time::{Duration, Instant};

#[test]
fn exec_renews_the_lock_while_the_command_runs() {
    // Renewed every TTL/3, so a TTL leaves a loaded machine room for a late renewal or two.
    const TTL: Duration = Duration::from_secs(3);
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let (running, done) = (dir.path().join("running"), dir.path().join("done"));
    let child = cluster
        .redlock()
        .args(["exec", "job", "--ttl", &format!("{}s", TTL.as_secs())])
        .args(["--timeout", "100ms", "--", "sh", "-c"])
        .arg(until_file(&running, &done))
        .spawn();
    wait_for("the lock to be taken", Duration::from_secs(5), || {
        cluster.values(KEY).iter().all(Option::is_some)
    });
    let token = cluster.values(KEY)[0].clone().unwrap();
    let started = Instant::now();
    let mut highest_pttl_after_expiry = 0;
    // Past the TTL the key would be gone without renewal; watch it for half a TTL more, which
    // holds at least one renewal.
    while started.elapsed() < TTL + TTL / 2 {
        assert!(
            cluster.holding(KEY, &token) >= 2,
            "lost the lock at {:?}",
            started.elapsed()
        );
        if started.elapsed() > TTL {
            highest_pttl_after_expiry = highest_pttl_after_expiry.max(cluster.servers[0].pttl(KEY));
        }
        cluster.call(["acquire", "job"]).exits(75);
        std::thread::sleep(Duration::from_millis(100));
    }
    // Right after a renewal the key has about a whole TTL again.
    assert!(
        highest_pttl_after_expiry > (TTL * 2 / 3).as_millis() as i64,
        "pttl was not refreshed: {highest_pttl_after_expiry}"
    );
    std::fs::write(&done, "").unwrap();
    let output = child.finish(SLACK);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
    cluster
        .redlock()
        .args(["exec", "job", "--", "true"])
        .assert()
        .code(0);
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
    let output = child.finish(LONG_COMMAND_TTL + SLACK);
    assert_eq!(output.status.code(), Some(125), "{}", stderr_of(&output));
    // Found at the next renewal, a third of the TTL away, and the command stopped at once.
    assert!(
        started.elapsed() < LONG_COMMAND_TTL,
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
    let ttl = format!("{}s", LONG_COMMAND_TTL.as_secs());
    let child = cluster
        .redlock()
        .args(["exec", "job", "--ttl", &ttl, "--kill-after", "500ms"])
        .args(["--", "sh", "-c", &script])
        .spawn_until("the grandchild to start", || !read(&pidfile).is_empty());
    let grandchild: i32 = read(&pidfile).parse().unwrap();
    for server in &cluster.servers {
        server.set(KEY, "someone-else");
    }
    let output = child.finish(LONG_COMMAND_TTL + SLACK);
    assert_eq!(output.status.code(), Some(125), "{}", stderr_of(&output));
    wait_for("the grandchild to die", Duration::from_secs(2), || {
        !alive(grandchild)
    });
}

#[test]
fn exec_stops_the_command_when_a_majority_of_servers_stops_answering() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    // The longest grace the TTL allows: the command is told to stop that much before the lease
    // runs out, which leaves a loaded machine that much room.
    let grace = format!("{}ms", (LONG_COMMAND_TTL / 3).as_millis());
    let flags = ["--timeout", "100ms", "--kill-after", &grace];
    let (child, marker) = exec_long_command(&cluster, dir.path(), &flags);
    let started = Instant::now();
    cluster.servers[0].stop();
    cluster.servers[1].stop();
    wait_for(
        "the command to get SIGTERM",
        LONG_COMMAND_TTL + SLACK,
        || read(&marker) == "term",
    );
    let stopped = started.elapsed();
    let output = child.finish(SLACK);
    cluster.servers[0].resume();
    cluster.servers[1].resume();
    assert_eq!(output.status.code(), Some(125), "{}", stderr_of(&output));
    // Stopped before the lease could run out on the servers.
    assert!(stopped < LONG_COMMAND_TTL, "{stopped:?}");
    assert!(
        stderr_of(&output).contains("lost"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn exec_logs_the_loss_and_its_reason() {
    let cluster = Cluster::start(1);
    let ttl = format!("{}s", LONG_COMMAND_TTL.as_secs());
    let args = ["--log-format", "json", "exec", "job", "--ttl", &ttl];
    let (child, _dir) = exec_until_ready(&cluster, &args, r#"touch "$DIR/ready"; sleep 30"#);
    cluster.servers[0].set(KEY, "someone-else");
    let output = child.finish(LONG_COMMAND_TTL + SLACK);
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
fn exec_paused_past_its_validity_says_so_and_stops_the_command() {
    let cluster = Cluster::start(1);
    let ttl = format!("{}s", LONG_COMMAND_TTL.as_secs());
    let args = ["exec", "job", "--ttl", &ttl];
    let (child, _dir) = exec_until_ready(&cluster, &args, r#"touch "$DIR/ready"; sleep 30"#);
    signal(child.id() as i32, libc::SIGSTOP);
    // The servers' clocks run on while redlock is stopped: wait for the key to expire there.
    wait_for("the key to expire", LONG_COMMAND_TTL + SLACK, || {
        cluster.servers[0].get(KEY).is_none()
    });
    signal(child.id() as i32, libc::SIGCONT);
    let output = child.finish(SLACK);
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(125), "{stderr}");
    // The guardian stopped the command while redlock was paused: redlock, resumed, says why.
    assert!(stderr.contains("redlock was paused"), "{stderr}");
    assert!(!stderr.contains("could not reach a quorum"), "{stderr}");
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
        crate::support::signal(child.id() as i32, signal);
        let output = child.wait();
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
    assert_eq!(child.wait().status.code(), Some(7));
    assert_eq!(cluster.values(KEY), vec![None]);
}

#[test]
fn sigkill_of_redlock_takes_the_command_and_its_children_down() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let script = format!("sleep 30 & echo $$ $! > {}; wait", pids.display());
    const KILL_AFTER: Duration = Duration::from_secs(1);
    let kill_after = format!("{}s", KILL_AFTER.as_secs());
    let child = cluster
        .redlock()
        .args([
            "exec",
            "job",
            "--kill-after",
            &kill_after,
            "--",
            "sh",
            "-c",
            &script,
        ])
        .spawn_until("the command to start", || {
            read(&pids).split(' ').count() == 2
        });
    let both: Vec<i32> = read(&pids).split(' ').map(|p| p.parse().unwrap()).collect();
    signal(child.id() as i32, libc::SIGKILL);
    // SIGTERM at once, SIGKILL after the grace: gone well within three graces.
    wait_for("the command and its child to die", KILL_AFTER * 3, || {
        both.iter().all(|&pid| !alive(pid))
    });
    assert_eq!(child.wait().status.code(), None, "not killed");
}
