//! Shared locks (`--shared`): many shared holders or one exclusive holder, never both, with the
//! state on every server; mode mismatches refused without touching anything; a crashed holder
//! gone after its TTL and a forced one stopped; fences and re-entry rules.

use crate::support::*;
use std::time::{Duration, Instant};

const READERS: &str = "redlock:job\u{1f}readers";
const MARK: &str = "redlock:shared";

/// Shared holders recorded on `server`, with their scores.
fn readers(server: &Redis) -> Vec<String> {
    redis::cmd("ZRANGE")
        .arg(READERS)
        .arg(0)
        .arg(-1)
        .query(&mut server.connection())
        .unwrap()
}

/// The `status job --json` of the cluster.
fn status_json(cluster: &Cluster) -> serde_json::Value {
    document(cluster.call(["status", "job", "--json"]).get_output())
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
    cluster
        .call(["acquire", "job"])
        .exits(75)
        .stderr_has("shared holders");
    let status = status_json(&cluster);
    assert_eq!(status["mode"], "shared");
    assert_eq!(status["held"], true);
    assert_eq!(status["readers"].as_array().unwrap().len(), 2);
    cluster
        .call(["release", "job", "--shared", "--token", &first])
        .succeeds();
    // One holder left: still shared, still refusing a writer.
    cluster.call(["acquire", "job"]).exits(75);
    cluster
        .call(["release", "job", "--shared", "--token", &second])
        .succeeds();
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
    for server in &cluster.servers {
        assert_eq!(readers(server), Vec::<String>::new());
    }
    cluster.acquire_token("job", &[]);
}

#[test]
fn an_exclusive_holder_excludes_shared_holders() {
    let cluster = Cluster::start(3);
    let writer = cluster.acquire_token("job", &[]);
    cluster.call(["acquire", "job", "--shared"]).exits(75);
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
        cluster
            .cmd(verb)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("holds the lock exclusively"));
    }
    for (server, before) in cluster.servers.iter().zip(before) {
        assert_eq!(server.get(KEY).as_deref(), Some(writer.as_str()));
        // Not shortened to the 5 s the extend asked for.
        assert!(server.pttl(KEY) > before - 10_000, "{}", server.pttl(KEY));
    }
    cluster
        .call(["release", "job", "--token", &writer])
        .succeeds();

    let reader = cluster.acquire_token("job", &["--shared", "--ttl", "60s"]);
    for verb in [
        vec!["release", "job", "--token", &reader],
        vec!["extend", "job", "--ttl", "5s", "--token", &reader],
    ] {
        cluster
            .cmd(verb)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("holds the lock shared"));
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
    cluster
        .call([
            "extend", "job", "--shared", "--ttl", "60s", "--token", &reader,
        ])
        .succeeds();
    for server in &cluster.servers {
        assert!(server.pttl(KEY) > 50_000, "{}", server.pttl(KEY));
    }
    let short = cluster.acquire_token("job", &["--shared", "--ttl", "500ms"]);
    // Once its TTL has passed it is no holder any more, and extend says so.
    std::thread::sleep(Duration::from_millis(600));
    cluster
        .call([
            "extend", "job", "--shared", "--ttl", "60s", "--token", &short,
        ])
        .exits(1);
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
    cluster.call(["acquire", "job"]).exits(75);
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
    cluster.call(["release", "job", "--force"]).succeeds();
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
        // Refused before anything runs, the exec too: one-shot runs.
        cluster
            .call(args)
            .exits(64)
            .stderr_has("--shared")
            .stderr_lines(1);
    }
    assert_eq!(cluster.servers[0].get(KEY), None);
}

#[test]
fn a_shared_holder_sees_the_current_fence_and_takes_none() {
    let cluster = Cluster::start(3);
    let writer = cluster.call(["acquire", "job", "--fence", "--json"]);
    let writer = document(writer.get_output());
    let fence = writer["fence"].as_u64().unwrap();
    let token = writer["token"].as_str().unwrap().to_string();
    cluster
        .call(["release", "job", "--token", &token])
        .succeeds();
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
    let next = cluster.call(["acquire", "job", "--fence"]);
    assert_eq!(
        next.stdout_text().lines().nth(1),
        Some((fence + 1).to_string().as_str())
    );
}
