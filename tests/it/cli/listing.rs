//! `status` and `latch status` on a server shared with an application: over 100,000 other keys,
//! a listing reads the index of the keys redlock set (`<prefix>␟index`, lock/list.rs) instead of
//! walking them all, says so, and `--scan` walks them; the index stays near the number of keys
//! that exist, and a grant whose index cannot be written is a grant as before.

use crate::support::*;

const INDEX: &str = "redlock:\u{1f}index";

/// More keys than a listing walks (lock/list.rs's `INDEXED_ABOVE`, 100,000), set by one script.
fn crowd_with_other_keys(server: &Redis) {
    let _: () = redis::cmd("EVAL")
        .arg("for i = 1, 100100 do redis.call('set', 'app:' .. i, 'x') end")
        .arg(0)
        .query(&mut server.connection())
        .unwrap();
}

/// The names in the first column of a `status` table.
fn listed_names(table: &str) -> Vec<String> {
    table
        .lines()
        .skip(1)
        .take_while(|line| !line.is_empty())
        .map(|line| line.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn a_server_of_over_100000_keys_is_listed_from_the_index_and_scan_walks_it() {
    let cluster = Cluster::start(1);
    let server = &cluster.servers[0];
    cluster.acquire_token("ours", &["--ttl", "60s"]);
    cluster.acquire_token("pool", &["--ttl", "60s", "--limit", "2"]);
    cluster
        .call(["latch", "set", "gate", "--count", "2"])
        .succeeds();
    // Another client's lock (redsync, redis-py): the same layout, but never in the index.
    server.set("redlock:theirs", "their-token");
    crowd_with_other_keys(server);

    let indexed = cluster
        .call(["status"])
        .succeeds()
        .stderr_has("from the index of the keys redlock set there")
        .stderr_has("--scan walks every key");
    assert_eq!(
        listed_names(&indexed.stdout_text()),
        ["ours", "pool"],
        "{}",
        indexed.stdout_text()
    );
    let value = json(cluster.call(["status", "--json"]).get_output());
    assert_eq!(value["indexed"], serde_json::json!([server.url()]));
    assert_eq!(value["latches"][0]["name"], "gate");
    let latches = json(cluster.call(["latch", "status", "--json"]).get_output());
    assert_eq!(latches["indexed"], serde_json::json!([server.url()]));
    assert_eq!(latches["latches"][0]["name"], "gate");

    let walked = cluster
        .call(["status", "--scan", "--timeout", "1s"])
        .succeeds();
    assert_eq!(
        listed_names(&walked.stdout_text()),
        ["ours", "pool", "theirs"],
        "{}",
        walked.stdout_text()
    );
    assert!(
        !walked.stderr_text().contains("index"),
        "{}",
        walked.stderr_text()
    );
    let value = json(
        cluster
            .call(["status", "--scan", "--timeout", "1s", "--json"])
            .get_output(),
    );
    assert_eq!(value["indexed"], serde_json::json!([]));
}

#[test]
fn a_small_server_is_walked_and_finds_every_client_s_locks() {
    let cluster = Cluster::start(1);
    cluster.acquire_token("ours", &["--ttl", "60s"]);
    cluster.servers[0].set("redlock:theirs", "their-token");
    cluster.servers[0].reset_stats();
    let listed = cluster.call(["status"]).succeeds();
    assert_eq!(listed_names(&listed.stdout_text()), ["ours", "theirs"]);
    // Its size, asked once to time the listing, also says it is walked.
    let dbsize = cluster.servers[0].command_calls().get("dbsize").copied();
    assert_eq!(dbsize, Some(1));
    assert!(
        !listed.stderr_text().contains("index"),
        "{}",
        listed.stderr_text()
    );
    let value = json(cluster.call(["status", "--json"]).get_output());
    assert_eq!(value["indexed"], serde_json::json!([]));
}

#[test]
fn the_index_stays_near_the_number_of_keys_that_exist() {
    let cluster = Cluster::start(1);
    let server = &cluster.servers[0];
    let size = || -> usize {
        redis::cmd("ZCARD")
            .arg(INDEX)
            .query(&mut server.connection())
            .unwrap()
    };
    let held = cluster.acquire_token("long", &["--ttl", "60s"]);
    for i in 0..30 {
        cluster
            .call(["exec", &format!("job-{i}"), "--", "true"])
            .succeeds();
    }
    // Each grant checks the two entries seen longest ago: the released ones leave, the held
    // one stays. What is left is the held lock and at most the last two runs'.
    let left = size();
    assert!((1..=3).contains(&left), "{left} entries for 1 lock held");
    let entries: Vec<String> = redis::cmd("ZRANGE")
        .arg(INDEX)
        .arg(0)
        .arg(-1)
        .query(&mut server.connection())
        .unwrap();
    assert!(entries.contains(&"redlock:long".to_string()), "{entries:?}");
    assert_eq!(server.get("redlock:long").as_deref(), Some(held.as_str()));
}

#[test]
fn a_grant_whose_index_cannot_be_written_is_a_grant_as_before() {
    let cluster = Cluster::start(3);
    // Another type at the index's key: every write to it fails inside the script.
    for server in &cluster.servers {
        server.set(INDEX, "not a sorted set");
    }
    let token = cluster.acquire_token("job", &["--ttl", "60s"]);
    assert_eq!(cluster.holding("redlock:job", &token), 3);
    cluster.call(["acquire", "job", "--ttl", "60s"]).exits(75);
    cluster
        .call(["release", "job", "--token", &token])
        .succeeds();
    cluster
        .call(["acquire", "job", "--ttl", "60s", "--shared"])
        .succeeds();
    for server in &cluster.servers {
        assert_eq!(server.get(INDEX).as_deref(), Some("not a sorted set"));
    }
}
