//! What each operation costs in round trips on each server kind, counted by the proxies in
//! front of the servers (support/proxy.rs: connections opened, request flights that waited for
//! a reply), not timed: a regression fails here on a loaded machine as on an idle one.

use crate::support::proxy::{Counted, Proxy};
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

/// What one operation may cost on each proxy: (proxy, connections, flights on each).
type Floor<'a> = &'a [(&'static str, usize, &'a [usize])];

/// What every operation may cost, one after the other on the same lock: acquire, status (of
/// the held lock), extend, release, exec. A proxy not named costs nothing.
struct Floors<'a> {
    acquire: Floor<'a>,
    status: Floor<'a>,
    extend: Floor<'a>,
    release: Floor<'a>,
    exec: Floor<'a>,
}

/// Runs every operation once on `name` and asserts that each costs its floor.
fn assert_floors(path: &Path, name: &str, floors: Floors) {
    let (token, acquire) = path.cost(&["acquire", name, "--ttl", "30s"]);
    let (_, status) = path.cost(&["status", name]);
    let (_, extend) = path.cost(&["extend", name, "--token", &token, "--ttl", "30s"]);
    let (_, release) = path.cost(&["release", name, "--token", &token]);
    let (_, exec) = path.cost(&["exec", name, "--ttl", "60s", "--", "true"]);
    for (op, counts, floor) in [
        ("acquire", acquire, floors.acquire),
        ("status", status, floors.status),
        ("extend", extend, floors.extend),
        ("release", release, floors.release),
        ("exec", exec, floors.exec),
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
    assert_floors(
        &path,
        "job",
        Floors {
            acquire: round,
            status: round,
            extend: round,
            release: round,
            exec: &[("server", 1, &[2])],
        },
    );
}
