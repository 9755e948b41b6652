//! `redlock doctor` against real servers misconfigured the way a user would: each finding's
//! code and severity, and the exit status, from its `--json` document. One server of each kind
//! serves as many checks as it can.

use crate::support::groups::{Group, Passwords};
use crate::support::redis_cluster::RedisCluster;
use crate::support::*;
use serde_json::Value;
use std::time::Duration;

/// What every server of a deployment that keeps its locks is started with.
const PERSISTENT: [&str; 4] = ["--appendonly", "yes", "--appendfsync", "always"];

/// A server that keeps its locks across a restart, with `extra` arguments.
fn persistent(extra: &[&str]) -> Redis {
    Redis::start_with(&[&PERSISTENT[..], extra].concat())
}

/// `redlock -s URL… doctor --json ARGS`: its document and exit status.
fn doctor(urls: &[String], args: &[&str]) -> (Value, i32) {
    let output = one_shot(
        redlock_on(&urls.join(",")),
        [&["doctor", "--json"], args].concat(),
    )
    .assert()
    .get_output()
    .clone();
    (document(&output), output.status.code().unwrap_or(-1))
}

/// Each finding as `(code, severity, server)`, in the order found.
fn findings(document: &Value) -> Vec<(String, String, String)> {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
    document["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| (text(&f["code"]), text(&f["severity"]), text(&f["server"])))
        .collect()
}

/// The codes found, each once, sorted.
fn codes(document: &Value) -> Vec<String> {
    let mut codes: Vec<String> = findings(document).into_iter().map(|f| f.0).collect();
    codes.sort();
    codes.dedup();
    codes
}

/// The message of the first finding with `code`.
fn message(document: &Value, code: &str) -> String {
    document["findings"]
        .as_array()
        .and_then(|all| all.iter().find(|f| f["code"] == code))
        .and_then(|f| f["message"].as_str())
        .unwrap_or_else(|| panic!("no {code} finding in {document}"))
        .to_string()
}

fn url(server: &Redis) -> String {
    server.url()
}

#[test]
fn a_clean_deployment_with_persistence_has_no_finding() {
    let servers: Vec<Redis> = (0..3).map(|_| persistent(&[])).collect();
    let urls: Vec<String> = servers.iter().map(url).collect();
    let (document, code) = doctor(&urls, &["--strict"]);
    assert_eq!(code, 0, "{document}");
    assert_eq!(findings(&document), [], "{document}");
    assert_eq!(
        (document["servers"].as_u64(), document["reachable"].as_u64()),
        (Some(3), Some(3))
    );
    let node = &document["per_server"][0]["nodes"][0];
    assert_eq!(node["role"], "master");
    assert_eq!(node["appendonly"], true);
    assert_eq!(node["appendfsync"], "always");
    assert!(node["run_id"].is_string() && node["clock_offset_ms"].is_number());
    // The same, for people: a table per server and a line that sums it up.
    let text = one_shot(redlock_on(&urls.join(",")), ["doctor"])
        .assert()
        .success();
    let text = stdout_of(text.get_output());
    assert!(
        text.contains("appendonly yes, appendfsync always"),
        "{text}"
    );
    assert!(
        text.ends_with("3 of 3 servers answered (quorum 2): nothing found"),
        "{text}"
    );
}

#[test]
fn one_server_under_several_names_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("redis.sock");
    let shared = persistent(&["--unixsocket", &socket.display().to_string()]);
    let others: Vec<Redis> = (0..2).map(|_| persistent(&[])).collect();
    let port = shared.port;
    let urls = [
        format!("redis://127.0.0.1:{port}"),
        format!("redis://localhost:{port}"),
        format!("unix://{}", socket.display()),
        format!("redis://127.0.0.1:{port}/1"),
        url(&others[0]),
        url(&others[1]),
    ];
    let (document, code) = doctor(&urls, &[]);
    assert_eq!(code, 1, "{document}");
    // Those the address shows first, then the socket, whose run_id shows it.
    let aliases: Vec<(String, String, String)> = [&urls[1], &urls[3], &urls[2]]
        .into_iter()
        .map(|alias| ("same_server".into(), "error".into(), alias.clone()))
        .collect();
    assert_eq!(findings(&document), aliases, "{document}");
    assert!(message(&document, "same_server").contains(&format!(
        "redis://127.0.0.1:{port} and redis://localhost:{port} are one server"
    )));
    // They vote once: three servers, quorum 2, and the aliases are listed as not voting.
    assert_eq!(document["servers"], 3);
    let votes: Vec<bool> = (0..6)
        .map(|i| document["per_server"][i]["votes"].as_bool().unwrap())
        .collect();
    assert_eq!(votes, [true, true, true, false, false, false]);
}

#[test]
fn a_replica_listed_beside_its_master_is_an_error() {
    let master = persistent(&[]);
    let replica = persistent(&["--replicaof", "127.0.0.1", &master.port.to_string()]);
    let other = persistent(&[]);
    let (document, code) = doctor(&[url(&master), url(&replica), url(&other)], &[]);
    assert_eq!(code, 1, "{document}");
    assert_eq!(
        findings(&document),
        [
            ("min_replicas".into(), "warning".into(), url(&master)),
            ("replica".into(), "error".into(), url(&replica)),
        ],
        "{document}"
    );
    let said = message(&document, "replica");
    assert!(
        said.contains(&format!("its master is listed too as {}", url(&master))),
        "{said}"
    );
}

#[test]
fn eviction_is_an_error_and_a_full_server_a_warning() {
    let lru = persistent(&["--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"]);
    let volatile = persistent(&["--maxmemory", "2mb", "--maxmemory-policy", "volatile-lru"]);
    // noeviction, with maxmemory set a little above what it uses now.
    let full = persistent(&[]);
    let used: String = redis::cmd("INFO")
        .arg("memory")
        .query(&mut full.connection())
        .unwrap();
    let used: u64 = used
        .lines()
        .find_map(|line| line.strip_prefix("used_memory:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(used + used / 50)
        .query(&mut full.connection())
        .unwrap();
    let (document, code) = doctor(&[url(&lru), url(&volatile), url(&full)], &[]);
    assert_eq!(code, 1, "{document}");
    assert_eq!(
        findings(&document),
        [
            ("eviction".into(), "error".into(), url(&lru)),
            ("eviction".into(), "error".into(), url(&volatile)),
            ("memory".into(), "warning".into(), url(&full)),
        ],
        "{document}"
    );
    let all = document["findings"].to_string();
    assert!(
        all.contains("volatile-* evicts the keys with a TTL, every lock key, first"),
        "{all}"
    );
}

#[test]
fn persistence_is_checked_against_the_longest_ttl() {
    let always = persistent(&[]);
    let everysec = Redis::start_with(&["--appendonly", "yes", "--appendfsync", "everysec"]);
    let none = Redis::start();
    let urls = [url(&always), url(&everysec), url(&none)];
    let (document, code) = doctor(&urls, &["--ttl", "1h"]);
    assert_eq!(code, 0, "warnings only: {document}");
    assert_eq!(
        findings(&document),
        [
            ("appendfsync".into(), "warning".into(), url(&everysec)),
            ("restarted".into(), "warning".into(), url(&none)),
        ],
        "{document}"
    );
    // --strict: every warning is an error.
    let (strict, code) = doctor(&urls, &["--ttl", "1h", "--strict"]);
    assert_eq!(code, 1, "{strict}");
    assert!(findings(&strict).iter().all(|f| f.1 == "error"), "{strict}");
    // Up longer than the TTL: no longer just restarted, but without persistence all the same.
    wait_for("a second of uptime", Duration::from_secs(5), || {
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query(&mut none.connection())
            .unwrap();
        !info.contains("uptime_in_seconds:0\r")
    });
    let (document, _) = doctor(&urls, &["--ttl", "1s"]);
    assert_eq!(
        codes(&document),
        ["appendfsync", "no_persistence"],
        "{document}"
    );
}

/// README's ACL recipe, as a server of this version takes it (Redis 6.0 has no channel
/// permissions), for a user `name` with `password`, without `-command` and with `+extra`.
pub fn recipe_user(server: &Redis, name: &str, without: &[&str], extra: &[&str]) {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let line = readme
        .lines()
        .find(|line| line.starts_with("ACL SETUSER redlock on >PASSWORD"))
        .expect("README's ACL recipe");
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut server.connection())
        .unwrap();
    let channels = !info.contains("redis_version:6.0.");
    let mut setuser = redis::cmd("ACL");
    for word in line.split_whitespace().skip(1) {
        let word = match word {
            "redlock" => name,
            ">PASSWORD" => ">pw",
            "resetchannels" | "&redlock:*" if !channels => continue,
            word if without.iter().any(|w| word == format!("+{w}")) => continue,
            word => word,
        };
        setuser.arg(word);
    }
    for word in extra {
        setuser.arg(format!("+{word}"));
    }
    let _: () = setuser.query(&mut server.connection()).unwrap();
}

/// Whether the server has `ACL DRYRUN` (Redis 7.0 and later).
fn has_dry_run(server: &Redis) -> bool {
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut server.connection())
        .unwrap();
    !info.contains("redis_version:6.")
}

#[test]
fn a_command_the_acl_refuses_is_found() {
    let server = persistent(&[]);
    recipe_user(&server, "nozpop", &["zpopmin"], &[]);
    // ACL DRYRUN where the server has it (and the user may run it), else the probe.
    recipe_user(&server, "nopublish", &["publish"], &["acl|dryrun"]);
    let as_user = |user: &str| vec![format!("redis://{user}:pw@127.0.0.1:{}", server.port)];

    let (document, code) = doctor(&as_user("nozpop"), &[]);
    assert_eq!(code, 1, "{document}");
    assert_eq!(
        codes(&document),
        ["denied", "server_count", "unchecked"],
        "{document}"
    );
    let denied = message(&document, "denied");
    assert!(denied.contains("ZPOPMIN (for every release"), "{denied}");
    assert!(
        denied.contains("ACL SETUSER nozpop resetkeys ~redlock:*"),
        "{denied}"
    );
    assert!(!denied.contains(":pw@"), "{denied}");
    assert_eq!(document["per_server"][0]["access"], "a probe");
    assert_eq!(
        document["per_server"][0]["refused"],
        serde_json::json!(["zpopmin"])
    );
    // It could not read INFO as this user: unchecked, not guessed.
    assert!(document["per_server"][0]["nodes"][0]["appendonly"].is_null());
    assert!(
        server.keys().is_empty(),
        "the probe left {:?}",
        server.keys()
    );

    let (document, code) = doctor(&as_user("nopublish"), &[]);
    assert_eq!(code, 0, "warnings only: {document}");
    assert_eq!(
        codes(&document),
        ["notifications", "server_count", "unchecked"],
        "{document}"
    );
    let how = if has_dry_run(&server) {
        "ACL DRYRUN"
    } else {
        "a probe"
    };
    assert_eq!(document["per_server"][0]["access"], how, "{document}");
    assert!(
        server.keys().is_empty(),
        "the probe left {:?}",
        server.keys()
    );
}

#[test]
fn a_renamed_publish_is_a_notifications_warning() {
    let server = persistent(&["--rename-command", "PUBLISH", ""]);
    let (document, code) = doctor(&[url(&server)], &[]);
    assert_eq!(code, 0, "{document}");
    assert_eq!(
        codes(&document),
        ["notifications", "server_count"],
        "{document}"
    );
    assert!(message(&document, "notifications").contains("PUBLISH"));
}

#[test]
fn too_few_servers_answering_exits_69() {
    let server = persistent(&[]);
    let down = [
        format!("redis://127.0.0.1:{}", free_port()),
        format!("redis://127.0.0.1:{}", free_port()),
    ];
    let (document, code) = doctor(&[url(&server), down[0].clone(), down[1].clone()], &[]);
    assert_eq!(code, 69, "{document}");
    assert_eq!(
        findings(&document),
        [
            ("unreachable".into(), "warning".into(), down[0].clone()),
            ("unreachable".into(), "warning".into(), down[1].clone()),
            ("no_quorum".into(), "error".into(), String::new()),
        ],
        "{document}"
    );
    assert!(document["findings"][2]["server"].is_null());
}

#[test]
fn a_sentinel_group_is_checked_through_to_its_master_and_its_sentinels() {
    let mut groups = Group::start_many(1, Passwords::default());
    let group = &mut groups[0];
    let others: Vec<Redis> = (0..2).map(|_| persistent(&[])).collect();
    let sentinel_url = group.url();
    // The group, and its master under a plain URL: one server, found by its run_id.
    let master = group.nodes[0].url();
    let urls = [
        sentinel_url.clone(),
        url(&others[0]),
        url(&others[1]),
        master.clone(),
    ];
    let (document, code) = doctor(&urls, &[]);
    assert_eq!(code, 1, "{document}");
    assert!(findings(&document).contains(&("same_server".into(), "error".into(), master)));
    let checked = &document["per_server"][0];
    assert_eq!(
        checked["master"],
        format!("127.0.0.1:{}", group.nodes[0].port)
    );
    assert!(
        checked["sentinels"].as_str().unwrap().contains("OK"),
        "{checked}"
    );

    // Two of its three sentinels gone: the last cannot authorise a failover.
    group.sentinels[0].kill();
    group.sentinels[1].kill();
    wait_for(
        "the last sentinel to lose its quorum",
        Duration::from_secs(20),
        || {
            let said: redis::RedisResult<String> = redis::cmd("SENTINEL")
                .arg("CKQUORUM")
                .arg(&group.name)
                .query(&mut group.sentinels[2].connection(None));
            said.is_err()
        },
    );
    let urls = [sentinel_url, url(&others[0]), url(&others[1])];
    let (document, code) = doctor(&urls, &[]);
    assert_eq!(code, 0, "{document}");
    assert!(
        codes(&document).contains(&"sentinel_quorum".to_string()),
        "{document}"
    );

    // Its master down too, and nobody to fail it over: the group cannot be reached.
    group.nodes[0].kill();
    let (document, code) = doctor(&urls, &[]);
    assert_eq!(code, 0, "two of three still answer: {document}");
    assert_eq!(
        findings(&document)[0],
        ("unreachable".into(), "warning".into(), urls[0].clone())
    );
    assert_eq!(document["reachable"], 2);
}

#[test]
fn a_cluster_is_checked_node_by_node_and_a_slot_uncovered_is_a_warning() {
    let cluster = RedisCluster::start();
    let url = cluster.url_via(cluster.nodes[0].port);
    let (document, code) = doctor(std::slice::from_ref(&url), &["--ttl", "1ms"]);
    assert_eq!(code, 0, "{document}");
    let nodes = document["per_server"][0]["nodes"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(nodes.len(), 3, "each master: {document}");
    assert!(nodes
        .iter()
        .all(|n| n["cluster_state"] == "ok" && n["role"] == "master"));
    assert!(!codes(&document).contains(&"cluster_state".to_string()));

    // Slot 0 taken from its master: the cluster's state is no longer ok.
    let owner = cluster.masters()[0];
    let _: () = redis::cmd("CLUSTER")
        .arg("DELSLOTS")
        .arg(0)
        .query(&mut owner.connection())
        .unwrap();
    wait_for(
        "the cluster to see slot 0 uncovered",
        Duration::from_secs(20),
        || {
            let info: String = redis::cmd("CLUSTER")
                .arg("INFO")
                .query(&mut owner.connection())
                .unwrap();
            info.contains("cluster_state:fail")
        },
    );
    let (document, _) = doctor(&[url], &["--ttl", "1ms"]);
    assert!(
        codes(&document).contains(&"cluster_state".to_string()),
        "{document}"
    );
}

#[test]
fn the_readme_acl_runs_every_feature() {
    let server = persistent(&[]);
    recipe_user(&server, "redlock", &[], &[]);
    let url = format!("redis://redlock:pw@127.0.0.1:{}", server.port);
    let run = |args: &[&str]| one_shot(redlock_on(&url), args).assert();
    let acquired = run(&["acquire", "job", "--fence"]).success();
    let token = stdout_of(acquired.get_output())
        .lines()
        .next()
        .unwrap()
        .to_string();
    // A waiter, woken by the release: a queue, its channel, the hand-over.
    let waiter = Cmd::new(redlock_on(&url))
        .args(["acquire", "job", "--wait", "30s", "--retry-delay", "20s"])
        .spawn();
    wait_for("the waiter to queue", Duration::from_secs(10), || {
        server.keys().iter().any(|key| key.ends_with("\u{1f}queue"))
    });
    run(&["extend", "job", "--token", &token, "--ttl", "1m"]).success();
    run(&["release", "job", "--token", &token]).success();
    let woken = waiter.wait();
    assert_eq!(woken.status.code(), Some(0), "{}", stderr_of(&woken));
    run(&[
        "release",
        "job",
        "--token",
        &stdout_of(&woken),
        "--hold-at-least",
        "1m",
    ])
    .success();
    for args in [
        &["acquire", "pool", "--limit", "2"][..],
        &["acquire", "reads", "--shared"],
        &["status", "job"],
        &["status", "pool"],
        &["status"],
        &["exec", "work", "--", "true"],
        &["latch", "set", "etl", "--count", "1"],
        &["latch", "done", "etl", "--id", "a"],
        &["latch", "wait", "etl", "--wait", "1s"],
        &["latch", "status"],
        &["release", "job", "--force"],
    ] {
        run(args).success();
    }
    // doctor: everything allowed; only INFO, which the recipe leaves out, is not.
    let (document, code) = doctor(std::slice::from_ref(&url), &[]);
    assert_eq!(code, 0, "{document}");
    assert_eq!(
        codes(&document),
        ["server_count", "unchecked"],
        "{document}"
    );
    assert_eq!(document["per_server"][0]["refused"], serde_json::json!([]));
}
