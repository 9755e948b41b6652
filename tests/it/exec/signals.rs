//! A signal to a redlock that is acquiring or waiting: it stops at once with 128 + N, gives
//! back what its attempt took, holds no one up and leaves nothing queued.

use crate::support::waiters::subscribers;
use crate::support::*;
use std::time::Duration;

#[test]
fn a_signal_while_waiting_stops_cleanly() {
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &[]);
    cluster.servers[0].reset_stats();
    let child = cluster.spawn(&["acquire", "job", "--wait", "60s", "--retry-delay", "50ms"]);
    // Waiting means at least one refused attempt; let it make a few.
    wait_for("a few refused attempts", SLACK, || {
        let calls = cluster.servers[0].command_calls();
        let scripts = calls.get("evalsha").unwrap_or(&0) + calls.get("eval").unwrap_or(&0);
        blocks_sigterm(child.id()) && scripts >= 3
    });
    signal(child.id() as i32, libc::SIGTERM);
    let output = child.wait();
    assert_eq!(output.status.code(), Some(143), "{}", stderr_of(&output));
    assert_eq!(cluster.holding(KEY, &token), 3);
}

#[test]
fn a_signal_stops_a_waiting_exec_while_it_listens_and_nothing_is_queued() {
    // A waiter on plain servers listens on its attempts' own connections and polls a signalfd
    // beside them, with no thread: the signal must still end the wait at once.
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &["--ttl", "60s"]);
    let child = cluster.spawn(&["exec", "job", "--wait", "60s", "--", "true"]);
    wait_for("the waiter to listen everywhere", SLACK, || {
        blocks_sigterm(child.id()) && subscribers(&cluster) == 3
    });
    signal(child.id() as i32, libc::SIGINT);
    let output = child.finish(SLACK);
    assert_eq!(output.status.code(), Some(130), "{}", stderr_of(&output));
    assert_eq!(cluster.holding(KEY, &token), 3);
    for server in &cluster.servers {
        let queued: Vec<String> = redis::cmd("KEYS")
            .arg("*queue*")
            .query(&mut server.connection())
            .unwrap();
        assert_eq!(queued, Vec::<String>::new(), "{}", server.url());
    }
}

#[test]
fn a_signal_during_a_single_attempt_gives_the_lock_back() {
    let cluster = Cluster::start(1);
    // A stopped server holds the attempt open until it is resumed.
    cluster.servers[0].stop();
    let child = cluster.spawn(&["acquire", "job", "--timeout", "10s"]);
    wait_for("redlock to block SIGTERM", Duration::from_secs(5), || {
        blocks_sigterm(child.id())
    });
    // Pending while the attempt runs: the attempt succeeds, then the signal is seen.
    signal(child.id() as i32, libc::SIGTERM);
    cluster.servers[0].resume();
    let output = child.wait();
    assert_eq!(output.status.code(), Some(143), "{}", stderr_of(&output));
    assert_eq!(
        stdout_of(&output),
        "",
        "a token nobody will use was printed"
    );
    assert_eq!(cluster.values(KEY), vec![None]);
}

/// True once process `pid` blocks SIGTERM: it has started and its signals wait for it.
fn blocks_sigterm(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigBlk:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (libc::SIGTERM - 1)) != 0)
}
