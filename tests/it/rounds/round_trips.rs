//! What each operation costs in round trips on each server kind, counted by the proxies in
//! front of the servers (support/proxy.rs: connections opened, request flights that waited for
//! a reply), not timed: a regression fails here on a loaded machine as on an idle one. The one
//! time bound here is a whole `--timeout`, which an `acquire --fence` must not wait out.

use crate::support::groups::{Group, Passwords};
use crate::support::proxy::{Counted, Fault, Proxy};
use crate::support::redis_cluster::RedisCluster;
use crate::support::*;
use std::time::Duration;

/// How long each proxy holds every reply (what makes its counts certain: support/proxy.rs).
const HOLD: Duration = Duration::from_millis(25);

/// Counting, not timing: time for every round trip to wait `HOLD` on a loaded machine.
const TIMEOUT: &str = "2s";

/// One server kind behind counting proxies.
struct Path {
    /// How redlock names the servers (and trusts them).
    args: Vec<String>,
    /// Its environment (the sentinels' password).
    envs: Vec<(&'static str, &'static str)>,
    /// Every proxy a run may go through, named for the assertions.
    proxies: Vec<(&'static str, Proxy)>,
    /// Forgets every script the servers cached, as a restart does.
    flush: Box<dyn Fn()>,
}

impl Path {
    fn proxy(&mut self, name: &'static str, port: u16) -> u16 {
        let proxy = Proxy::start(port);
        proxy.hold_replies(HOLD);
        let port = proxy.port;
        self.proxies.push((name, proxy));
        port
    }

    /// Runs `redlock ARGS`, which must succeed, on servers that just forgot their scripts:
    /// what it printed, and what it cost on each proxy.
    fn cost(&self, op: &[&str]) -> (String, Vec<(&'static str, Counted)>) {
        (self.flush)();
        for (_, proxy) in &self.proxies {
            proxy.recount();
        }
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let ran = redlock_cmd([&args[..], &["--timeout", TIMEOUT], op].concat())
            .envs(self.envs.iter().copied())
            .assert()
            .success();
        let counts = self
            .proxies
            .iter()
            .map(|(name, proxy)| (*name, proxy.counted()))
            .collect();
        (stdout_of(ran.get_output()), counts)
    }
}

fn flush(con: &mut redis::Connection) {
    let _: () = redis::cmd("SCRIPT").arg("FLUSH").query(con).unwrap();
}

/// What one operation may cost on each proxy: (proxy, connections, flights on each); a proxy
/// not named costs nothing.
type Floor<'a> = &'a [(&'static str, usize, &'a [usize])];

/// Runs every operation once on `name`, one after the other, and asserts what each costs:
/// acquire, status (of the held lock), extend and release `round` each, exec `exec`.
fn assert_floors(path: &Path, name: &str, round: Floor, exec: Floor) {
    let (token, acquire) = path.cost(&["acquire", name, "--ttl", "30s"]);
    let (_, status) = path.cost(&["status", name]);
    let (_, extend) = path.cost(&["extend", name, "--token", &token, "--ttl", "30s"]);
    let (_, release) = path.cost(&["release", name, "--token", &token]);
    let (_, ran) = path.cost(&["exec", name, "--ttl", "60s", "--", "true"]);
    for (op, counts, floor) in [
        ("acquire", acquire, round),
        ("status", status, round),
        ("extend", extend, round),
        ("release", release, round),
        ("exec", ran, exec),
    ] {
        for (proxy, counted) in &counts {
            let (connections, flights) = floor
                .iter()
                .find(|(named, _, _)| named == proxy)
                .map_or((0, &[][..]), |(_, connections, flights)| {
                    (*connections, *flights)
                });
            let expected = Counted {
                connections,
                flights: flights.to_vec(),
            };
            assert_eq!(
                *counted, expected,
                "{op}: {proxy} cost {counted:?}, its floor is {expected:?} (all: {counts:?})"
            );
        }
    }
}

/// A path through counting proxies, filled in by the test.
fn path() -> Path {
    Path {
        args: vec![],
        envs: vec![],
        proxies: vec![],
        flush: Box::new(|| {}),
    }
}

#[test]
fn a_plain_server_costs_one_connection_and_one_flight_a_round() {
    let server = Redis::start_with(&["--requirepass", "pw"]);
    let mut path = path();
    let port = path.proxy("server", server.port);
    path.args = vec!["-s".into(), format!("redis://:pw@127.0.0.1:{port}")];
    path.flush = Box::new(move || flush(&mut server.connection()));
    let round = &[("server", 1, &[1][..])][..];
    assert_floors(&path, "job", round, &[("server", 1, &[2])]);
}

#[test]
fn a_tls_server_costs_one_connection_and_a_flight_more_than_a_plain_one() {
    let certs = Certs::generate();
    let server = TlsRedis::start_with(&certs, false, &["--requirepass", "pw"]);
    let mut path = path();
    let port = path.proxy("server", server.port);
    path.args = vec![
        "--tls-ca".into(),
        certs.path("ca.crt"),
        "-s".into(),
        format!("rediss://:pw@127.0.0.1:{port}"),
    ];
    path.flush = Box::new(move || {
        let mut con = server.connection();
        let _: () = redis::cmd("AUTH").arg("pw").query(&mut con).unwrap();
        flush(&mut con);
    });
    // The handshake's flight (ClientHello), then the Finished with the first request.
    let round = &[("server", 1, &[2][..])][..];
    assert_floors(&path, "job", round, &[("server", 1, &[3])]);
}

#[test]
fn a_sentinel_group_is_asked_once_a_run_and_its_master_checked_with_the_first_request() {
    let mut path = path();
    let passwords = Passwords {
        master: Some("m-pw"),
        sentinel: Some("s-pw"),
    };
    let group =
        Group::start_many_monitoring(1, passwords, |master| path.proxy("master", master.port))
            .remove(0);
    let sentinel = path.proxy("sentinel", group.sentinels[0].port);
    path.args = vec![
        "-s".into(),
        format!("redis+sentinel://:m-pw@127.0.0.1:{sentinel}/{}", group.name),
    ];
    path.envs = vec![("REDLOCK_SENTINEL_PASSWORD", "s-pw")];
    path.flush = Box::new(move || flush(&mut group.nodes[0].connection()));
    // The sentinel's answer, then the master's set-up and ROLE with the first request. exec's
    // release asks the sentinel again, on the same connection, as it goes out to the master:
    // a flight there, but no round trip of its own.
    let round = &[("sentinel", 1, &[1][..]), ("master", 1, &[1][..])][..];
    assert_floors(
        &path,
        "job",
        round,
        &[("sentinel", 1, &[2]), ("master", 1, &[2])],
    );
}

#[test]
fn a_cluster_seed_that_serves_the_slot_is_asked_on_the_connection_that_gave_the_map() {
    let mut path = path();
    let names = ["seed", "node b", "node c"];
    let mut next = names.iter();
    let Some(cluster) =
        RedisCluster::start_announcing(|node| path.proxy(next.next().unwrap(), node.port))
    else {
        eprintln!("skipped: needs Redis 7.0 or later (cluster-announce-port set at run time)");
        return;
    };
    let seed = path.proxies[0].1.port;
    let name = (0..)
        .map(|i| format!("job-{i}"))
        .find(|name| cluster.port_serving(&format!("redlock:{name}")) == seed)
        .unwrap();
    let second = path.proxies[1].1.port;
    let on_second = (0..)
        .map(|i| format!("job-{i}"))
        .find(|name| cluster.port_serving(&format!("redlock:{name}")) == second)
        .unwrap();
    path.args = vec!["-s".into(), format!("redis+cluster://127.0.0.1:{seed}")];
    path.flush = Box::new(move || {
        for node in &cluster.nodes {
            flush(&mut node.connection());
        }
    });
    // CLUSTER SLOTS, then the request, on the same connection.
    let round = &[("seed", 1, &[2][..])][..];
    assert_floors(&path, &name, round, &[("seed", 1, &[3])]);

    // Two seeds asked at once, the lock on the one that answers second: its connection, made
    // to ask it for the map, carries the request too.
    path.proxies[1].1.hold_replies(HOLD * 3);
    path.args = vec![
        "-s".into(),
        format!("redis+cluster://127.0.0.1:{seed},127.0.0.1:{second}"),
    ];
    let (token, acquire) = path.cost(&["acquire", &on_second]);
    let expected = [
        (
            "seed",
            Counted {
                connections: 1,
                flights: vec![1],
            },
        ),
        (
            "node b",
            Counted {
                connections: 1,
                flights: vec![2],
            },
        ),
        (
            "node c",
            Counted {
                connections: 0,
                flights: vec![],
            },
        ),
    ];
    assert_eq!(acquire, expected);
    path.cost(&["release", &on_second, "--token", &token]);
}

#[test]
fn an_acquire_with_a_fence_does_not_wait_out_a_timeout_for_the_servers_it_did_not_wait_for() {
    // Long against the acquire's own rounds (milliseconds), short for the test.
    const TIMEOUT: Duration = Duration::from_secs(3);
    let cluster = Cluster::start(5);
    let timeout = format!("{}ms", TIMEOUT.as_millis());
    for _ in 0..8 {
        // Decided by the first 3 of 5: the others' replies come in during the fence's
        // write-back round, before the acquire round is settled.
        let started = std::time::Instant::now();
        let acquired = cluster
            .call(["acquire", "f", "--fence", "--timeout", &timeout])
            .succeeds();
        let took = started.elapsed();
        assert!(took < TIMEOUT, "acquire --fence took {took:?}");
        let token = acquired.stdout_text();
        let token = token.lines().next().unwrap();
        cluster.call(["release", "f", "--token", token]).succeeds();
    }
}

#[test]
fn a_sentinel_group_25_ms_away_each_way_answers_at_the_default_timeout() {
    // Four round trips of 50 ms before the first reply: the whole default timeout of 200 ms.
    // Its sentinels get one --timeout to answer, its master another.
    const ONE_WAY: Duration = Duration::from_millis(25);
    let mut path = path();
    let group = Group::start_many_monitoring(1, Passwords::default(), |master| {
        path.proxy("master", master.port)
    })
    .remove(0);
    let sentinels: Vec<String> = group
        .sentinels
        .iter()
        .map(|sentinel| format!("127.0.0.1:{}", path.proxy("sentinel", sentinel.port)))
        .collect();
    for (_, proxy) in &path.proxies {
        proxy.hold_replies(Duration::ZERO);
        proxy.set(Fault::Distance(ONE_WAY));
    }
    let url = format!("redis+sentinel://{}/{}", sentinels.join(","), group.name);
    let acquired = call(["-s", &url, "acquire", "job"]).succeeds();
    let token = acquired.stdout_text();
    assert_eq!(group.nodes[0].get(KEY).as_deref(), Some(token.as_str()));
    call(["-s", &url, "release", "job", "--token", &token]).succeeds();
    call(["-s", &url, "exec", "job", "--", "true"]).succeeds();
}
