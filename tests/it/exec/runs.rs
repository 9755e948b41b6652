//! `redlock exec` running its command against real servers and real processes: exit statuses
//! passed through, the lock in the command's environment, commands that cannot run, a busy lock,
//! mutual exclusion and re-entry, refusals, the JSON lifecycle and the release at the end.

use crate::support::waiters::{assert_exclusive, spawn_workers};
use crate::support::*;
use std::time::Duration;

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
    let holder = cluster.call(["acquire", "job"]);
    let token = holder.stdout_text();
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
fn exec_waiters_exclude_each_other_exactly() {
    let cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("counter"), "0").unwrap();
    // A non-atomic read-increment-write with a pause inside, and a tripwire for overlap.
    let section = r#"if [ -e "$DIR/inside" ]; then echo overlap >> "$DIR/errors"; fi
        touch "$DIR/inside"; n=$(cat "$DIR/counter"); sleep 0.01
        echo $((n+1)) > "$DIR/counter"; rm -f "$DIR/inside""#;
    let script = r#"for i in $(seq "$SECTIONS"); do
          "$REDLOCK" exec job --wait "$WAIT" --retry-delay 20ms -- sh -c "$SECTION" || exit 1
        done"#;
    let (workers, sections) = (8, 4);
    let crowd = (workers, sections, Duration::from_secs(60));
    let count = sections.to_string();
    let env = [("SECTION", section), ("SECTIONS", count.as_str())];
    let running = spawn_workers(&cluster, crowd, script, dir.path(), &env);
    assert_exclusive(running, dir.path(), workers * sections as usize);
}

#[test]
fn exec_inside_exec_reenters_without_releasing_the_outer_lock() {
    let cluster = Cluster::start(3);
    let script = "redlock exec job --wait 0s -- sh -c 'echo inner $REDLOCK_TOKEN' || exit 9; \
                  redlock status job >/dev/null || exit 8; echo outer $REDLOCK_TOKEN";
    let output = cluster
        .redlock()
        .env("PATH", path_with_redlock())
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
    // Refused before anything runs: a one-shot run, though it is an exec.
    cluster
        .cmd(["exec", "job", "--ttl", "500ms", "--", "touch"])
        .arg(&marker)
        .assert()
        .code(64)
        .stderr(predicate::str::contains("--ttl 500ms"));
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
    let events = json_lines(&stderr_of(&output));
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
fn exec_renews_on_servers_that_forgot_its_script_while_connected() {
    // A renewal after the first sends the script's hash (EVALSHA) on the connection that carried
    // its source; a server that forgot it meanwhile (SCRIPT FLUSH) answers NOSCRIPT, and the
    // renewal loads it again (SCRIPT LOAD) and runs it. (A connection replaced after a late
    // reply starts with the source again, which needs no load.)
    let cluster = Cluster::start(3);
    let ttl = Duration::from_secs(3);
    let script = "touch \"$DIR/ready\"; while [ ! -e \"$DIR/done\" ]; do sleep 0.05; done";
    let (running, dir) = exec_until_ready(&cluster, &["exec", "job", "--ttl", "3s"], script);
    // A renewal gives the key its whole TTL again on each server: its PTTL rises.
    let renewed_everywhere = |what: &str| {
        let mut last: Vec<i64> = cluster.servers.iter().map(|s| s.pttl(KEY)).collect();
        let mut rose = vec![false; last.len()];
        wait_for(what, ttl, || {
            for (at, server) in cluster.servers.iter().enumerate() {
                let now = server.pttl(KEY);
                rose[at] |= now > last[at];
                last[at] = now;
            }
            rose.iter().all(|rose| *rose)
        });
    };
    renewed_everywhere("a first renewal on every server");
    for server in &cluster.servers {
        let mut con = server.connection();
        let _: () = redis::cmd("CONFIG")
            .arg("RESETSTAT")
            .query(&mut con)
            .unwrap();
        let _: () = redis::cmd("SCRIPT").arg("FLUSH").query(&mut con).unwrap();
    }
    renewed_everywhere("a renewal on every server after they forgot the script");
    std::fs::write(dir.path().join("done"), "").unwrap();
    let output = running.wait();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(stderr_of(&output), "", "a renewal complained");
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
    // Each server ran the renewal's script again after forgetting it: each NOSCRIPT (a failed
    // EVALSHA) was answered by sending the source (SCRIPT LOAD, or EVAL with it).
    for server in &cluster.servers {
        let stats: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut server.connection())
            .unwrap();
        let count = |command: &str, field: &str| -> u64 {
            let line = stats.lines().find(|line| line.starts_with(command));
            let value =
                line.and_then(|line| line.split([':', ',']).find_map(|f| f.strip_prefix(field)));
            value.map_or(0, |value| value.parse().unwrap())
        };
        let failed = count("cmdstat_evalsha:", "failed_calls=");
        let sources = count("cmdstat_script|load:", "calls=") + count("cmdstat_eval:", "calls=");
        assert!(sources >= failed.max(1), "port {}: {stats}", server.port);
    }
}
