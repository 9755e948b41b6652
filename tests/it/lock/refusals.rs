//! A refused acquisition writes nothing, also on a server restarted empty that granted it: its
//! key, a shared holder's entry among the readers, a waiter's place in the queue (a semaphore's
//! limit key: semaphore/limit.rs; a latch: latch/refusals.rs).

use crate::support::*;

/// Three servers where a holder has `job` for a minute, and server 2 restarted empty since.
fn held_and_one_restarted() -> (Cluster, String) {
    let mut cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &["--ttl", "60s"]);
    cluster.servers[2].restart();
    (cluster, token)
}

/// Servers 0 and 1 hold only the holder's key; server 2 holds nothing.
fn assert_only_the_holder(cluster: &Cluster, token: &str) {
    for server in &cluster.servers[..2] {
        assert_eq!(server.keys(), vec![KEY.to_string()]);
        assert_eq!(server.get(KEY).as_deref(), Some(token));
    }
    let left = cluster.servers[2].keys();
    assert!(left.is_empty(), "the refused attempt left {left:?}");
}

#[test]
fn a_refused_exclusive_or_shared_attempt_leaves_nothing_where_it_was_granted() {
    let (cluster, token) = held_and_one_restarted();
    for args in [&["acquire", "job"][..], &["acquire", "job", "--shared"][..]] {
        cluster.cmd(args).assert().code(75);
        assert_only_the_holder(&cluster, &token);
    }
}

#[test]
fn a_waiter_that_gives_up_leaves_no_place_in_any_queue() {
    let (cluster, token) = held_and_one_restarted();
    for args in [
        &["acquire", "job", "--wait", "1s"][..],
        &["acquire", "job", "--shared", "--wait", "1s"][..],
    ] {
        cluster.cmd(args).assert().code(75);
        assert_only_the_holder(&cluster, &token);
    }
}
