//! Shared locks (`--shared`): many shared holders or one exclusive holder, never both, with the
//! state on every server, mode mismatches refused without touching anything, a crashed holder
//! gone after its TTL, writers not starved, a batch of shared waiters woken together, and
//! re-entry rules.

use crate::support::waiters::{spawn_workers, subscribers};
use crate::support::*;
use std::path::Path;
use std::time::{Duration, Instant};

const READERS: &str = "redlock:job\u{1f}readers";
const MARK: &str = "redlock:shared";

fn run(cluster: &Cluster, args: &[&str]) -> std::process::Output {
    cluster.redlock().args(args).output().unwrap()
}

/// Shared holders recorded on `server`, with their scores.
fn readers(server: &Redis) -> Vec<String> {
    redis::cmd("ZRANGE")
        .arg(READERS)
        .arg(0)
        .arg(-1)
        .query(&mut server.connection())
        .unwrap()
}

fn status_json(cluster: &Cluster) -> serde_json::Value {
    let output = run(cluster, &["status", "job", "--json"]);
    serde_json::from_str(&stdout_of(&output)).unwrap()
}

#[test]
fn shared_holders_hold_together_and_exclude_a_writer_until_the_last_leaves() {
    let cluster = Cluster::start(3);
    let first = cluster.acquire_token("job", &["--shared"]);
    let second = cluster.acquire_token("job", &["--shared"]);
    for server in &cluster.servers {
        assert_eq!(server.get(KEY).as_deref(), Some(MARK));
        let mut held = readers(server);
        held.sort();
        let mut expected = vec![first.clone(), second.clone()];
        expected.sort();
        assert_eq!(held, expected);
    }
    // A writer is refused, with the shared holders named.
    let writer = run(&cluster, &["acquire", "job"]);
    assert_eq!(writer.status.code(), Some(75), "{}", stderr_of(&writer));
    assert!(
        stderr_of(&writer).contains("shared holders"),
        "{}",
        stderr_of(&writer)
    );
    let status = status_json(&cluster);
    assert_eq!(status["mode"], "shared");
    assert_eq!(status["held"], true);
    assert_eq!(status["readers"].as_array().unwrap().len(), 2);
    run_ok(&cluster, &["release", "job", "--shared", "--token", &first]);
    // One holder left: still shared, still refusing a writer.
    assert_eq!(run(&cluster, &["acquire", "job"]).status.code(), Some(75));
    run_ok(
        &cluster,
        &["release", "job", "--shared", "--token", &second],
    );
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
    for server in &cluster.servers {
        assert_eq!(readers(server), Vec::<String>::new());
    }
    cluster.acquire_token("job", &[]);
}

fn run_ok(cluster: &Cluster, args: &[&str]) {
    let output = run(cluster, args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}",
        stderr_of(&output)
    );
}

#[test]
fn an_exclusive_holder_excludes_shared_holders() {
    let cluster = Cluster::start(3);
    let writer = cluster.acquire_token("job", &[]);
    let reader = run(&cluster, &["acquire", "job", "--shared"]);
    assert_eq!(reader.status.code(), Some(75), "{}", stderr_of(&reader));
    for server in &cluster.servers {
        assert_eq!(server.get(KEY).as_deref(), Some(writer.as_str()));
        assert_eq!(readers(server), Vec::<String>::new());
    }
    assert_eq!(status_json(&cluster)["mode"], "exclusive");
}

#[test]
fn a_token_used_in_the_other_mode_is_refused_and_nothing_is_touched() {
    let cluster = Cluster::start(3);
    let writer = cluster.acquire_token("job", &["--ttl", "60s"]);
    let before: Vec<i64> = cluster.servers.iter().map(|s| s.pttl(KEY)).collect();
    for verb in [
        vec!["release", "job", "--shared", "--token", &writer],
        vec![
            "extend", "job", "--shared", "--ttl", "5s", "--token", &writer,
        ],
    ] {
        let output = run(&cluster, &verb);
        assert_eq!(output.status.code(), Some(1), "{verb:?}");
        assert!(
            stderr_of(&output).contains("holds the lock exclusively"),
            "{}",
            stderr_of(&output)
        );
    }
    for (server, before) in cluster.servers.iter().zip(before) {
        assert_eq!(server.get(KEY).as_deref(), Some(writer.as_str()));
        // Not shortened to the 5 s the extend asked for.
        assert!(server.pttl(KEY) > before - 10_000, "{}", server.pttl(KEY));
    }
    run_ok(&cluster, &["release", "job", "--token", &writer]);

    let reader = cluster.acquire_token("job", &["--shared", "--ttl", "60s"]);
    for verb in [
        vec!["release", "job", "--token", &reader],
        vec!["extend", "job", "--ttl", "5s", "--token", &reader],
    ] {
        let output = run(&cluster, &verb);
        assert_eq!(output.status.code(), Some(1), "{verb:?}");
        assert!(
            stderr_of(&output).contains("holds the lock shared"),
            "{}",
            stderr_of(&output)
        );
    }
    for server in &cluster.servers {
        assert_eq!(readers(server), vec![reader.clone()]);
        assert!(server.pttl(KEY) > 50_000);
    }
}

#[test]
fn extend_renews_a_shared_holder_and_never_brings_one_back() {
    let cluster = Cluster::start(3);
    let reader = cluster.acquire_token("job", &["--shared", "--ttl", "2s"]);
    run_ok(
        &cluster,
        &[
            "extend", "job", "--shared", "--ttl", "60s", "--token", &reader,
        ],
    );
    for server in &cluster.servers {
        assert!(server.pttl(KEY) > 50_000, "{}", server.pttl(KEY));
    }
    let short = cluster.acquire_token("job", &["--shared", "--ttl", "500ms"]);
    // Once its TTL has passed it is no holder any more, and extend says so.
    std::thread::sleep(Duration::from_millis(600));
    let output = run(
        &cluster,
        &[
            "extend", "job", "--shared", "--ttl", "60s", "--token", &short,
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
}

/// `exec job --shared` running a long command, once the command runs.
fn shared_holder(cluster: &Cluster) -> (Running, tempfile::TempDir) {
    let ttl = format!("{}s", LONG_COMMAND_TTL.as_secs());
    let args = ["exec", "job", "--shared", "--ttl", &ttl];
    exec_until_ready(cluster, &args, r#"touch "$DIR/ready"; sleep 60"#)
}

#[test]
fn a_crashed_shared_holder_stops_counting_after_its_ttl() {
    let cluster = Cluster::start(3);
    let ttl = LONG_COMMAND_TTL;
    let (holder, _dir) = shared_holder(&cluster);
    // SIGKILL to redlock alone, as a crash would: its guardian stops the command.
    signal(holder.id() as i32, libc::SIGKILL);
    let killed = Instant::now();
    holder.finish(Duration::from_secs(10));
    // Its share is still there: the writer must wait for its TTL, not less.
    let writer = run(&cluster, &["acquire", "job"]);
    assert_eq!(writer.status.code(), Some(75), "{}", stderr_of(&writer));
    let output = run(&cluster, &["acquire", "job", "--wait", "20s"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let waited = killed.elapsed();
    // Up to one renewal (a third of the TTL) may have landed just before the kill.
    assert!(waited >= ttl / 2, "the writer got in after {waited:?}");
    assert!(waited < ttl * 5, "the writer waited {waited:?}");
}

#[test]
fn a_shared_holder_whose_share_is_forced_away_stops_its_command() {
    let cluster = Cluster::start(3);
    let (holder, _dir) = shared_holder(&cluster);
    let forced = run(&cluster, &["release", "job", "--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", stderr_of(&forced));
    for server in &cluster.servers {
        assert_eq!(server.get(KEY), None);
        assert_eq!(readers(server), Vec::<String>::new());
    }
    // Lost at the next renewal (a third of the TTL), then stopped.
    let output = holder.finish(Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(125), "{}", stderr_of(&output));
}

#[test]
fn the_command_of_a_shared_exec_sees_redlock_shared_and_may_reenter_shared_only() {
    let cluster = Cluster::start(3);
    let redlock = redlock_path();
    let script = format!(
        r#"echo "shared=$REDLOCK_SHARED"
        "{r}" exec job --shared -- true; echo "inner shared: $?"
        "{r}" exec job -- true 2>"$DIR/upgrade"; echo "inner exclusive: $?""#,
        r = redlock.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let output = cluster
        .redlock()
        .env("DIR", dir.path())
        .args(["exec", "job", "--shared", "--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let lines = stdout_of(&output);
    assert!(lines.contains("shared=1"), "{lines}");
    assert!(lines.contains("inner shared: 0"), "{lines}");
    assert!(lines.contains("inner exclusive: 64"), "{lines}");
    let upgrade = std::fs::read_to_string(dir.path().join("upgrade")).unwrap();
    assert!(
        upgrade.contains("held shared by the enclosing"),
        "{upgrade}"
    );

    // Under an exclusive exec, a shared one runs (the outer excludes everyone already).
    let script = format!(
        r#"echo "shared=$REDLOCK_SHARED"; "{r}" exec job --shared -- true; echo "inner: $?""#,
        r = redlock.display()
    );
    let output = run(&cluster, &["exec", "job", "--", "sh", "-c", &script]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let lines = stdout_of(&output);
    assert_eq!(lines.lines().collect::<Vec<_>>(), ["shared=", "inner: 0"]);
}

#[test]
fn shared_does_not_go_with_limit_or_a_hold_and_leaves_nothing() {
    let cluster = Cluster::start(1);
    for args in [
        vec!["acquire", "job", "--shared", "--limit", "2"],
        vec![
            "exec",
            "job",
            "--shared",
            "--hold-at-least",
            "1m",
            "--",
            "true",
        ],
    ] {
        let output = run(&cluster, &args);
        assert_eq!(output.status.code(), Some(64), "{args:?}");
        assert!(
            stderr_of(&output).contains("--shared"),
            "{}",
            stderr_of(&output)
        );
        assert!(!stderr_of(&output).contains('\n'));
    }
    assert_eq!(cluster.servers[0].get(KEY), None);
}

#[test]
fn a_shared_holder_sees_the_current_fence_and_takes_none() {
    let cluster = Cluster::start(3);
    let writer = run(&cluster, &["acquire", "job", "--fence", "--json"]);
    let fence = serde_json::from_str::<serde_json::Value>(&stdout_of(&writer)).unwrap()["fence"]
        .as_u64()
        .unwrap();
    let token = serde_json::from_str::<serde_json::Value>(&stdout_of(&writer)).unwrap()["token"]
        .as_str()
        .unwrap()
        .to_string();
    run_ok(&cluster, &["release", "job", "--token", &token]);
    let output = run(
        &cluster,
        &[
            "exec",
            "job",
            "--shared",
            "--fence",
            "--",
            "sh",
            "-c",
            "echo $REDLOCK_FENCE",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(stdout_of(&output), fence.to_string());
    // The next writer's fence is still the one after the last writer's.
    let next = run(&cluster, &["acquire", "job", "--fence"]);
    assert_eq!(
        stdout_of(&next).lines().nth(1),
        Some((fence + 1).to_string().as_str())
    );
}

#[test]
fn a_writer_release_wakes_every_shared_waiter_behind_it_together() {
    let cluster = Cluster::start(3);
    let writer = cluster.acquire_token("job", &["--ttl", "60s"]);
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let readers: Vec<_> = (0..3)
        .map(|i| {
            let inside = dir.path().join(format!("inside-{i}"));
            let section = format!(
                "touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
                inside.display(),
                go.display()
            );
            // A retry delay far beyond the test: only a wake-up lets a waiter in in time.
            let child = cluster.spawn(&[
                "exec",
                "job",
                "--shared",
                "--wait",
                "60s",
                "--retry-delay",
                "60s",
                "--",
                "sh",
                "-c",
                &section,
            ]);
            wait_for(
                "the waiter to listen everywhere",
                Duration::from_secs(10),
                || subscribers(&cluster) == 3 * (i + 1),
            );
            child
        })
        .collect();
    run_ok(&cluster, &["release", "job", "--token", &writer]);
    wait_for(
        "all three shared waiters inside at once",
        Duration::from_secs(15),
        || (0..3).all(|i| dir.path().join(format!("inside-{i}")).exists()),
    );
    std::fs::write(&go, "").unwrap();
    for reader in readers {
        let output = reader.finish(Duration::from_secs(20));
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
}

#[test]
fn a_writer_that_waits_is_not_starved_by_a_stream_of_readers() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let stop = dir.path().join("stop");
    // A new shared holder every 100 ms, each inside for 300 ms, logging when it got in.
    let stream = format!(
        r#"i=0; while [ ! -e '{stop}' ] && [ $i -lt 100 ]; do
          "$REDLOCK" exec job --shared --wait 30s -- sh -c 'echo "reader $(date +%s%N)" >> "{log}"; sleep 0.3' &
          sleep 0.1; i=$((i + 1))
        done; wait"#,
        stop = stop.display(),
        log = log.display()
    );
    let workers = spawn_workers(
        &cluster,
        (1, 1, Duration::from_secs(60)),
        &stream,
        dir.path(),
        &[],
    );
    wait_for("readers to overlap", Duration::from_secs(10), || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.lines().count() >= 3)
    });
    let arrived = Instant::now();
    let writer = run(
        &cluster,
        &[
            "exec",
            "job",
            "--wait",
            "20s",
            "--",
            "sh",
            "-c",
            &format!(r#"echo "writer $(date +%s%N)" >> "{}""#, log.display()),
        ],
    );
    let waited = arrived.elapsed();
    std::fs::write(&stop, "").unwrap();
    assert_eq!(writer.status.code(), Some(0), "{}", stderr_of(&writer));
    // The longest reader section is 300 ms; one hand-over and a loaded machine's slack more.
    assert!(
        waited < Duration::from_secs(5),
        "the writer waited {waited:?}"
    );
    for worker in workers {
        let output = worker.wait();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    // Readers kept arriving while the writer waited: some got in only after it.
    let text = std::fs::read_to_string(&log).unwrap();
    let after = text
        .lines()
        .skip_while(|line| !line.starts_with("writer"))
        .filter(|line| line.starts_with("reader"))
        .count();
    assert!(after > 0, "{text}");
}

/// `count` workers looping `sections` times over `exec NAME --wait`, `--shared` or not, each
/// section checking the others with markers: a writer's directory, each reader's file.
fn mixed_crowd(cluster: &Cluster, dir: &Path, readers: usize, writers: usize, sections: usize) {
    std::fs::create_dir(dir.join("readers")).unwrap();
    // A writer marks itself, then checks nobody else is inside; a reader marks itself, then
    // checks no writer is. Of two overlapping sections, the one that starts second sees the
    // other's mark, so any overlap is caught.
    let writer = r#"mkdir "$DIR/writer" || echo "writer beside a writer" >> "$DIR/errors"
        [ -z "$(ls "$DIR/readers")" ] || echo "writer beside readers" >> "$DIR/errors"
        sleep 0.02
        [ -z "$(ls "$DIR/readers")" ] || echo "writer beside readers" >> "$DIR/errors"
        echo w >> "$DIR/sections"; rmdir "$DIR/writer""#;
    let reader = r#"touch "$DIR/readers/$$"
        [ ! -d "$DIR/writer" ] || echo "reader beside a writer" >> "$DIR/errors"
        ls "$DIR/readers" | wc -l >> "$DIR/peaks"; sleep 0.05
        [ ! -d "$DIR/writer" ] || echo "reader beside a writer" >> "$DIR/errors"
        echo r >> "$DIR/sections"; rm "$DIR/readers/$$""#;
    let script = format!(
        r#"for i in $(seq {sections}); do "$REDLOCK" exec job $MODE --wait "$WAIT" -- sh -c "$SECTION" || exit 1; done"#
    );
    let wait = Duration::from_secs(60);
    let mut workers = spawn_workers(
        cluster,
        (readers, sections as u32, wait),
        &script,
        dir,
        &[("MODE", "--shared"), ("SECTION", reader)],
    );
    workers.extend(spawn_workers(
        cluster,
        (writers, sections as u32, wait),
        &script,
        dir,
        &[("MODE", ""), ("SECTION", writer)],
    ));
    for worker in workers {
        let output = worker.wait();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
}

fn assert_mixed_crowd(dir: &Path, readers: usize, writers: usize, sections: usize) {
    let errors = std::fs::read_to_string(dir.join("errors")).unwrap_or_default();
    assert!(errors.is_empty(), "{errors}");
    let ran = std::fs::read_to_string(dir.join("sections")).unwrap();
    assert_eq!(
        ran.lines().filter(|l| *l == "w").count(),
        writers * sections
    );
    assert_eq!(
        ran.lines().filter(|l| *l == "r").count(),
        readers * sections
    );
    let peak = std::fs::read_to_string(dir.join("peaks"))
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().parse::<usize>().ok())
        .max()
        .unwrap();
    assert!(peak > 1, "shared holders never overlapped");
}

#[test]
fn a_mixed_crowd_of_readers_and_writers_keeps_writers_alone() {
    let cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    mixed_crowd(&cluster, dir.path(), 12, 3, 3);
    assert_mixed_crowd(dir.path(), 12, 3, 3);
}

#[test]
fn a_mixed_crowd_keeps_writers_alone_while_two_of_five_servers_stop() {
    let cluster = std::sync::Arc::new(Cluster::start(5));
    let dir = tempfile::tempdir().unwrap();
    let pauser = {
        let cluster = cluster.clone();
        let sections = dir.path().join("sections");
        std::thread::spawn(move || {
            wait_for("a few sections", Duration::from_secs(60), || {
                std::fs::read_to_string(&sections).is_ok_and(|s| s.lines().count() >= 6)
            });
            cluster.servers[3].stop();
            cluster.servers[4].stop();
            std::thread::sleep(Duration::from_secs(2));
            cluster.servers[3].resume();
            cluster.servers[4].resume();
        })
    };
    mixed_crowd(&cluster, dir.path(), 12, 3, 3);
    pauser.join().unwrap();
    assert_mixed_crowd(dir.path(), 12, 3, 3);
}
