//! Other Redlock clients on the same key: while redlock's shared holders hold a lock, pottery's
//! `Redlock` and redis-py's `Lock` cannot take it; while node-redlock holds it, a shared acquire
//! is busy. They only know `SET NX`, so the shared mark must refuse them as a token does.
//!
//! The clients are real: pottery and redis-py from PyPI, node-redlock (v4) and ioredis from npm.
//! `.ci/run` installs them (pip, and npm into `target/interop`); on a machine without them these
//! tests say so and pass, except under CI (`CI` set), where a missing client is a failure.

use crate::support::*;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// Where `.ci/run` puts node-redlock and ioredis.
fn node_modules() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/interop/node_modules")
}

/// Whether `check` (a command that fails without the client) works; under CI it must.
fn available(what: &str, mut check: Command) -> bool {
    let found = check
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{what} is missing; .ci/run installs it"
        );
        eprintln!("skipped: {what} is not installed (.ci/run installs it)");
    }
    found
}

fn python_clients() -> bool {
    let mut check = Command::new("python3");
    check.args(["-c", "import pottery, redis"]);
    available("pottery and redis-py (pip install pottery redis)", check)
}

fn node_clients() -> bool {
    let mut check = Command::new("node");
    check
        .env("NODE_PATH", node_modules())
        .args(["-e", "require('redlock'); require('ioredis')"]);
    available(
        "node-redlock and ioredis (npm install redlock@4 ioredis)",
        check,
    )
}

/// pottery's Redlock over every server, and redis-py's Lock on the first, each trying once.
const PYTHON: &str = r#"
import sys, redis
from pottery import Redlock
urls = sys.argv[1].split(',')
masters = {redis.Redis.from_url(url) for url in urls}
print('pottery', Redlock(key='job', masters=masters, auto_release_time=5).acquire(blocking=False))
print('redis-py', redis.Redis.from_url(urls[0]).lock('redlock:job', timeout=5).acquire(blocking=False))
"#;

#[test]
fn pottery_and_redis_py_are_refused_while_shared_holders_hold_the_lock() {
    if !python_clients() {
        return;
    }
    let cluster = Cluster::start(3);
    let _reader = cluster.acquire_token("job", &["--shared", "--ttl", "60s"]);
    let output = Command::new("python3")
        .args(["-c", PYTHON, &cluster.urls()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert_eq!(stdout_of(&output), "pottery False\nredis-py False");
    // And redlock's own writers, of course.
    cluster.call(["acquire", "job"]).exits(75);
    // Once the lock is free, the same script takes it: the refusal above was the mark's.
    let free = Cluster::start(3);
    let output = Command::new("python3")
        .args(["-c", PYTHON, &free.urls()])
        .output()
        .unwrap();
    assert!(
        stdout_of(&output).starts_with("pottery True"),
        "{}",
        stdout_of(&output)
    );
}

/// node-redlock takes `redlock:job` on every server, says so, and holds it until the file
/// named second appears.
const NODE: &str = r#"
const fs = require('fs');
const Redis = require('ioredis');
const Redlock = require('redlock');
const clients = process.argv[1].split(',').map((url) => new Redis(url));
const redlock = new Redlock(clients, { retryCount: 0 });
redlock.lock('redlock:job', 60000).then((lock) => {
  console.log('held');
  const done = setInterval(() => {
    if (!fs.existsSync(process.argv[2])) return;
    clearInterval(done);
    lock.unlock().finally(() => process.exit(0));
  }, 20);
}, (err) => { console.log('refused', err.message); process.exit(1); });
"#;

#[test]
fn a_shared_acquire_is_busy_while_node_redlock_holds_the_lock() {
    if !node_clients() {
        return;
    }
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("release");
    let mut node = Command::new("node");
    node.env("NODE_PATH", node_modules()).args([
        "-e",
        NODE,
        &cluster.urls(),
        &release.display().to_string(),
    ]);
    let node = Cmd::new(node).deadline(Duration::from_secs(60)).spawn();
    wait_for(
        "node-redlock to hold the lock",
        Duration::from_secs(20),
        || cluster.values(KEY).iter().all(Option::is_some),
    );
    cluster.call(["acquire", "job", "--shared"]).exits(75);
    assert!(cluster
        .values(KEY)
        .iter()
        .all(|v| v.as_deref() != Some("redlock:shared")));
    std::fs::write(&release, "").unwrap();
    let output = node.finish(Duration::from_secs(20));
    assert_eq!(stdout_of(&output), "held", "{}", stderr_of(&output));
    // Released by node-redlock: now the shared acquire gets it.
    cluster.acquire_token("job", &["--shared"]);
}
