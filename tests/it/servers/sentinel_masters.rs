//! Which master a Sentinel group's run counts the group on when its sentinels disagree: one
//! names master M, another a master X of its own (two independent servers, each a master in its
//! own eyes). The group votes only on a master a majority of its listed sentinels name, whichever
//! answers first (server/sentinel/discovery.rs): sentinels split one against one give the group
//! no vote, so two runs can never count it on two masters; two against one give it M. A run
//! follows the majority, and its release still reaches a master it stopped counting on, so
//! that no copy of the lock is left there.

use crate::support::groups::Sentinel;
use crate::support::proxy::{Fault, Proxy};
use crate::support::*;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The lock's TTL: renewals every third of it.
const TTL: Duration = Duration::from_secs(9);

/// Each server's --timeout.
const TIMEOUT: Duration = Duration::from_secs(1);

/// How late the sentinels that must not answer first answer.
const LATE: Duration = Duration::from_millis(300);

/// Two masters of the same name, `for_m` sentinels naming M and one naming X, each behind a
/// proxy of its own.
struct Disagreeing {
    m: Redis,
    x: Redis,
    _sentinels: Vec<Sentinel>,
    /// The proxies in front of M's sentinels.
    to_m: Vec<Proxy>,
    /// The proxy in front of X's sentinel.
    to_x: Proxy,
}

impl Disagreeing {
    fn start(for_m: usize) -> Disagreeing {
        let (m, x) = (Redis::start(), Redis::start());
        let mut sentinels: Vec<Sentinel> = (0..for_m)
            .map(|_| Sentinel::start(Some(("g1", m.port)), &[]))
            .collect();
        sentinels.push(Sentinel::start(Some(("g1", x.port)), &[]));
        let mut proxies: Vec<Proxy> = sentinels.iter().map(|s| Proxy::start(s.port)).collect();
        let to_x = proxies.pop().unwrap();
        Disagreeing {
            m,
            x,
            _sentinels: sentinels,
            to_m: proxies,
            to_x,
        }
    }

    fn url(&self) -> String {
        let ports: Vec<String> = (self.to_m.iter().chain([&self.to_x]))
            .map(|proxy| format!("127.0.0.1:{}", proxy.port))
            .collect();
        format!("redis+sentinel://{}/g1", ports.join(","))
    }

    /// M's sentinels answer `LATE` (or at once), X's the other way round.
    fn x_first(&self, x_first: bool) {
        let (early, late) = (Fault::None, Fault::Delay(LATE));
        let (m, x) = if x_first {
            (late, early)
        } else {
            (early, late)
        };
        for proxy in &self.to_m {
            proxy.set(m);
        }
        self.to_x.set(x);
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
fn a_group_whose_sentinels_disagree_votes_no_so_two_runs_cannot_both_count_it() {
    // Servers: plain A and B, each behind a proxy, and the group. Taking whichever sentinel
    // answered first, a run while B was unreachable counted A and the group on M, and a run
    // while A was unreachable counted B and the group on X: two holders.
    let plain = Cluster::start(2);
    let proxies: Vec<Proxy> = plain.servers.iter().map(|s| Proxy::start(s.port)).collect();
    let group = Disagreeing::start(1);
    let mut servers: Vec<String> = proxies
        .iter()
        .map(|proxy| format!("redis://127.0.0.1:{}", proxy.port))
        .collect();
    servers.push(group.url());
    let acquire = |unreachable: usize, x_first: bool| {
        for (index, proxy) in proxies.iter().enumerate() {
            proxy.set(if index == unreachable {
                Fault::Reset
            } else {
                Fault::None
            });
        }
        group.x_first(x_first);
        redlock()
            .env("REDLOCK_SERVERS", servers.join(","))
            .env("REDLOCK_TIMEOUT", format!("{}s", TIMEOUT.as_secs()))
            .args(["acquire", "job", "--ttl", "60s"])
            .assert()
            .code(69)
    };
    for (unreachable, x_first) in [(1, false), (0, true)] {
        let refused = acquire(unreachable, x_first);
        let said = stderr_of(&refused);
        assert!(
            said.contains("the sentinels disagree on the master of 'g1'")
                && said.contains(&format!("names 127.0.0.1:{}", group.m.port))
                && said.contains(&format!("names 127.0.0.1:{}", group.x.port)),
            "{said}"
        );
        assert_eq!(group.m.get(KEY), None, "nothing counted on M");
        assert_eq!(group.x.get(KEY), None, "nothing counted on X");
    }
    assert_eq!(
        plain.values(KEY),
        [None, None],
        "the failed attempts cleaned up"
    );
}

#[test]
fn a_majority_of_the_sentinels_names_the_master_whichever_answers_first() {
    let group = Disagreeing::start(2);
    // X's sentinel answers first, every round: the group is counted on M all the same.
    group.x_first(true);
    let (child, _dir, done) = start_exec(&[group.url()]);
    assert!(group.m.get(KEY).is_some());
    wait_renewed_on(&group.m, Instant::now());
    assert_eq!(group.x.get(KEY), None, "nothing ever went to X");

    std::fs::write(&done, "").unwrap();
    let output = child.finish(SLACK);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(stdout_of(&output), "finished");
    assert_eq!(group.m.get(KEY), None, "released on M");
}

#[test]
fn a_run_whose_sentinels_stop_agreeing_stops_counting_the_group_and_releases_there_too() {
    let plain = Cluster::start(2);
    let group = Disagreeing::start(2);
    let mut servers: Vec<String> = plain.servers.iter().map(Redis::url).collect();
    servers.push(group.url());
    group.x_first(true);
    let (child, _dir, done) = start_exec(&servers);
    // The two plain servers are a quorum on their own, so the command may start before the
    // group's SET reaches M: it is on its way (the round settles with it), within the group's
    // first round, two --timeouts.
    wait_for("the lock on M", TIMEOUT * 2 + SLACK, || {
        group.m.get(KEY).is_some()
    });
    // One of M's sentinels is gone: one names M, one X, of three. No master has a majority, so
    // the group votes no (the plain servers keep the lock) and the run goes to neither.
    group.to_m[0].set(Fault::Reset);
    wait_renewed_on(&plain.servers[0], Instant::now());
    assert_eq!(group.x.get(KEY), None);

    std::fs::write(&done, "").unwrap();
    let output = child.finish(SLACK);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(plain.values(KEY), [None, None]);
    assert_eq!(group.m.get(KEY), None, "the release reached M too");
}
