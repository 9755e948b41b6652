//! A lock held on only some servers, or by another client's key type: what release, extend and
//! status do there, and that what they say matches what they did.

use crate::support::*;
use std::time::{Duration, Instant};

const TOKEN: &str = "0123456789abcdef0123456789abcdef:host:1:1";

/// The TTL `held_on` gives the key.
const HELD_FOR: Duration = Duration::from_secs(10);

/// Our token at the lock's key, with a `HELD_FOR` TTL, on the servers of `on` only.
fn held_on(cluster: &Cluster, on: &[usize]) {
    for &index in on {
        let _: () = redis::cmd("SET")
            .arg(KEY)
            .arg(TOKEN)
            .arg("PX")
            .arg(HELD_FOR.as_millis() as u64)
            .query(&mut cluster.servers[index].connection())
            .unwrap();
    }
}

#[test]
fn release_with_another_server_down_says_what_each_server_did() {
    let mut cluster = Cluster::start(3);
    // Taken while server 3 was down, released while server 1 is.
    held_on(&cluster, &[0, 1]);
    cluster.servers[0].kill();
    cluster
        .call(["release", "job", "--token", TOKEN])
        .exits(69)
        .stderr(
            predicate::str::contains("deleted on 1, not held by this token on 1, no answer from 1")
                .and(predicate::str::contains("connection refused"))
                .and(predicate::str::contains("servers answered").not()),
        );
    assert_eq!(cluster.servers[1].get(KEY), None);
}

#[test]
fn a_release_held_on_a_minority_deletes_that_copy_and_says_so() {
    let cluster = Cluster::start(3);
    held_on(&cluster, &[0]);
    cluster
        .call(["release", "job", "--token", TOKEN])
        .exits(1)
        .stderr(
            predicate::str::contains("not held by this token on a quorum")
                .and(predicate::str::contains("deleted on the 1 of 3")),
        );
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
}

#[test]
fn an_extend_held_on_a_minority_puts_the_ttl_back_and_says_so() {
    let cluster = Cluster::start(3);
    let held = Instant::now();
    held_on(&cluster, &[0]);
    cluster
        .call(["extend", "job", "--token", TOKEN, "--ttl", "60s"])
        .exits(1)
        .stderr(
            predicate::str::contains("extended on the 1 of 3")
                .and(predicate::str::contains("put back on 1 of them"))
                .and(predicate::str::contains("nothing was extended").not()),
        );
    // Not the 60 s the failed extension asked for: what the holder had, less time passed.
    assert_left("pttl", cluster.servers[0].pttl(KEY) as u64, HELD_FOR, held);
    assert_eq!(cluster.servers[0].get(KEY).as_deref(), Some(TOKEN));
}

/// `status` in all three views: `status job` (table, JSON) and the list (table, JSON).
fn status_views(cluster: &Cluster) -> (i32, String, serde_json::Value, String, serde_json::Value) {
    let status = |args: &[&str]| {
        let shown = cluster.cmd([&["status"], args].concat()).assert();
        shown.get_output().clone()
    };
    let table = status(&["job"]);
    (
        table.status.code().unwrap(),
        stdout_of(&table),
        document(&status(&["job", "--json"])),
        stdout_of(&status(&[])),
        document(&status(&["--json"]))["locks"][0].clone(),
    )
}

#[test]
fn a_lock_on_a_minority_is_partial_in_every_status_view() {
    let cluster = Cluster::start(3);
    held_on(&cluster, &[1]);
    let (code, table, json, list, list_json) = status_views(&cluster);
    assert_eq!(code, 1, "{table}");
    assert!(
        table.contains("partial: not held; the key is on 1 of 3"),
        "{table}"
    );
    assert!(
        !table.contains("free") && !table.contains("other"),
        "{table}"
    );
    assert_eq!(json["state"], "partial");
    assert_eq!(json["held"], false);
    let row = list.lines().nth(1).unwrap();
    assert!(row.contains("partial") && row.contains("1/3"), "{list}");
    assert_eq!(list_json["state"], "partial");
    assert_eq!(list_json["servers_holding"], 1);
}

#[test]
fn a_redisson_hash_on_every_server_is_held_by_a_non_redlock_client() {
    let cluster = Cluster::start(3);
    for server in &cluster.servers {
        // Redisson's RLock: a hash of holder id to re-entry count, with a TTL.
        let _: () = redis::pipe()
            .cmd("HSET")
            .arg(KEY)
            .arg("6f1c6a9e-0b1e-4d8e-9a51-3f7b3c1d2e4f:1")
            .arg(1)
            .cmd("PEXPIRE")
            .arg(KEY)
            .arg(30_000)
            .query(&mut server.connection())
            .unwrap();
    }
    let (code, table, json, list, list_json) = status_views(&cluster);
    assert_eq!(code, 0, "{table}");
    assert!(
        table.contains("held by a non-redlock client (hash), on 3 of 3 servers"),
        "{table}"
    );
    assert_eq!(json["state"], "held");
    assert_eq!(json["held"], true);
    assert_eq!(json["foreign_type"], "hash");
    assert!(
        list.lines()
            .nth(1)
            .unwrap()
            .contains("a non-redlock client (hash)"),
        "{list}"
    );
    assert_eq!(list_json["state"], "held");
    cluster
        .call(["acquire", "job"])
        .exits(75)
        .stderr(predicate::str::contains(
            "held by a non-redlock client (hash)",
        ));
}

#[test]
fn an_extend_that_cannot_reach_a_quorum_puts_the_ttl_back_too() {
    let mut cluster = Cluster::start(3);
    let held = Instant::now();
    held_on(&cluster, &[0]);
    cluster.servers[1].kill();
    cluster.servers[2].kill();
    cluster
        .call(["extend", "job", "--token", TOKEN, "--ttl", "60s"])
        .exits(69)
        .stderr(
            predicate::str::contains("1 of 3 servers answered")
                .and(predicate::str::contains("extended on 1 (put back on 1)")),
        );
    assert_left("pttl", cluster.servers[0].pttl(KEY) as u64, HELD_FOR, held);
}
