//! `exec` handled as supervisors really handle it: redlock's process group killed (`kill -9 --
//! -PGID`, `timeout -s KILL`, a CI runner's SIGTERM then SIGKILL) or paused (SIGSTOP of its pid
//! or its group) while its command runs. Whatever happens to redlock, its command must have
//! stopped before another holder's starts, and a run during which the lock was lost must end
//! with 125 and be recorded `lost`.
//!
//! Each test runs a first `exec --ttl 2s` whose command appends a line to a file every 20 ms,
//! does something to redlock, then runs a second `exec --wait` whose command works for about a
//! second and prints how many lines the first had written when it started and when it ended:
//! the two must be equal.

use crate::support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A TTL short enough for a quick test; the timeout leaves the schedule room for it.
const FLAGS: [&str; 4] = ["--ttl", "2s", "--timeout", "100ms"];

/// The first holder's command: its pid to `$DIR/pid`, then a line to `$DIR/a` every 20 ms until
/// stopped; a SIGTERM is written down in `$DIR/term` and otherwise ignored (a command slower to
/// stop than any grace).
const WRITER: &str = r#"echo $$ > "$DIR/pid"; trap 'echo term > "$DIR/term"' TERM; echo x >> "$DIR/a"; touch "$DIR/ready"; while :; do sleep 0.02; echo x >> "$DIR/a"; done"#;

/// The first holder's command, killed when the test ends if nothing else stopped it.
struct Writer {
    dir: tempfile::TempDir,
}

impl Writer {
    fn pid(&self) -> i32 {
        read(&self.dir.path().join("pid")).parse().unwrap()
    }

    fn lines(&self) -> PathBuf {
        self.dir.path().join("a")
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if let Ok(pid) = read(&self.dir.path().join("pid")).parse::<i32>() {
            if alive(pid) {
                signal(pid, libc::SIGKILL);
            }
        }
    }
}

/// `redlock exec NAME FLAGS extra -- sh -c WRITER` (or `script`) under `wrapper` (a program
/// and its arguments that run redlock, such as `timeout`), once the command runs.
fn first_holder(
    cluster: &Cluster,
    wrapper: &[&str],
    (name, extra): (&str, &[&str]),
    script: &str,
) -> (Running, Writer) {
    let writer = Writer {
        dir: tempfile::tempdir().unwrap(),
    };
    let mut command = match wrapper.split_first() {
        None => redlock_on(&cluster.urls()),
        Some((program, args)) => {
            let configured = redlock_on(&cluster.urls());
            let mut command = std::process::Command::new(program);
            command.args(args).arg(redlock_path());
            for (var, value) in configured.get_envs() {
                match value {
                    Some(value) => command.env(var, value),
                    None => command.env_remove(var),
                };
            }
            command
        }
    };
    command
        .env("DIR", writer.dir.path())
        .args(["exec", name])
        .args(FLAGS)
        .args(extra)
        .args(["--", "sh", "-c", script]);
    let ready = writer.dir.path().join("ready");
    let running = Cmd::new(command).spawn_until("the first command to start", || ready.exists());
    (running, writer)
}

/// Runs the second holder to its end (it waits for the lock) and asserts that the first
/// command wrote nothing while it ran.
fn second_holder_runs_alone(cluster: &Cluster, (name, extra): (&str, &[&str]), lines: &Path) {
    let script = r#"before=$(wc -l < "$A"); i=0; while [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done; after=$(wc -l < "$A"); echo "$before $after""#;
    let output = cluster
        .redlock()
        .env("A", lines)
        .args(["exec", name])
        .args(FLAGS)
        .args(["--wait", "20s"])
        .args(extra)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let counts: Vec<u64> = stdout_of(&output)
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(counts.len(), 2, "{name}: {:?}", output);
    assert!(counts[0] > 0, "the first command never wrote");
    assert_eq!(
        counts[0], counts[1],
        "{name}: the first command wrote while the second held the lock"
    );
}

/// A group kill of redlock: its command is stopped at once, and the next holder runs alone.
fn after_a_group_kill(wrapper: &[&str], kill: impl FnOnce(&Running, &Writer)) {
    let cluster = Cluster::start(1);
    let (first, writer) = first_holder(&cluster, wrapper, ("job", &[]), WRITER);
    kill(&first, &writer);
    // Gone, and its output closed: nothing it started holds it open any more.
    first.wait();
    second_holder_runs_alone(&cluster, ("job", &[]), &writer.lines());
    assert!(!alive(writer.pid()), "the first command still runs");
}

#[test]
fn a_sigkill_of_redlocks_group_stops_the_command_before_the_next_holder_runs() {
    after_a_group_kill(&[], |first, _| signal(-(first.id() as i32), libc::SIGKILL));
}

#[test]
fn timeout_s_kill_around_exec_stops_the_command_before_the_next_holder_runs() {
    // timeout(1) runs redlock in its own process group and, when time is up, signals the group.
    after_a_group_kill(&["timeout", "-s", "KILL", "2"], |_, _| {});
}

#[test]
fn a_ci_cancel_stops_a_command_slow_to_stop_before_the_next_holder_runs() {
    // A CI runner's cancel: SIGTERM to the job's group, which redlock passes on and the command
    // ignores, then SIGKILL to the group a little later.
    after_a_group_kill(&[], |first, writer| {
        signal(-(first.id() as i32), libc::SIGTERM);
        wait_for("the command to get SIGTERM", SLACK, || {
            writer.dir.path().join("term").exists()
        });
        signal(-(first.id() as i32), libc::SIGKILL);
    });
}

/// redlock paused by `stop` (SIGSTOP of its pid, or of its group) and continued only once the
/// next holder has run: its command has been stopped meanwhile, and the run ends lost.
fn after_a_pause(group: bool) {
    let cluster = Cluster::start(1);
    let (first, writer) = first_holder(&cluster, &[], ("job", &[]), WRITER);
    let target = if group {
        -(first.id() as i32)
    } else {
        first.id() as i32
    };
    signal(target, libc::SIGSTOP);
    second_holder_runs_alone(&cluster, ("job", &[]), &writer.lines());
    assert!(!alive(writer.pid()), "the first command still runs");
    signal(target, libc::SIGCONT);
    let output = first.finish(SLACK);
    assert_eq!(output.status.code(), Some(125), "{}", stderr_of(&output));
    assert_eq!(ended_as(&cluster, "job"), ["ok", "lost"]);
}

#[test]
fn a_sigstop_of_redlock_stops_the_command_before_the_lock_runs_out() {
    after_a_pause(false);
}

#[test]
fn a_sigstop_of_redlocks_group_stops_the_command_before_the_lock_runs_out() {
    after_a_pause(true);
}

/// How the runs of `name` ended, newest first.
fn ended_as(cluster: &Cluster, name: &str) -> Vec<String> {
    let output = cluster
        .call(["history", name, "--json"])
        .exits(0)
        .get_output()
        .clone();
    document(&output)["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["ended_as"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_command_that_ends_while_redlock_is_paused_past_the_lock_is_a_lost_run_in_every_mode() {
    // The command ends on its own, with status 0, while redlock is stopped; redlock resumes
    // only after another holder has had the lock. Its run did not hold the lock to the end, so
    // it is not a success, whatever the mode of the lock.
    let cluster = Cluster::start(1);
    let modes: [(&str, &[&str], &[&str]); 5] = [
        ("plain", &[], &[]),
        ("shared", &["--shared"], &[]),
        ("limit", &["--limit", "1"], &["--limit", "1"]),
        ("hold", &["--hold-at-least", "1s"], &[]),
        ("fence", &["--fence"], &["--fence"]),
    ];
    std::thread::scope(|scope| {
        for (name, first_flags, second_flags) in modes {
            let cluster = &cluster;
            scope.spawn(move || {
                let script = r#"echo $$ > "$DIR/pid"; echo x >> "$DIR/a"; touch "$DIR/ready"; while [ ! -e "$DIR/go" ]; do sleep 0.02; echo x >> "$DIR/a"; done"#;
                let (first, writer) = first_holder(cluster, &[], (name, first_flags), script);
                signal(first.id() as i32, libc::SIGSTOP);
                std::fs::write(writer.dir.path().join("go"), "").unwrap();
                wait_for("the command to end", SLACK, || !alive(writer.pid()));
                second_holder_runs_alone(cluster, (name, second_flags), &writer.lines());
                signal(first.id() as i32, libc::SIGCONT);
                let output = first.finish(SLACK);
                let stderr = stderr_of(&output);
                assert_eq!(output.status.code(), Some(125), "{name}: {stderr}");
                assert!(stderr.contains("redlock was paused"), "{name}: {stderr}");
                assert_eq!(ended_as(cluster, name), ["ok", "lost"], "{name}");
            });
        }
    });
}

#[test]
fn a_release_that_finds_the_token_gone_ends_the_run_lost() {
    // The key is deleted between the last renewal and the command's end: the release finds the
    // token gone on a quorum, so the lock was not held for all of the run.
    let cluster = Cluster::start(3);
    let script = r#"touch "$DIR/ready"; while [ ! -e "$DIR/go" ]; do sleep 0.02; done"#;
    let (child, dir) = exec_until_ready(&cluster, &["exec", "job", "--ttl", "60s"], script);
    cluster.call(["release", "job", "--force"]).succeeds();
    std::fs::write(dir.path().join("go"), "").unwrap();
    let output = child.finish(SLACK);
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(125), "{stderr}");
    assert!(stderr.contains("token was gone"), "{stderr}");
    let history = document(
        cluster
            .call(["history", "job", "--json"])
            .exits(0)
            .get_output(),
    );
    let runs: Vec<(&str, &Value)> = history["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| (run["ended_as"].as_str().unwrap(), &run["servers_holding"]))
        .collect();
    assert_eq!(runs, [("lost", &Value::from(3))], "{history}");
}
