//! A Redis Cluster as one server (`redis+cluster://`) beside two plain servers: locks of every
//! kind on each of its masters through a single seed, failovers under `exec`, a slot migrated
//! while waiters wait, and the errors of a cluster that cannot serve. One real cluster (three
//! masters, three replicas) per test: a test's failover or migration is its own.

use crate::support::redis_cluster::{start_node, RedisCluster};
use crate::support::*;
use std::time::{Duration, Instant};

/// A cluster and two plain servers, and the URLs a lock is taken on: the cluster's names one
/// node only (a replica unless said otherwise, which serves no slot at all).
struct Setup {
    cluster: RedisCluster,
    plain: Cluster,
    servers: Vec<String>,
}

impl Setup {
    fn start() -> Setup {
        let cluster = RedisCluster::start();
        let plain = Cluster::start(2);
        let seed = cluster
            .replica_of(cluster.masters()[0].port)
            .expect("a replica")
            .port;
        let mut servers = vec![cluster.url_via(seed)];
        servers.extend(plain.servers.iter().map(Redis::url));
        Setup {
            cluster,
            plain,
            servers,
        }
    }

    fn redlock(&self) -> Cmd {
        let mut cmd = redlock();
        cmd.env("REDLOCK_SERVERS", self.servers.join(","));
        cmd.env("REDLOCK_TIMEOUT", TEST_TIMEOUT);
        cmd
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        self.redlock().args(args).output().unwrap()
    }

    /// `acquire NAME ARGS`, which must succeed: what it printed.
    fn acquire(&self, name: &str, args: &[&str]) -> String {
        let output = self.run(&[&["acquire", name], args].concat());
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
        stdout_of(&output)
    }

    /// How many servers (the cluster as one) hold `value` at `key`.
    fn holding(&self, key: &str, value: &str) -> usize {
        let on_cluster = self.cluster.master_of(key).get(key).as_deref() == Some(value);
        self.plain.holding(key, value) + usize::from(on_cluster)
    }
}

/// The name on a cluster of what redlock keeps beside the lock key `lock` (one with no hash
/// tag): `␟{lock}␟suffix`, in the lock key's slot.
fn beside(lock: &str, suffix: &str) -> String {
    format!("\x1f{{{lock}}}\x1f{suffix}")
}

fn key_of(name: &str) -> String {
    format!("redlock:{name}")
}

#[test]
fn every_kind_of_lock_works_on_each_master_through_one_seed() {
    let setup = Setup::start();
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
        let json = json(&setup.run(&["status", name, "--json"]));
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
    let twice = setup
        .redlock()
        .env(
            "REDLOCK_SERVERS",
            format!("{},{again}", setup.servers.join(",")),
        )
        .args(["status", &names[0]])
        .output()
        .unwrap();
    assert!(
        stdout_of(&twice).contains("on 3 of 3 servers"),
        "{}",
        stdout_of(&twice)
    );
    // One of its nodes named as a plain server: a one-line hint, not MOVED or CROSSSLOT.
    let plain_url = redlock()
        .args(["-s", &format!("redis://127.0.0.1:{}", masters[0])])
        .args(["acquire", &names[1]])
        .output()
        .unwrap();
    assert_eq!(
        plain_url.status.code(),
        Some(69),
        "{}",
        stderr_of(&plain_url)
    );
    assert!(
        stderr_of(&plain_url).contains("is a Redis Cluster node ("),
        "{}",
        stderr_of(&plain_url)
    );
    let listed = setup.run(&["status"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr_of(&listed));
    for name in &names {
        let line = stdout_of(&listed)
            .lines()
            .find(|line| line.starts_with(&format!("{name} ")))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("{name} not listed: {}", stdout_of(&listed)));
        assert!(line.contains("held") && line.contains("3/3"), "{line}");
    }
    for (name, token) in names.iter().zip(&tokens) {
        let released = setup.run(&["release", name, "--token", token]);
        assert_eq!(released.status.code(), Some(0), "{}", stderr_of(&released));
        assert_eq!(setup.holding(&key_of(name), token), 0);
    }

    // exec on the first master's name: run, then released.
    let ran = setup.run(&["exec", &names[0], "--", "sh", "-c", "echo ran"]);
    assert_eq!(ran.status.code(), Some(0), "{}", stderr_of(&ran));
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
        setup.run(&["release", &names[2], "--token", token]);
    }

    // --limit 2: two holders, a third is busy; the slots are in the lock key's slot.
    let key = key_of(&names[0]);
    let first = setup.acquire(&names[0], &["--limit", "2", "-v"]);
    let second = setup.acquire(&names[0], &["--limit", "2", "-v"]);
    let third = setup.run(&["acquire", &names[0], "--limit", "2"]);
    assert_eq!(third.status.code(), Some(75), "{}", stderr_of(&third));
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
    let exclusive = setup.run(&["acquire", &names[1]]);
    assert_eq!(
        exclusive.status.code(),
        Some(75),
        "{}",
        stderr_of(&exclusive)
    );
    let readers: usize = redis::cmd("ZCARD")
        .arg(beside(&key, "readers"))
        .query(&mut setup.cluster.node(masters[1]).connection())
        .unwrap();
    assert_eq!(readers, 2);
    let shown = stdout_of(&setup.run(&["status", &names[1]]));
    assert!(
        shown.contains("2 shared holders") && shown.contains("on 3 of 3"),
        "{shown}"
    );

    // Names with braces: a hash tag is kept as it is; a stray '}' still works as a semaphore.
    for name in ["{app}deploy", "a}b", "{}x", "{"] {
        let token = setup.acquire(name, &["--limit", "2", "-v"]);
        let listed = stdout_of(&setup.run(&["status"]));
        assert!(
            listed.contains(&format!("{name} [slot ")),
            "{name}: {listed}"
        );
        let released = setup.run(&["release", name, "--limit", "2", "--token", &token]);
        assert_eq!(released.status.code(), Some(0), "{}", stderr_of(&released));
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
fn hand_over(setup: &Setup, name: &str, port: u16) {
    let token = setup.acquire(name, &["--ttl", "30s"]);
    let queue = beside(&key_of(name), "queue");
    let master = setup.cluster.node(port);
    let waiter = setup
        .redlock()
        .args(["acquire", name, "--wait", "30s", "--retry-delay", "20s"])
        .spawn_until("the waiter to queue and listen on the cluster", || {
            let queued: usize = redis::cmd("ZCARD")
                .arg(&queue)
                .query(&mut master.connection())
                .unwrap_or(0);
            let channels: Vec<String> = redis::cmd("PUBSUB")
                .arg("CHANNELS")
                .arg(format!("{}\x1fwake\x1f*", key_of(name)))
                .query(&mut master.connection())
                .unwrap_or_default();
            queued == 1 && channels.len() == 1
        });
    let released = Instant::now();
    setup.run(&["release", name, "--token", &token]);
    let output = waiter.finish(SLACK);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    // Woken, not retried: its next try of its own was 10 s away at least.
    assert!(
        released.elapsed() < Duration::from_secs(10),
        "{:?}",
        released.elapsed()
    );
    assert!(setup.holding(&key_of(name), &stdout_of(&output)) >= 2);
    setup.run(&["release", name, "--token", &stdout_of(&output)]);
}

/// `exec job` over `setup`'s servers with a command that runs until the returned `done` file
/// exists; returns once the command has started.
fn start_exec(setup: &Setup, ttl: Duration, extra: &[&str]) -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (started, done) = (dir.path().join("started"), dir.path().join("done"));
    let ttl = format!("{}ms", ttl.as_millis());
    let child = setup
        .redlock()
        // --wait: a loaded machine may make one attempt miss the timeout; the lock is free.
        .args(["exec", "job", "--ttl", &ttl, "--wait", "10s"])
        .args(extra)
        .arg("--")
        .args(["sh", "-c", &until_file(&started, &done)])
        .spawn_until("the command to start", || started.exists());
    (child, dir)
}

/// The TTL of the failover tests: a manual failover takes a few hundred milliseconds, so
/// renewals a third of it apart see it happen between two of them.
const FAILOVER_TTL: Duration = Duration::from_secs(3);

#[test]
fn a_cluster_failover_under_exec_keeps_the_lock_on_the_new_master() {
    let setup = Setup::start();
    let (child, dir) = start_exec(&setup, FAILOVER_TTL, &[]);
    let old = setup.cluster.master_of(KEY).port;
    let token = setup
        .cluster
        .node(old)
        .get(KEY)
        .expect("held on the cluster");
    let status = || {
        setup
            .redlock()
            .env("REDLOCK_TIMEOUT", "2s")
            .args(["status", "job"])
            .output()
            .unwrap()
    };
    let before = status();
    assert!(
        stdout_of(&before).contains(&format!("(node 127.0.0.1:{old}, hash slot ")),
        "{}",
        stdout_of(&before)
    );

    let new = setup.cluster.failover(old);
    // Only a renewal after the failover gives the key more than five sixths of the TTL once a
    // third of it has passed since.
    let failed_over = Instant::now();
    wait_for("a renewal on the new master", FAILOVER_TTL * 3, || {
        let node = setup.cluster.node(new);
        failed_over.elapsed() > FAILOVER_TTL / 3
            && node.get(KEY).as_deref() == Some(token.as_str())
            && node.pttl(KEY) > (FAILOVER_TTL * 5 / 6).as_millis() as i64
    });
    let after = status();
    let table = stdout_of(&after);
    assert_eq!(after.status.code(), Some(0), "{table}");
    assert!(table.contains("on 3 of 3 servers"), "{table}");
    assert!(
        table.contains(&format!("(node 127.0.0.1:{new}, hash slot ")),
        "{table}"
    );
    println!("status before the failover:\n{}", stdout_of(&before));
    println!("status after the failover:\n{table}");

    std::fs::write(dir.path().join("done"), "").unwrap();
    let output = child.finish(SLACK);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(stdout_of(&output), "finished");
    assert_eq!(
        setup.cluster.node(new).get(KEY),
        None,
        "released at the end"
    );
}

#[test]
fn a_new_master_without_the_key_is_a_no_vote_and_exec_loses_the_lock_with_125() {
    let setup = Setup::start();
    let (child, dir) = start_exec(&setup, FAILOVER_TTL, &["-v"]);
    let old = setup.cluster.master_of(KEY).port;
    let new = setup.cluster.failover(old);
    // The new master lost the key (a replica that lagged, or restarted empty).
    let _: () = redis::cmd("DEL")
        .arg(KEY)
        .query(&mut setup.cluster.node(new).connection())
        .unwrap();
    // With the two other servers stopped, the cluster's "no" is all a renewal hears.
    for server in &setup.plain.servers {
        server.stop();
    }
    let stopped = Instant::now();
    let output = child.finish(FAILOVER_TTL + SLACK);
    assert_eq!(output.status.code(), Some(125), "{}", stderr_of(&output));
    assert!(!dir.path().join("done").exists());
    assert!(
        stopped.elapsed() < FAILOVER_TTL * 2,
        "{:?}",
        stopped.elapsed()
    );
    let stderr = stderr_of(&output);
    assert!(stderr.contains("lost"), "{stderr}");
    // The cluster answered, and said no: never a silent success.
    let cluster = &setup.servers[0];
    assert!(
        stderr
            .lines()
            .any(|l| l.contains(cluster.as_str()) && l.contains("not held by this token")),
        "{stderr}"
    );
    assert_eq!(setup.cluster.node(new).get(KEY), None);
}

/// A critical section for `exec`: finds no one else inside, or says so in `$DIR/errors`.
const SECTION: &str = r#"[ -e "$DIR/inside" ] && touch "$DIR/errors"; touch "$DIR/inside"; sleep 0.1; rm "$DIR/inside"; echo x >> "$DIR/count""#;

#[test]
fn a_slot_migrated_while_waiters_wait_keeps_them_exclusive_and_asks_are_followed() {
    let setup = Setup::start();
    let dir = tempfile::tempdir().unwrap();
    let (holder, holder_dir) = start_exec(&setup, Duration::from_secs(10), &[]);
    const WAITERS: usize = 3;
    let waiters: Vec<Running> = (0..WAITERS)
        .map(|_| {
            setup
                .redlock()
                .env("DIR", dir.path())
                .args(["exec", "job", "--wait", "60s", "--retry-delay", "100ms"])
                .args(["--", "sh", "-c", SECTION])
                .spawn()
        })
        .collect();
    let from = setup.cluster.master_of(KEY).port;
    let to = setup
        .cluster
        .masters()
        .iter()
        .map(|m| m.port)
        .find(|&p| p != from)
        .unwrap();
    let queue = beside(KEY, "queue");
    wait_for("every waiter to queue", SLACK, || {
        let queued: usize = redis::cmd("ZCARD")
            .arg(&queue)
            .query(&mut setup.cluster.node(from).connection())
            .unwrap_or(0);
        queued == WAITERS
    });

    let slot = setup.cluster.slot_of(KEY);
    setup.cluster.start_migration(slot, from, to);
    // The lock and its queue: the keys a waiter's attempt names, now on the importing node.
    assert!(setup.cluster.move_keys(slot, from, to) >= 2);
    let importing = setup.cluster.node(to);
    wait_for(
        "a waiter's attempt to be asked of the importing node",
        SLACK,
        || {
            importing
                .command_calls()
                .get("asking")
                .copied()
                .unwrap_or(0)
                > 0
        },
    );
    // A one-off attempt meanwhile: the cluster's vote counts (asked of the new node, which
    // refuses: the lock is held), and nothing is taken.
    let busy = setup.run(&["acquire", "job", "-v"]);
    assert_eq!(busy.status.code(), Some(75), "{}", stderr_of(&busy));
    let cluster_said = stderr_of(&busy)
        .lines()
        .any(|l| l.contains(setup.servers[0].as_str()) && l.contains("refused (key exists)"));
    assert!(cluster_said, "{}", stderr_of(&busy));
    setup.cluster.finish_migration(slot, to);

    std::fs::write(holder_dir.path().join("done"), "").unwrap();
    let output = holder.finish(SLACK);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    for waiter in waiters {
        let output = waiter.wait();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    assert!(
        !dir.path().join("errors").exists(),
        "two holders overlapped"
    );
    let count = std::fs::read_to_string(dir.path().join("count")).unwrap();
    assert_eq!(count.lines().count(), WAITERS);
    assert_eq!(
        setup.cluster.node(to).get(KEY),
        None,
        "released on the new owner"
    );
}

/// `redlock acquire` on `url` alone, then beside two plain servers, with -v: alone it is one
/// unavailable server (69, one line naming the URL without its password); beside two servers
/// the lock is taken on those, and the cluster's failure is one line of -v.
fn assert_one_unavailable_server(url: &str, shown: &str, why: &str) {
    let plain = Cluster::start(2);
    let alone = redlock()
        .args(["-s", url, "--timeout", "1s", "acquire", "job"])
        .output()
        .unwrap();
    assert_eq!(alone.status.code(), Some(69), "{}", stderr_of(&alone));
    let stderr = stderr_of(&alone);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(shown) && stderr.contains(why), "{stderr}");
    assert!(!stderr.contains("s3cret"), "{stderr}");

    let beside = redlock()
        .env("REDLOCK_SERVERS", format!("{url},{}", plain.urls()))
        .args(["--timeout", "1s", "acquire", "job", "-v"])
        .output()
        .unwrap();
    assert_eq!(beside.status.code(), Some(0), "{}", stderr_of(&beside));
    let stderr = stderr_of(&beside);
    assert!(stderr.contains("on 2 of 3 servers"), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(shown)).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
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
        .arg("ADDSLOTSRANGE")
        .arg(0)
        .arg(8000)
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
    // One TLS-only node serving every slot: a whole cluster, as far as a client can tell.
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
        .arg("ADDSLOTSRANGE")
        .arg(0)
        .arg(16383)
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
    let redlock = || {
        let mut cmd = redlock();
        cmd.args(["-s", &url, "--timeout", "2s"]);
        cmd
    };
    let trusted = redlock()
        .args(["--tls-ca", &certs.path("ca.crt"), "acquire", "job"])
        .output()
        .unwrap();
    assert_eq!(trusted.status.code(), Some(0), "{}", stderr_of(&trusted));
    let token: Option<String> = redis::cmd("GET").arg(KEY).query(&mut con).unwrap();
    assert_eq!(token, Some(stdout_of(&trusted)));
    let shown = redlock()
        .args(["--tls-ca", &certs.path("ca.crt"), "status", "job"])
        .output()
        .unwrap();
    let table = stdout_of(&shown);
    assert!(
        table.contains(&format!("(node 127.0.0.1:{}, hash slot ", node.port)),
        "{table}"
    );
    // Without the CA, no node is trusted.
    let untrusted = redlock().args(["acquire", "other"]).output().unwrap();
    assert_eq!(
        untrusted.status.code(),
        Some(69),
        "{}",
        stderr_of(&untrusted)
    );
}
