//! A semaphore's guard rails: it remembers its limit, refuses another `--limit` (64) leaving
//! nothing behind, and `release`/`extend` without `--limit` find a holder's slot, with servers
//! stopped or restarted empty.

use crate::support::*;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const LIMIT_KEY: &str = "redlock:pool\u{1f}slots\u{1f}limit";

/// Every key on `server`, with its value (`<type>` for a key that is not a string).
fn keyspace(server: &Redis) -> BTreeMap<String, String> {
    let mut con = server.connection();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
    keys.into_iter()
        .filter(|key| !is_kept_by_design(key))
        .map(|key| {
            let kind: String = redis::cmd("TYPE").arg(&key).query(&mut con).unwrap();
            let value = match kind.as_str() {
                "string" => redis::cmd("GET").arg(&key).query(&mut con).unwrap(),
                _ => format!("<{kind}>"),
            };
            (key, value)
        })
        .collect()
}

fn keyspaces(cluster: &Cluster, servers: &[usize]) -> Vec<BTreeMap<String, String>> {
    servers
        .iter()
        .map(|&i| keyspace(&cluster.servers[i]))
        .collect()
}

/// `args` exit 64 with one line naming the semaphore's limit and the one given.
fn assert_mismatch(cluster: &Cluster, args: &[&str], slots: usize) {
    cluster.cmd(args).assert().code(64).stderr(
        line_count(1)
            .and(predicate::str::contains(format!(
                "is a semaphore of {slots} slots"
            )))
            .and(predicate::str::contains(format!(
                "expected --limit {slots}"
            ))),
    );
}

#[test]
fn another_limit_exits_64_and_leaves_every_server_as_it_was() {
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("pool", &["--limit", "2", "--ttl", "60s"]);
    let all = [0, 1, 2];
    let before = keyspaces(&cluster, &all);
    assert_eq!(before[0].get(LIMIT_KEY).map(String::as_str), Some("2"));
    for server in &cluster.servers {
        // The limit lives exactly as long as the longest slot (read first: it cannot be less).
        let limit = server.pttl(LIMIT_KEY);
        assert!(limit > 0 && limit >= server.pttl(&slot_of(&before[0], &token)));
    }
    let wait = Duration::from_secs(20);
    let started = Instant::now();
    for args in [
        vec!["acquire", "pool", "--limit", "3"],
        vec!["acquire", "pool", "--limit", "1", "--wait", "20s"],
        vec![
            "exec", "pool", "--limit", "3", "--wait", "20s", "--", "true",
        ],
        vec!["extend", "pool", "--limit", "3", "--token", &token],
        vec!["release", "pool", "--limit", "3", "--token", &token],
        vec!["release", "pool", "--limit", "1", "--force"],
    ] {
        assert_mismatch(&cluster, &args, 2);
    }
    // Waiting cannot change a semaphore's size: nobody waited for the --wait.
    assert!(started.elapsed() < wait, "{:?}", started.elapsed());
    assert_eq!(keyspaces(&cluster, &all), before);
}

/// The key of the slot `token` holds, in one server's keyspace.
fn slot_of(keyspace: &BTreeMap<String, String>, token: &str) -> String {
    keyspace
        .iter()
        .find(|(_, value)| *value == token)
        .map(|(key, _)| key.clone())
        .expect("the token holds a slot")
}

#[test]
fn release_and_extend_without_limit_find_the_slot_and_the_limit_goes_with_the_last() {
    let cluster = Cluster::start(3);
    let first = cluster.acquire_token("pool", &["--limit", "2", "--ttl", "20s"]);
    let second = cluster.acquire_token("pool", &["--limit", "2", "--ttl", "20s"]);
    cluster
        .call(["extend", "pool", "--token", &first, "--ttl", "60s"])
        .succeeds();
    for server in &cluster.servers {
        let limit = server.pttl(LIMIT_KEY);
        let extended = server.pttl(&slot_of(&keyspace(server), &first));
        assert!(extended > 20_000 && limit >= extended, "{limit} {extended}");
    }
    cluster
        .call(["release", "pool", "--token", &first])
        .succeeds();
    // One holder left: its slot and the limit, now as long as that slot.
    for server in &cluster.servers {
        let keys = keyspace(server);
        assert_eq!(keys.len(), 2, "{keys:?}");
        assert_eq!(keys.get(LIMIT_KEY).map(String::as_str), Some("2"));
        let limit = server.pttl(LIMIT_KEY);
        assert!(limit <= 20_000 && limit >= server.pttl(&slot_of(&keys, &second)));
    }
    cluster
        .call(["release", "pool", "--token", &second])
        .succeeds();
    assert_eq!(keyspaces(&cluster, &[0, 1, 2]), vec![BTreeMap::new(); 3]);
    // Now nothing holds it, and that is what a release says.
    cluster
        .call(["release", "pool", "--token", &second])
        .exits(1)
        .stderr_has("not held by this token");
    // With the semaphore gone, another limit is welcome.
    cluster.acquire_token("pool", &["--limit", "3"]);
}

#[test]
fn a_token_of_neither_the_mutex_nor_the_semaphore_is_not_held() {
    let cluster = Cluster::start(3);
    let holder = cluster.acquire_token("pool", &["--limit", "2"]);
    let stranger = "0123456789abcdef0123456789abcdef:elsewhere:1:1";
    for command in ["release", "extend"] {
        cluster
            .call([command, "pool", "--token", stranger])
            .exits(1)
            .stderr_has("not held by this token");
    }
    assert_eq!(
        cluster.holding(&slot_of(&keyspace(&cluster.servers[0]), &holder), &holder),
        3
    );
}

#[test]
fn with_a_server_stopped_another_limit_is_refused_and_release_finds_the_slot() {
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("pool", &["--limit", "2", "--ttl", "60s"]);
    let live = [0, 1];
    let before = keyspaces(&cluster, &live);
    cluster.servers[2].stop();
    assert_mismatch(&cluster, &["acquire", "pool", "--limit", "3"], 2);
    assert_eq!(keyspaces(&cluster, &live), before);
    cluster
        .call(["status", "pool"])
        .succeeds()
        .stdout(predicate::str::starts_with("semaphore pool (2 slots): 1 held").trim());
    cluster
        .call(["release", "pool", "--token", &token])
        .succeeds();
    assert_eq!(keyspaces(&cluster, &live), vec![BTreeMap::new(); 2]);
    cluster.servers[2].resume();
}

/// A server restarted empty grants the refused attempt: that grant is withdrawn, and the limit
/// it wrote with it.
#[test]
fn a_refused_limit_withdraws_what_a_restarted_server_granted() {
    let mut cluster = Cluster::start(3);
    cluster.acquire_token("pool", &["--limit", "2", "--ttl", "60s"]);
    let live = [0, 1];
    let before = keyspaces(&cluster, &live);
    cluster.servers[2].kill();
    cluster.servers[2].restart();
    assert_mismatch(&cluster, &["acquire", "pool", "--limit", "3"], 2);
    assert_eq!(keyspaces(&cluster, &live), before);
    assert_eq!(keyspace(&cluster.servers[2]), BTreeMap::new());
}

#[test]
fn status_without_limit_shows_a_semaphore_and_a_mutex_beside_it_with_a_warning() {
    let cluster = Cluster::start(3);
    cluster.acquire_token("pool", &["--limit", "2"]);
    cluster
        .call(["status", "pool"])
        .succeeds()
        .stdout(
            predicate::str::starts_with("semaphore pool (2 slots): 1 held")
                .trim()
                .and(predicate::str::contains("lock pool").not()),
        )
        .stderr(predicate::str::is_empty().trim());
    let document = json(cluster.call(["status", "pool", "--json"]).get_output());
    assert_eq!(document["kind"], "semaphore");
    assert_eq!(document["limit"], 2);
    assert_eq!(document["slots_held"], 1);
    // The mutex of the same name, held at the same time: both shown, and a warning.
    cluster.acquire_token("pool", &[]);
    cluster
        .call(["status", "pool"])
        .succeeds()
        .stdout(
            predicate::str::starts_with("lock pool (key redlock:pool): held by")
                .trim()
                .and(predicate::str::contains(
                    "\n\nsemaphore pool (2 slots): 1 held",
                )),
        )
        .stderr_has("'pool' is held both as a lock and as a semaphore of 2 slots")
        .stderr_lines(1);
    let document = json(cluster.call(["status", "pool", "--json"]).get_output());
    assert_eq!(document["kind"], "lock");
    assert_eq!(document["held"], true);
    assert_eq!(document["semaphore"]["kind"], "semaphore");
    assert_eq!(document["semaphore"]["slots_held"], 1);
    assert_mismatch(&cluster, &["status", "pool", "--limit", "3"], 2);
}
