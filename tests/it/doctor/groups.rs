//! `redlock doctor` through a Sentinel group to its master and sentinels, and through a Redis
//! Cluster to each of its masters.

use crate::support::deployments::*;
use crate::support::groups::{Group, Passwords};
use crate::support::redis_cluster::RedisCluster;
use crate::support::*;
use std::time::Duration;

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
    // Still with too few sentinels, said whether its master answers or not.
    let about_it: Vec<(String, String, String)> = findings(&document)
        .into_iter()
        .filter(|f| f.2 == urls[0])
        .collect();
    let expected = |code: &str| (code.to_string(), "warning".to_string(), urls[0].clone());
    assert_eq!(
        about_it,
        [expected("sentinel_quorum"), expected("unreachable")]
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
