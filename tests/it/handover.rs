//! The hand-over from a release to the queued waiter it wakes: acted on at once whatever attempt
//! the waiter is at, on the connections it already listens on, also with a server stopped.

use crate::support::waiters::{spawn_waiter, WAITER_RETRY_DELAY};
use crate::support::*;
use std::time::Duration;

/// One test connection per server, opened once, so that watching the servers opens no
/// connection the counts below would see.
struct Watch {
    connections: Vec<redis::Connection>,
}

impl Watch {
    fn new(cluster: &Cluster) -> Watch {
        Watch {
            connections: cluster.servers.iter().map(Redis::connection).collect(),
        }
    }

    /// `INFO section` of server `index`: its `field`.
    fn info(&mut self, index: usize, section: &str, field: &str) -> u64 {
        let info: String = redis::cmd("INFO")
            .arg(section)
            .query(&mut self.connections[index])
            .unwrap();
        info.lines()
            .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
            .map_or(0, |value| value.trim().parse().unwrap())
    }

    /// Scripts server `index` ran (EVAL and EVALSHA): one for each attempt of the waiter.
    fn scripts(&mut self, index: usize) -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut self.connections[index])
            .unwrap();
        info.lines()
            .filter(|line| {
                line.starts_with("cmdstat_eval:") || line.starts_with("cmdstat_evalsha:")
            })
            .filter_map(|line| {
                line.split("calls=")
                    .nth(1)?
                    .split(',')
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .sum()
    }

    /// Connections server `index` accepted since it started.
    fn accepted(&mut self, index: usize) -> u64 {
        self.info(index, "stats", "total_connections_received")
    }

    /// Runs `command` on each of the servers `on`.
    fn each(&mut self, on: &[usize], command: &redis::Cmd) {
        for &index in on {
            let _: redis::Value = command.query(&mut self.connections[index]).unwrap();
        }
    }
}

/// A holder's key, `holder`, that expires `ttl` from now.
fn holder_key(ttl: Duration) -> redis::Cmd {
    let mut set = redis::cmd("SET");
    set.arg(KEY)
        .arg("holder")
        .arg("PX")
        .arg(ttl.as_millis() as u64);
    set
}

/// A waiter (`spawn_waiter`: pauses of 10–30 s of its own) that has asked at least twice on
/// every server of `live` before it settles into such a pause: the holder's key is kept short
/// (a head's pause ends when the holder's TTL it saw runs out), then long, and the waiter is
/// let to see the long one. Every attempt after the first goes out on a connection that
/// listened during the pause before it.
fn waiter_past_its_first_attempts(cluster: &Cluster, watch: &mut Watch, live: &[usize]) -> Running {
    let short = Duration::from_millis(500);
    watch.each(live, &holder_key(short));
    let start: Vec<u64> = live.iter().map(|&i| watch.scripts(i)).collect();
    let waiter = spawn_waiter(cluster, &[]);
    let mut keep_short = redis::cmd("PEXPIRE");
    keep_short.arg(KEY).arg(short.as_millis() as u64);
    wait_for(
        "the waiter's second attempt",
        Duration::from_secs(20),
        || {
            watch.each(live, &keep_short);
            live.iter()
                .zip(&start)
                .all(|(&i, &s)| watch.scripts(i) >= s + 2)
        },
    );
    // Every attempt a server counts from here on saw the long TTL on every server, since every
    // SET came before every count read here.
    watch.each(live, &holder_key(Duration::from_secs(60)));
    let seen: Vec<u64> = live.iter().map(|&i| watch.scripts(i)).collect();
    wait_for(
        "an attempt that saw the long TTL",
        Duration::from_secs(20),
        || live.iter().zip(&seen).all(|(&i, &s)| watch.scripts(i) > s),
    );
    waiter
}

/// Releases `holder` and asserts the waiter took the lock well within the shortest pause of
/// its own, without a connection more than the release's.
fn assert_woken_at_once(cluster: &Cluster, watch: &mut Watch, live: &[usize], mut waiter: Running) {
    let accepted: Vec<u64> = live.iter().map(|&i| watch.accepted(i)).collect();
    cluster
        .cmd(["release", "job", "--token", "holder"])
        .assert()
        .success();
    // Its own pause is 10–30 s: only the wake-up explains a win within a quarter of that.
    wait_for(
        "the woken waiter to take the lock",
        WAITER_RETRY_DELAY / 4,
        || waiter.try_wait().is_some(),
    );
    let output = waiter.wait();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    for (&index, before) in live.iter().zip(accepted) {
        assert_eq!(
            watch.accepted(index) - before,
            1,
            "server {index}: the release's connection and no other (the waiter asked on those \
             it listened on)"
        );
    }
    let token = stdout_of(&output);
    let holding = live
        .iter()
        .filter(|&&i| cluster.servers[i].get(KEY).as_deref() == Some(token.as_str()))
        .count();
    assert!(
        holding > cluster.servers.len() / 2,
        "{holding} servers hold it"
    );
}

#[test]
fn a_waiter_past_its_first_attempts_is_woken_at_once_on_the_connections_it_listens_on() {
    let cluster = Cluster::start(3);
    let mut watch = Watch::new(&cluster);
    let live = [0, 1, 2];
    let waiter = waiter_past_its_first_attempts(&cluster, &mut watch, &live);
    assert_woken_at_once(&cluster, &mut watch, &live, waiter);
}

#[test]
fn the_hand_over_works_with_one_of_five_servers_stopped() {
    let cluster = Cluster::start(5);
    let mut watch = Watch::new(&cluster);
    watch.each(&[4], &holder_key(Duration::from_secs(60)));
    cluster.servers[4].stop();
    let live = [0, 1, 2, 3];
    let waiter = waiter_past_its_first_attempts(&cluster, &mut watch, &live);
    assert_woken_at_once(&cluster, &mut watch, &live, waiter);
    cluster.servers[4].resume();
}
