//! k. What a Redis Cluster costs as a server: one-shot `acquire`, `release` and `exec -- true`
//! on a cluster alone (3 masters, 3 replicas, seeded with one node) against one plain server, and
//! on the cluster beside two plain servers against three plain servers, all interleaved run by
//! run so that the machine's drift affects them alike. A cluster's first request in a process
//! also learns the slot map (`CLUSTER SLOTS`) and connects to the key's master.

use super::harness::Bench;
use super::redis_server::Redis;
use super::report::Report;
use std::time::Instant;

// The tests' cluster launcher, which needs `redis_server` and `wait_for` beside it.
#[allow(dead_code)]
#[path = "../tests/it/support/redis_cluster.rs"]
pub(super) mod redis_cluster;
use super::harness::wait_for;
use super::redis_server;

/// The operations compared, by their arguments (the token appended for `release`).
const STEPS: [&str; 3] = ["acquire", "release", "exec"];

impl Bench {
    pub(super) fn part_k(&mut self, report: &mut Report, servers: &[Redis], runs: usize) {
        let cluster = redis_cluster::RedisCluster::start();
        let seed = cluster.masters()[0].port;
        let url = |s: &Redis| format!("redis://127.0.0.1:{}", s.port);
        let with_cluster = format!(
            "{},{},{}",
            cluster.url_via(seed),
            url(&servers[0]),
            url(&servers[1])
        );
        let plain = format!(
            "{},{},{}",
            url(&servers[2]),
            url(&servers[0]),
            url(&servers[1])
        );
        // Baseline first, then the cluster's: one server, then three.
        let configs = [url(&servers[2]), cluster.url_via(seed), plain, with_cluster];
        // times[config][step]
        let mut times = vec![vec![Vec::new(); STEPS.len()]; configs.len()];
        for i in 0..runs {
            for turn in 0..configs.len() {
                let config = (i + turn) % configs.len();
                let urls = &configs[config];
                let run = |args: &[&str]| {
                    let started = Instant::now();
                    let out = self
                        .redlock()
                        .env("REDLOCK_SERVERS", urls)
                        .args(args)
                        .output();
                    (started.elapsed(), out.ok().filter(|o| o.status.success()))
                };
                let (took, acquired) = run(&["acquire", "k"]);
                times[config][0].push(took);
                let Some(acquired) = acquired else {
                    self.broken.push(format!("k: acquire {i} on {urls} failed"));
                    return;
                };
                let token = String::from_utf8_lossy(&acquired.stdout).trim().to_string();
                let (took, released) = run(&["release", "k", "--token", &token]);
                times[config][1].push(took);
                let (took, executed) = run(&["exec", "k", "--", "true"]);
                times[config][2].push(took);
                if released.is_none() || executed.is_none() {
                    self.broken
                        .push(format!("k: release or exec {i} on {urls} failed"));
                    return;
                }
            }
        }
        report.section("k. a Redis Cluster as a server (median [p10–p90])");
        for (step, name) in STEPS.iter().enumerate() {
            report.row(
                &format!("{name}, 1 plain server"),
                &times[0][step],
                None,
                "",
            );
            report.row(
                &format!("{name}, cluster  vs 1 plain"),
                &times[1][step],
                Some(&times[0][step]),
                "",
            );
        }
        for (step, name) in STEPS.iter().enumerate() {
            report.row(
                &format!("{name}, 3 plain servers"),
                &times[2][step],
                None,
                "",
            );
            report.row(
                &format!("{name}, cluster + 2  vs 3 plain"),
                &times[3][step],
                Some(&times[2][step]),
                "",
            );
        }
    }
}
