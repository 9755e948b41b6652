//! n. Servers at a distance: every server `ONE_WAY` away each way, and each operation's wall time
//! in round trips beside its floor (the round trips it cannot do without), per server kind: 3
//! plain servers, a TLS server (with a password), a Sentinel group (3 sentinels, each as far),
//! and a Redis Cluster of 3 masters seeded with the one that serves the lock. Then a Sentinel
//! group 25 ms away each way at the default `--timeout`, which must work.
//!
//! The distance is a delay proxy on loopback in front of each server (the tests' fault proxy,
//! `Fault::Distance`): every chunk waits `ONE_WAY` each way, and a connection's first bytes a
//! round trip more, for the TCP handshake the proxy's own end skips. Network namespaces with
//! netem would delay every packet instead, but this machine's kernel has no netem qdisc. What a
//! proxy cannot show: a TCP acknowledgement comes from the proxy at once, not from across the
//! network, so a client held back by Nagle's algorithm waits less here than it would there
//! (the counting tests, tests/it/rounds/round_trips.rs, make the proxy delay its acknowledgements).
//! A process's own start (a millisecond or two) is in every figure.

use super::harness::{Bench, TIMEOUT};
use super::redis_server::Redis;
// What the launchers below find beside them.
use super::report::{percentile, Report};
#[allow(unused_imports)]
use super::{harness::wait_for, redis_server};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

// The tests' launchers, which need `redis_server` and `wait_for` beside them.
#[allow(dead_code)]
#[path = "../tests/it/support/groups.rs"]
mod groups;
#[allow(dead_code)]
#[path = "../tests/it/support/tls.rs"]
mod tls;

use super::cluster::redis_cluster;
use super::proxy::{Fault, Proxy};

/// How far every server is, each way: a round trip of 20 ms.
const ONE_WAY: Duration = Duration::from_millis(10);

/// The Sentinel group that must work at the default `--timeout`: 25 ms each way.
const FAR: Duration = Duration::from_millis(25);

/// The operations, in the order each run makes them, and what each costs at least on every
/// kind of server, in round trips (docs/performance.md).
const OPS: [&str; 5] = ["acquire", "status", "extend", "release", "exec"];

/// One kind of server behind delay proxies.
struct Kind {
    name: &'static str,
    /// The servers and TLS options, and the environment (REDLOCK_SERVERS and the like).
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
    name_of_lock: String,
    /// The floor of each of `OPS`, in round trips.
    floors: [usize; 5],
}

impl Bench {
    pub(super) fn part_n(&mut self, report: &mut Report, runs: usize) {
        let mut proxies: Vec<Proxy> = Vec::new();
        let mut behind = |port: u16| {
            let proxy = Proxy::start(port);
            let port = proxy.port;
            proxies.push(proxy);
            port
        };
        let plain: Vec<Redis> = (0..3).map(|_| Redis::start()).collect();
        let plain_urls: Vec<String> = plain
            .iter()
            .map(|s| format!("redis://127.0.0.1:{}", behind(s.port)))
            .collect();
        let certs = tls::Certs::generate();
        let secure = tls::TlsRedis::start_with(&certs, false, &["--requirepass", "pw"]);
        let secure_url = format!("rediss://:pw@127.0.0.1:{}", behind(secure.port));
        let group = groups::Group::start_many_monitoring(1, Default::default(), |master| {
            behind(master.port)
        })
        .remove(0);
        let sentinels: Vec<String> = group
            .sentinels
            .iter()
            .map(|s| format!("127.0.0.1:{}", behind(s.port)))
            .collect();
        let group_url = format!("redis+sentinel://{}/{}", sentinels.join(","), group.name);
        let mut announced = Vec::new();
        let cluster = redis_cluster::RedisCluster::start_announcing(|node| {
            let port = behind(node.port);
            announced.push(port);
            port
        })
        .expect("a cluster that names the announced ports (Redis 7.0 or later)");
        let seed = announced[0];
        let on_seed = (0..)
            .map(|i| format!("n-{i}"))
            .find(|name| cluster.port_serving(&format!("redlock:{name}")) == seed)
            .expect("a name on every master");
        let kinds = [
            kind("3 plain", &plain_urls.join(","), "n", [2, 2, 2, 2, 3]),
            Kind {
                args: vec!["--tls-ca".into(), certs.path("ca.crt")],
                ..kind("TLS", &secure_url, "n", [3, 3, 3, 3, 4])
            },
            kind("Sentinel", &group_url, "n", [4, 4, 4, 4, 5]),
            kind(
                "Cluster",
                &format!("redis+cluster://127.0.0.1:{seed}"),
                &on_seed,
                [3, 3, 3, 3, 4],
            ),
        ];
        for proxy in &proxies {
            proxy.set(Fault::Distance(ONE_WAY));
        }
        let rtt = ONE_WAY * 2;
        report.section(&format!(
            "n. servers {} ms away each way (RTT {} ms, --timeout {TIMEOUT}): wall time in round trips, median [p10–p90]",
            ONE_WAY.as_millis(),
            rtt.as_millis()
        ));
        for kind in &kinds {
            let times = self.every_op(kind, runs);
            for (op, (times, floor)) in OPS.iter().zip(times.iter().zip(kind.floors)) {
                let trips = |p| percentile(times, p).as_secs_f64() / rtt.as_secs_f64();
                report.note(&format!(
                    "{:<9} {op:<8} {:>5.2} RTT [{:.2}–{:.2}]  floor {floor}",
                    kind.name,
                    trips(0.5),
                    trips(0.1),
                    trips(0.9)
                ));
            }
        }
        // The far group: its own sentinels' proxies and its master's go 25 ms each way.
        for proxy in &proxies {
            proxy.set(Fault::Distance(FAR));
        }
        let far = kind("Sentinel", &group_url, "far", [4, 4, 4, 4, 5]);
        let mut worked = 0;
        let mut took = Vec::new();
        for _ in 0..runs {
            let started = Instant::now();
            let ran = self.run(&far, &["exec", "far", "--", "true"], true);
            took.push(started.elapsed());
            worked += usize::from(ran.is_some_and(|out| out.status.success()));
        }
        report.note(&format!(
            "a Sentinel group {} ms away each way, default --timeout: exec -- true worked {worked} of {runs}, {:.2} RTT median (floor 5)",
            FAR.as_millis(),
            percentile(&took, 0.5).as_secs_f64() / (FAR * 2).as_secs_f64()
        ));
        if worked < runs {
            self.broken.push(format!(
                "n: a Sentinel group {} ms away failed at the default --timeout",
                FAR.as_millis()
            ));
        }
        drop(proxies);
    }

    /// Each of `OPS` on `kind`, `runs` times one after the other: their wall times.
    fn every_op(&mut self, kind: &Kind, runs: usize) -> Vec<Vec<Duration>> {
        let mut times = vec![Vec::new(); OPS.len()];
        let lock = kind.name_of_lock.as_str();
        for i in 0..runs {
            let mut timed = |index: usize, args: &[&str], this: &mut Bench| {
                let started = Instant::now();
                let out = this.run(kind, args, false);
                times[index].push(started.elapsed());
                out.filter(|out| out.status.success()).or_else(|| {
                    this.broken
                        .push(format!("n: {} {args:?} {i} failed", kind.name));
                    None
                })
            };
            let Some(acquired) = timed(0, &["acquire", lock], self) else {
                return times;
            };
            let token = String::from_utf8_lossy(&acquired.stdout).trim().to_string();
            timed(1, &["status", lock], self);
            timed(2, &["extend", lock, "--token", &token], self);
            timed(3, &["release", lock, "--token", &token], self);
            timed(4, &["exec", lock, "--", "true"], self);
        }
        times
    }

    /// `redlock ARGS` on `kind`, at the benchmark's `--timeout` or (`default_timeout`) at
    /// redlock's own default.
    fn run(&self, kind: &Kind, args: &[&str], default_timeout: bool) -> Option<Output> {
        let mut command: Command = self.redlock();
        if default_timeout {
            command.env_remove("REDLOCK_TIMEOUT");
        }
        command.envs(kind.env.iter().map(|(name, value)| (name, value)));
        command.args(&kind.args).args(args).output().ok()
    }
}

/// A kind of server named by `servers`, its lock `lock`, with these floors.
fn kind(name: &'static str, servers: &str, lock: &str, floors: [usize; 5]) -> Kind {
    Kind {
        name,
        args: Vec::new(),
        env: vec![("REDLOCK_SERVERS", servers.to_string())],
        name_of_lock: lock.to_string(),
        floors,
    }
}
