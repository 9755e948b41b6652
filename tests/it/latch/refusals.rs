//! A refused latch run writes nothing: every verb that can create a latch (`set`, and `done` and
//! `wait` with `--count`), refused for another count, leaves nothing on servers restarted empty;
//! a `set` that finds another count made between its check and its write takes back what it
//! created.

use crate::support::latches::*;
use crate::support::proxy::{Fault, Proxy};
use crate::support::*;
use std::time::Duration;

#[test]
fn every_verb_that_can_create_refuses_another_count_with_nothing_written() {
    let mut cluster = Cluster::start(5);
    latch(&cluster, &["set", "etl", "--count", "3"])
        .assert()
        .success();
    cluster.servers[0].restart();
    cluster.servers[1].restart();
    for args in [
        &["set", "etl", "--count", "2"][..],
        &["done", "etl", "--id", "z", "--count", "2"][..],
        &["wait", "etl", "--count", "2", "--wait", "0s"][..],
    ] {
        latch(&cluster, args)
            .assert()
            .code(75)
            .stderr(predicate::str::contains(
                "latch 'etl' exists with count 3 on 3 server(s), not 2",
            ));
        for server in &cluster.servers[..2] {
            assert_eq!(server.pttl(LATCH_KEY), -2, "{args:?} wrote");
        }
    }
    let status = latch(&cluster, &["status", "etl", "--json"])
        .assert()
        .code(1);
    let status = document(status.get_output());
    assert_eq!(status["count"], 3);
    assert_eq!(status["done"], 0, "a refused done counted");
}

#[test]
fn a_set_that_finds_another_count_made_between_its_rounds_takes_back_what_it_created() {
    // Servers 0 and 1 behind proxies that delay each request and each reply: between a
    // server's check and the write that follows it there are a reply's and a request's delay.
    const DELAY: Duration = Duration::from_millis(100);
    let cluster = Cluster::start(3);
    let proxies: Vec<Proxy> = cluster.servers[..2]
        .iter()
        .map(|server| Proxy::start(server.port))
        .collect();
    let urls = format!(
        "redis://127.0.0.1:{},redis://127.0.0.1:{},{}",
        proxies[0].port,
        proxies[1].port,
        cluster.servers[2].url()
    );
    for proxy in &proxies {
        proxy.set(Fault::Delay(DELAY));
    }
    let set = Cmd::new(redlock_on(&urls))
        .args(["--timeout", "2s", "latch", "set", "etl", "--count", "2"])
        .spawn();
    // Once servers 0 and 1 have run the check (the script's first run on a connection is an
    // EVAL; the latch is missing everywhere), another client makes the latch there with count
    // 7: the write that follows finds 7.
    for server in &cluster.servers[..2] {
        wait_for(
            "the check on a delayed server",
            Duration::from_secs(10),
            || {
                let calls = server.command_calls();
                calls.contains_key("eval") || calls.contains_key("evalsha")
            },
        );
        let _: () = redis::pipe()
            .cmd("HSET")
            .arg(LATCH_KEY)
            .arg("\u{1f}count")
            .arg(7)
            .ignore()
            .cmd("PEXPIRE")
            .arg(LATCH_KEY)
            .arg(60_000)
            .ignore()
            .query(&mut server.connection())
            .unwrap();
    }
    let output = set.finish(Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(75), "{}", stderr_of(&output));
    assert!(
        stderr_of(&output).contains("exists with count 7 on 2 server(s), not 2"),
        "{}",
        stderr_of(&output)
    );
    // Server 2 had been given count 2 by that write: taken back. The count 7 stays.
    assert_eq!(cluster.servers[2].pttl(LATCH_KEY), -2);
    for server in &cluster.servers[..2] {
        assert!(server.pttl(LATCH_KEY) > 0);
    }
}
