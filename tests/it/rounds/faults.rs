//! Bad networks between redlock and real servers, through the fault proxy: slow links, lost
//! replies, resets and black holes. After every one of them, nothing may be left on any server.

use crate::support::proxy::{Fault, Proxy};
use crate::support::waiters::{subscribers, wake_channels};
use crate::support::*;
use std::time::{Duration, Instant};

const PASSWORD: &str = "faulty-pw";

/// Real servers, each behind its own fault proxy; redlock only knows the proxies.
struct Faulty {
    cluster: Cluster,
    proxies: Vec<Proxy>,
}

impl Faulty {
    /// The servers require a password, as production servers do: every new connection costs a
    /// round trip (AUTH) before its first command.
    fn start(n: usize) -> Faulty {
        let cluster = Cluster {
            servers: (0..n)
                .map(|_| Redis::start_with(&["--requirepass", PASSWORD]))
                .collect(),
        };
        let proxies = cluster
            .servers
            .iter()
            .map(|s| Proxy::start(s.port))
            .collect();
        Faulty { cluster, proxies }
    }

    /// The proxies' URLs, which are all redlock knows.
    fn urls(&self) -> String {
        let urls: Vec<String> = self
            .proxies
            .iter()
            .map(|p| format!("redis://:{PASSWORD}@127.0.0.1:{}", p.port))
            .collect();
        urls.join(",")
    }

    /// `redlock` on the proxies, to spawn or run through `process`.
    fn redlock(&self) -> Cmd {
        Cmd::new(redlock_on(&self.urls()))
    }

    /// `redlock ARGS` on the proxies, for one `assert_cmd` run.
    fn cmd(&self, args: &[&str]) -> assert_cmd::Command {
        one_shot(redlock_on(&self.urls()), args)
    }

    fn set_all(&self, fault: Fault) {
        for proxy in &self.proxies {
            proxy.set(fault);
        }
    }

    /// Waits until no server holds the key: a failed attempt's cleanup may still be on its way
    /// through a slow proxy when redlock exits, but it must arrive.
    fn wait_until_clean(&self) {
        wait_for(
            "the key to be gone from every server",
            Duration::from_secs(3),
            || self.cluster.values(KEY).iter().all(Option::is_none),
        );
    }
}

/// Runs one redis command on every server directly, not through the proxies.
fn on_every_server(faulty: &Faulty, command: &redis::Cmd) {
    for server in &faulty.cluster.servers {
        let _: redis::Value = command.query(&mut server.connection()).unwrap();
    }
}

/// Starts `acquire --wait` as another client's lock is released. The waiter's connections are
/// set up (one per server, which its refused attempt used and its subscription now listens on)
/// before `fault` hits them, and it retries only when told of the release, so its one attempt
/// on a free lock runs entirely under `fault`.
fn waiter_meets(faulty: &Faulty, faults: [Fault; 3]) -> std::process::Output {
    on_every_server(
        faulty,
        redis::cmd("SET")
            .arg(KEY)
            .arg("other")
            .arg("PX")
            .arg(30_000),
    );
    let mut waiter = faulty.redlock();
    waiter.args(["acquire", "job", "--ttl", "30s", "--timeout", "200ms"]);
    waiter.args(["--wait", "3s", "--retry-delay", "10s"]);
    let waiter = waiter.spawn();
    wait_for(
        "the waiter to subscribe on every server",
        Duration::from_secs(5),
        || {
            subscribers(&faulty.cluster) == faulty.cluster.servers.len()
                && faulty.cluster.servers.iter().all(|server| {
                    let clients: String = redis::cmd("CLIENT")
                        .arg("LIST")
                        .query(&mut server.connection())
                        .unwrap();
                    clients.contains(" sub=1 ") && clients.contains("cmd=subscribe")
                })
        },
    );
    for (proxy, fault) in faulty.proxies.iter().zip(faults) {
        proxy.set(fault);
    }
    for server in &faulty.cluster.servers {
        server.reset_stats();
    }
    on_every_server(faulty, redis::cmd("DEL").arg(KEY));
    // Wake the waiter on its own channel, as a release would.
    for server in &faulty.cluster.servers {
        let mut con = server.connection();
        for channel in wake_channels(server, KEY) {
            let _: i64 = redis::cmd("PUBLISH")
                .arg(channel)
                .arg("the test")
                .query(&mut con)
                .unwrap();
        }
    }
    waiter.wait()
}

#[test]
fn a_slow_network_failing_the_attempt_leaves_no_phantom_lock() {
    let faulty = Faulty::start(3);
    // Each SET lands after 150 ms; its reply would come back after 300, past the 200 ms timeout,
    // and a new connection's AUTH would take as long.
    let output = waiter_meets(&faulty, [Fault::Delay(Duration::from_millis(150)); 3]);
    assert_eq!(output.status.code(), Some(69), "{}", stderr_of(&output));
    faulty.wait_until_clean();
    faulty.set_all(Fault::None);
    faulty.cmd(&["acquire", "job"]).assert().success();
}

#[test]
fn a_set_whose_reply_was_lost_is_no_vote_and_the_cleanup_still_removes_it() {
    let faulty = Faulty::start(3);
    // Servers 1 and 2 apply every command and their replies never come back: one vote of
    // three, so every attempt fails, and no key it set may stay.
    let output = waiter_meets(
        &faulty,
        [Fault::DropReplies, Fault::DropReplies, Fault::None],
    );
    assert_eq!(output.status.code(), Some(69), "{}", stderr_of(&output));
    let stderr = stderr_of(&output);
    assert!(stderr.contains("1 of 3 servers answered"), "{stderr}");
    faulty.wait_until_clean();
    for server in &faulty.cluster.servers[..2] {
        // The cleanup's compare-and-delete (a plain EVAL, used for nothing else) reached the
        // servers whose replies were lost; `wait_until_clean` showed it removed what they set.
        let calls = server.command_calls();
        assert!(calls.get("eval").is_some_and(|n| *n >= 1), "{calls:?}");
    }
}

#[test]
fn a_black_holed_server_costs_an_acquire_nothing_a_status_one_timeout_and_nothing_is_left() {
    // Long enough that one timeout more stands out from a loaded machine's delays.
    const TIMEOUT: Duration = Duration::from_secs(1);
    let timeout = format!("{}ms", TIMEOUT.as_millis());
    let faulty = Faulty::start(3);
    faulty.proxies[0].set(Fault::BlackHole);
    for args in [["acquire", "job"], ["status", "job"]] {
        let started = Instant::now();
        let run = faulty
            .cmd(&[&args[..], &["--timeout", &timeout]].concat())
            .assert();
        run.success();
        let elapsed = started.elapsed();
        if args[0] == "acquire" {
            // Decided on the two that answer, the moment they have: the black hole costs
            // nothing (nodes/mod.rs).
            assert!(elapsed < TIMEOUT / 2, "{args:?} took {elapsed:?}");
            continue;
        }
        // `status` shows every server, so it waits for each: every server asked at once, the
        // black hole's timeout once a round, not once per step or per server. A held lock
        // makes a second round (the fence), in which it waits for the black hole again.
        assert!(
            TIMEOUT <= elapsed && elapsed < TIMEOUT * 3,
            "{args:?} took {elapsed:?}"
        );
    }
    let token = faulty.cluster.values(KEY)[1].clone().unwrap();
    assert_eq!(faulty.cluster.holding(KEY, &token), 2);
    faulty
        .cmd(&["release", "job", "--token", &token, "--timeout", &timeout])
        .assert()
        .success();
    assert_eq!(faulty.cluster.values(KEY), vec![None, None, None]);
}

#[test]
fn resets_during_exec_renewals_do_not_lose_the_lock_while_a_quorum_answers() {
    let faulty = Faulty::start(3);
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("done");
    let script = until_file(&dir.path().join("started"), &done);
    let exec = faulty
        .redlock()
        .args(["exec", "job", "--ttl", "3s", "--", "sh", "-c", &script])
        .spawn();
    wait_for("the lock to be taken", Duration::from_secs(5), || {
        faulty.cluster.values(KEY).iter().all(Option::is_some)
    });
    let token = faulty.cluster.values(KEY)[2].clone().unwrap();
    // One server at a time resets every connection, through several renewals each; the
    // other two still answer every renewal.
    for faulty_one in 0..2 {
        let proxy = &faulty.proxies[faulty_one];
        proxy.set(Fault::Reset);
        wait_for("renewals to be reset", Duration::from_secs(10), || {
            proxy.resets() >= 2
        });
        proxy.set(Fault::None);
        assert!(faulty.cluster.holding(KEY, &token) >= 2);
    }
    std::fs::write(&done, "").unwrap();
    let output = exec.wait();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert!(
        !stderr_of(&output).contains("lost"),
        "{}",
        stderr_of(&output)
    );
    assert_eq!(faulty.cluster.values(KEY), vec![None, None, None]);
}
