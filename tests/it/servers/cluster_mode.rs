//! A Redis Cluster as one server (`redis+cluster://`) beside two plain servers: locks of every
//! kind on each of its masters through a single seed, and the errors of a cluster that cannot
//! serve or is not trusted. One real cluster (three masters, three replicas) per test.

use crate::support::mixed::{beside, key_of, Mixed};
use crate::support::redis_cluster::start_node;
use crate::support::waiters::{assert_woken, waiting_on};
use crate::support::*;
use std::time::{Duration, Instant};

#[test]
fn every_kind_of_lock_works_on_each_master_through_one_seed() {
    let setup = Mixed::start();
    let masters: Vec<u16> = setup.cluster.masters().iter().map(|m| m.port).collect();
    let names: Vec<String> = masters
        .iter()
        .map(|&port| setup.cluster.name_on(port, "redlock:", "job"))
        .collect();

    // acquire, status, release: each name's key on its own master, and on both plain servers.
    let tokens: Vec<String> = names
        .iter()
        .map(|name| setup.acquire(name, &["--ttl", "30s"]))
        .collect();
    for ((name, token), port) in names.iter().zip(&tokens).zip(&masters) {
        let key = key_of(name);
        assert_eq!(
            setup.cluster.node(*port).get(&key).as_deref(),
            Some(token.as_str())
        );
        assert_eq!(setup.holding(&key, token), 3);
        let json = json(setup.call(["status", name, "--json"]).get_output());
        assert_eq!(json["state"], "held", "{json}");
        assert_eq!(json["per_server"][0]["node"], format!("127.0.0.1:{port}"));
        assert_eq!(
            json["per_server"][0]["hash_slot"],
            setup.cluster.slot_of(&key)
        );
    }
    // The same cluster again, through a master and the seed: still one server, one vote.
    let again = setup.servers[0].replace(
        "redis+cluster://",
        &format!("redis+cluster://127.0.0.1:{},", masters[1]),
    );
    setup
        .cmd(["status", &names[0]])
        .env(
            "REDLOCK_SERVERS",
            format!("{},{again}", setup.servers.join(",")),
        )
        .assert()
        .stdout(predicate::str::contains("on 3 of 3 servers"));
    // One of its nodes named as a plain server: a one-line hint, not MOVED or CROSSSLOT.
    redlock_cmd(["-s", &format!("redis://127.0.0.1:{}", masters[0])])
        .args(["acquire", &names[1]])
        .assert()
        .code(69)
        .stderr(predicate::str::contains(
            "a Redis Cluster node, listed as a single server: name the cluster as redis+cluster://",
        ));
    let listed = setup.call(["status"]).succeeds();
    let listed = listed.stdout_text();
    for name in &names {
        let line = listed
            .lines()
            .find(|line| line.starts_with(&format!("{name} ")))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("{name} not listed: {listed}"));
        assert!(line.contains("held") && line.contains("3/3"), "{line}");
    }
    for (name, token) in names.iter().zip(&tokens) {
        setup.call(["release", name, "--token", token]).succeeds();
        assert_eq!(setup.holding(&key_of(name), token), 0);
    }

    // exec on the first master's name: run, then released.
    let ran = setup
        .redlock()
        .args(["exec", &names[0], "--", "sh", "-c", "echo ran"])
        .assert()
        .code(0);
    assert_eq!(stdout_of(&ran), "ran");
    assert_eq!(setup.cluster.node(masters[0]).get(&key_of(&names[0])), None);

    // --wait: a waiter queued on the second master is handed the lock on release, long
    // before its own retry delay would have it try again.
    hand_over(&setup, &names[1], masters[1]);

    // --fence: each grant's number is one more, and the cluster keeps its counter in the
    // lock key's slot.
    let key = key_of(&names[2]);
    for expected in 1..=2u64 {
        let printed = setup.acquire(&names[2], &["--fence", "-v"]);
        let (token, fence) = printed.split_once('\n').expect("token, then fence");
        assert_eq!(fence, expected.to_string());
        let counter: Option<String> = redis::cmd("HGET")
            .arg(beside(&key, "fence"))
            .arg("fence")
            .query(&mut setup.cluster.node(masters[2]).connection())
            .unwrap();
        assert_eq!(counter, Some(expected.to_string()));
        setup
            .cmd(["release", &names[2], "--token", token])
            .assert()
            .success();
    }

    // --limit 2: two holders, a third is busy; the slots are in the lock key's slot.
    let key = key_of(&names[0]);
    let first = setup.acquire(&names[0], &["--limit", "2", "-v"]);
    let second = setup.acquire(&names[0], &["--limit", "2", "-v"]);
    setup
        .cmd(["acquire", &names[0], "--limit", "2"])
        .assert()
        .code(75);
    let master = setup.cluster.node(masters[0]);
    let slots: Vec<Option<String>> = (0..2)
        .map(|slot| master.get(&beside(&key, &format!("slots:{slot}"))))
        .collect();
    assert!(
        slots.contains(&Some(first)) && slots.contains(&Some(second)),
        "{slots:?}"
    );

    // --shared: two shared holders, and an exclusive request is busy.
    let key = key_of(&names[1]);
    for _ in 0..2 {
        setup.acquire(&names[1], &["--shared", "-v"]);
    }
    setup.cmd(["acquire", &names[1]]).assert().code(75);
    let readers: usize = redis::cmd("ZCARD")
        .arg(beside(&key, "readers"))
        .query(&mut setup.cluster.node(masters[1]).connection())
        .unwrap();
    assert_eq!(readers, 2);
    setup.cmd(["status", &names[1]]).assert().stdout(
        predicate::str::contains("2 shared holders").and(predicate::str::contains("on 3 of 3")),
    );

    // Names with braces: a hash tag is kept as it is; a stray '}' still works as a semaphore.
    for name in ["{app}deploy", "a}b", "{}x", "{"] {
        let token = setup.acquire(name, &["--limit", "2", "-v"]);
        setup
            .call(["status"])
            .stdout(predicate::str::contains(format!("{name} [slot ")));
        setup
            .call(["release", name, "--limit", "2", "--token", &token])
            .succeeds();
    }
    let tagged = setup.cluster.master_of("redlock:{app}deploy");
    let tagged_keys: usize = redis::cmd("EXISTS")
        .arg("redlock:{app}deploy\x1fslots:0")
        .arg("redlock:{app}deploy\x1fslots:1")
        .query(&mut tagged.connection())
        .unwrap();
    assert_eq!(tagged_keys, 0, "released");
}

/// A holder of `name` (served by the master on `port`), a waiter queued behind it with a retry
/// delay far too long to explain its success, and the release that hands the lock over.
fn hand_over(setup: &Mixed, name: &str, port: u16) {
    let token = setup.acquire(name, &["--ttl", "30s"]);
    let queue = beside(&key_of(name), "queue");
    let master = setup.cluster.node(port);
    let waiter = setup
        .redlock()
        .args(["acquire", name, "--wait", "30s", "--retry-delay", "20s"])
        .spawn_until("the waiter to queue and listen on the cluster", || {
            waiting_on(&mut master.connection(), &key_of(name), &queue) == (1, 1)
        });
    let released = Instant::now();
    setup.call(["release", name, "--token", &token]).succeeds();
    let output = waiter.finish(SLACK);
    // Woken, not retried: its next try of its own was 10 s away at least.
    assert_woken(&output, released);
    assert!(setup.holding(&key_of(name), &stdout_of(&output)) >= 2);
    setup
        .call(["release", name, "--token", &stdout_of(&output)])
        .succeeds();
}

/// `redlock acquire` on `url` alone, then beside two plain servers, with -v: alone it is one
/// unavailable server (69, one line naming the URL without its password); beside two servers
/// the lock is taken on those, and the cluster's failure is one line of -v.
fn assert_one_unavailable_server(url: &str, shown: &str, why: &str) {
    let plain = Cluster::start(2);
    call(["-s", url, "--timeout", "1s", "acquire", "job"])
        .exits(69)
        .stderr(
            line_count(1)
                .and(predicate::str::contains(shown))
                .and(predicate::str::contains(why))
                .and(predicate::str::contains("s3cret").not()),
        );

    let beside = redlock_cmd(["--timeout", "1s", "acquire", "job", "-v"])
        .env("REDLOCK_SERVERS", format!("{url},{}", plain.urls()))
        .assert()
        .success()
        .stderr(predicate::str::contains("on 2 of 3 servers"));
    let stderr = stderr_of(beside.get_output());
    // Its -v line, and the margin the run ended with.
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(shown) && !l.contains("can vote"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert_eq!(
        stderr.matches("2 of 3 servers can vote").count(),
        1,
        "{stderr}"
    );
    assert!(lines[0].contains(why), "{stderr}");
    assert!(!stderr.contains("s3cret"), "{stderr}");
}

#[test]
fn a_cluster_that_cannot_serve_is_one_unavailable_server_named_without_its_password() {
    // No seed reachable.
    let closed = free_port();
    assert_one_unavailable_server(
        &format!("redis+cluster://:s3cret@127.0.0.1:{closed}"),
        &format!("redis+cluster://:***@127.0.0.1:{closed}"),
        "connection refused",
    );
    // A seed that is not in cluster mode.
    let single = Redis::start_with(&["--requirepass", "s3cret"]);
    assert_one_unavailable_server(
        &format!("redis+cluster://:s3cret@127.0.0.1:{}", single.port),
        &format!("redis+cluster://:***@127.0.0.1:{}", single.port),
        "not in cluster mode",
    );
    // A cluster whose slots are not all covered: CLUSTERDOWN.
    let node = start_node(&["--requirepass", "s3cret"]);
    let _: () = redis::cmd("CLUSTER")
        .arg("ADDSLOTS")
        .arg((0..=8000).collect::<Vec<u16>>())
        .query(&mut node.connection())
        .unwrap();
    assert_one_unavailable_server(
        &format!("redis+cluster://:s3cret@127.0.0.1:{}", node.port),
        &format!("redis+cluster://:***@127.0.0.1:{}", node.port),
        "the cluster is down",
    );
}

#[test]
fn a_tls_cluster_is_reached_over_tls_and_checked_against_the_ca() {
    let certs = Certs::generate();
    let bus = free_port().to_string();
    // One TLS-only node serving every slot: a whole cluster, as far as a client can tell. Its
    // bus port is chosen with `--cluster-port`, so this test needs Redis 7.0 or later built
    // with TLS (the cluster tests without TLS run on every version).
    let node = TlsRedis::start_with(
        &certs,
        false,
        &[
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-port",
            &bus,
            "--tls-cluster",
            "yes",
        ],
    );
    let mut con = redis::Client::open(format!("rediss://127.0.0.1:{}/#insecure", node.port))
        .unwrap()
        .get_connection_with_timeout(Duration::from_secs(2))
        .unwrap();
    let _: () = redis::cmd("CLUSTER")
        .arg("ADDSLOTS")
        .arg((0..=16383).collect::<Vec<u16>>())
        .query(&mut con)
        .unwrap();
    wait_for("cluster_state:ok", SLACK, || {
        redis::cmd("CLUSTER")
            .arg("INFO")
            .query::<String>(&mut con)
            .is_ok_and(|info| info.contains("cluster_state:ok"))
    });
    let url = format!("rediss+cluster://127.0.0.1:{}", node.port);
    // TLS handshakes in an unoptimised build: the seed's, then the master's.
    let redlock = |args: &[&str]| redlock_cmd([&["-s", &url, "--timeout", "2s"], args].concat());
    let ca = certs.path("ca.crt");
    let trusted = redlock(&["--tls-ca", &ca, "acquire", "job"])
        .assert()
        .success();
    let token: Option<String> = redis::cmd("GET").arg(KEY).query(&mut con).unwrap();
    assert_eq!(token, Some(stdout_of(trusted.get_output())));
    redlock(&["--tls-ca", &ca, "status", "job"])
        .assert()
        .stdout(predicate::str::contains(format!(
            "(node 127.0.0.1:{}, hash slot ",
            node.port
        )));
    // Without the CA, no node is trusted.
    redlock(&["acquire", "other"]).assert().code(69);
}
