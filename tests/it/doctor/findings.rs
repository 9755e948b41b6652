//! `redlock doctor` against real servers misconfigured the way a user would: each finding's
//! code and severity, and the exit status, from its `--json` document. One server of each kind
//! serves as many checks as it can. Sentinel groups and clusters are in `doctor::groups`, ACL
//! users in `servers::acl`, servers set up wrong in the ordinary ways in `doctor::misconfigured`.

use crate::support::deployments::*;
use crate::support::*;
use std::time::Duration;

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
