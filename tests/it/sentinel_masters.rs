//! Which master a Sentinel group's run uses when its sentinels disagree: one sentinel names
//! master M, another a master X of its own (two independent servers, each a master in its own
//! eyes). The run keeps the master it started with while a sentinel still names it, whichever
//! answers first; when none does any more, it moves, and its release still reaches the master
//! it left, so that no copy of the lock is left there.

use crate::support::groups::Sentinel;
use crate::support::proxy::{Fault, Proxy};
use crate::support::*;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The lock's TTL: renewals every third of it.
const TTL: Duration = Duration::from_secs(9);

/// Each server's --timeout.
const TIMEOUT: Duration = Duration::from_secs(1);

/// How late the sentinel that must not answer first answers.
const LATE: Duration = Duration::from_millis(300);

/// Two masters of the same name, each named by a sentinel of its own, behind a proxy each.
struct Disagreeing {
    m: Redis,
    x: Redis,
    /// The sentinels that name M and X, and the proxies in front of them.
    _sentinels: [Sentinel; 2],
    to_m: Proxy,
    to_x: Proxy,
}

impl Disagreeing {
    fn start() -> Disagreeing {
        let (m, x) = (Redis::start(), Redis::start());
        let sentinels = [
            Sentinel::start(Some(("g1", m.port)), &[]),
            Sentinel::start(Some(("g1", x.port)), &[]),
        ];
        let to_m = Proxy::start(sentinels[0].port);
        let to_x = Proxy::start(sentinels[1].port);
        Disagreeing {
            m,
            x,
            _sentinels: sentinels,
            to_m,
            to_x,
        }
    }

    fn url(&self) -> String {
        format!(
            "redis+sentinel://127.0.0.1:{},127.0.0.1:{}/g1",
            self.to_m.port, self.to_x.port
        )
    }
}

/// `redlock exec job` over `servers` with a command that runs until the returned file exists;
/// returns once the command has started.
fn start_exec(servers: &[String]) -> (Running, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (started, done) = (dir.path().join("started"), dir.path().join("done"));
    let ttl = format!("{}s", TTL.as_secs());
    let child = redlock()
        .env("REDLOCK_SERVERS", servers.join(","))
        .env("REDLOCK_TIMEOUT", format!("{}s", TIMEOUT.as_secs()))
        .args(["exec", "job", "--ttl", &ttl, "--"])
        .args(["sh", "-c", &until_file(&started, &done)])
        .spawn_until("the command to start", || started.exists());
    (child, dir, done)
}

/// Waits until `server` holds the lock with a TTL only a renewal sent after `since` can have
/// given it: more than a third of the TTL since, and more than five sixths of it left.
fn wait_renewed_on(server: &Redis, since: Instant) {
    wait_for("a renewal", TTL * 2, || {
        since.elapsed() > TTL / 3 + LATE
            && server.get(KEY).is_some()
            && server.pttl(KEY) > (TTL * 5 / 6).as_millis() as i64
    });
}

#[test]
fn a_run_keeps_the_master_it_started_with_while_a_sentinel_still_names_it() {
    let group = Disagreeing::start();
    // M's sentinel answers first: the run starts on M.
    group.to_x.set(Fault::Delay(LATE));
    let (child, _dir, done) = start_exec(&[group.url()]);
    assert!(group.m.get(KEY).is_some());
    // Now X's answers first, every round: the run stays on M all the same.
    group.to_x.set(Fault::None);
    group.to_m.set(Fault::Delay(LATE));
    let swapped = Instant::now();
    wait_renewed_on(&group.m, swapped);
    assert_eq!(group.x.get(KEY), None, "nothing ever went to X");

    std::fs::write(&done, "").unwrap();
    let output = child.finish(SLACK);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(stdout_of(&output), "finished");
    assert_eq!(group.m.get(KEY), None, "released on M");
}

#[test]
fn a_run_that_moved_to_another_master_releases_on_the_one_it_left_too() {
    let plain = Cluster::start(2);
    let group = Disagreeing::start();
    let mut servers: Vec<String> = plain.servers.iter().map(Redis::url).collect();
    servers.push(group.url());
    group.to_x.set(Fault::Delay(LATE));
    let (child, _dir, done) = start_exec(&servers);
    // The two plain servers are a quorum on their own, so the command may start before the
    // group's SET reaches M: it is on its way (the round settles with it), within the group's
    // first round, two --timeouts.
    wait_for("the lock on M", TIMEOUT * 2 + SLACK, || {
        group.m.get(KEY).is_some()
    });
    // M's sentinel is gone: X's is the only one left, and names X. The next renewal finds the
    // master moved, goes to X (which has no copy: that vote is a no; the plain servers keep
    // the lock), and M is a master the run used before.
    group.to_m.set(Fault::Reset);
    group.to_x.set(Fault::None);
    wait_renewed_on(&plain.servers[0], Instant::now());
    assert_eq!(group.x.get(KEY), None);

    std::fs::write(&done, "").unwrap();
    let output = child.finish(SLACK);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(plain.values(KEY), [None, None]);
    assert_eq!(group.m.get(KEY), None, "the release reached M too");
}
