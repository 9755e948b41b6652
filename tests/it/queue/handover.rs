//! The hand-over from a release to the queued waiter it wakes: acted on at once whatever attempt
//! the waiter is at, on the connections it already listens on, also with a server stopped; and
//! the head of the queue keeps its place while its take-over is slow (after a release or an
//! expiry), so a later waiter or reader does not pass it.

use crate::support::proxy::{Fault, Proxy};
use crate::support::waiters::*;
use crate::support::*;
use std::time::Duration;

/// Releases `holder` and asserts the waiter took the lock well within the shortest pause of
/// its own, without a connection more than the release's on any server of `live`.
fn assert_woken_at_once(cluster: &Cluster, watch: &mut Watch, live: &[usize], mut waiter: Running) {
    let accepted: Vec<u64> = live.iter().map(|&i| watch.accepted(i)).collect();
    cluster
        .call(["release", "job", "--token", "holder"])
        .succeeds();
    // Its own pause is 10–30 s: only the wake-up explains a win within a quarter of that.
    wait_for(
        "the woken waiter to take the lock",
        WAITER_RETRY_DELAY / 4,
        || waiter.try_wait().is_some(),
    );
    let output = waiter.wait();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    for (&index, before) in live.iter().zip(accepted) {
        assert_eq!(
            watch.accepted(index) - before,
            1,
            "server {index}: the release's connection and no other (the waiter asked on those \
             it listened on)"
        );
    }
    let token = stdout_of(&output);
    let holding = live
        .iter()
        .filter(|&&i| watch.value(i).as_deref() == Some(token.as_str()))
        .count();
    assert!(
        holding > cluster.servers.len() / 2,
        "{holding} servers hold it"
    );
}

#[test]
fn a_waiter_past_its_first_attempts_is_woken_at_once_on_the_connections_it_listens_on() {
    let cluster = Cluster::start(3);
    let mut watch = Watch::new(&cluster);
    let live = [0, 1, 2];
    let waiter = past_first_attempts(&mut watch, &live, || spawn_waiter(&cluster, &[]));
    assert_woken_at_once(&cluster, &mut watch, &live, waiter);
}

#[test]
fn the_hand_over_works_with_one_of_five_servers_stopped() {
    let cluster = Cluster::start(5);
    let mut watch = Watch::new(&cluster);
    watch.each(&[4], &holder_key(Duration::from_secs(60)));
    cluster.servers[4].stop();
    let live = [0, 1, 2, 3];
    let waiter = past_first_attempts(&mut watch, &live, || spawn_waiter(&cluster, &[]));
    assert_woken_at_once(&cluster, &mut watch, &live, waiter);
    cluster.servers[4].resume();
}

/// The `--timeout` of the slow head's tests: each way through its proxies takes `SLOW_WAY`,
/// so its take-over reaches the servers later than half this after the hand-over (the
/// reservation a release used to leave), while its round trip stays within it.
const SLOW_TIMEOUT: Duration = Duration::from_secs(1);
const SLOW_WAY: Duration = Duration::from_millis(350);

/// A head `head_args` (an exclusive acquire) that reaches every server `SLOW_WAY` late each
/// way, through a delay proxy, queued first, and a follower `follower_args` queued behind it
/// that asks every few ms; then `free` frees the lock. The head must take it, the follower
/// must still wait.
fn the_slow_head_goes_first(
    cluster: &Cluster,
    (head_args, follower_args): (&[&str], &[&str]),
    free: impl FnOnce(&mut Watch),
) {
    let mut watch = Watch::new(cluster);
    let all: Vec<usize> = (0..cluster.servers.len()).collect();
    let proxies: Vec<Proxy> = cluster
        .servers
        .iter()
        .map(|s| Proxy::start(s.port))
        .collect();
    for proxy in &proxies {
        proxy.set(Fault::Delay(SLOW_WAY));
    }
    let urls: Vec<String> = proxies
        .iter()
        .map(|p| format!("redis://127.0.0.1:{}", p.port))
        .collect();
    let timeout = format!("{}ms", SLOW_TIMEOUT.as_millis());
    let mut head = Cmd::new(redlock_on(&urls.join(",")))
        .args(head_args)
        .args([
            "--wait",
            "30s",
            "--retry-delay",
            "20s",
            "--timeout",
            &timeout,
        ])
        .spawn();
    watch.wait_for_waiters(&all, 1);
    let mut follower = cluster
        .redlock()
        .args(follower_args)
        .args([
            "--wait",
            "30s",
            "--retry-delay",
            "20ms",
            "--timeout",
            &timeout,
        ])
        .spawn();
    watch.wait_for_waiters(&all, 2);
    free(&mut watch);
    wait_for(
        "one of them to take the lock",
        Duration::from_secs(20),
        || head.try_wait().is_some() || follower.try_wait().is_some(),
    );
    assert!(
        follower.try_wait().is_none(),
        "the follower passed the head: {}",
        stdout_of(&follower.wait())
    );
    let output = head.wait();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let token = stdout_of(&output);
    let holding = cluster.holding(KEY, &token);
    assert!(
        holding > all.len() / 2,
        "{holding} servers hold the head's token"
    );
    follower.kill();
}

/// Three servers on which `job` is held by the token `holder`, and an exclusive acquire.
fn held() -> (Cluster, [&'static str; 4]) {
    let cluster = Cluster::start(3);
    cluster.servers.iter().for_each(|s| s.set(KEY, "holder"));
    (cluster, ["acquire", "job", "--ttl", "60s"])
}

#[test]
fn a_head_whose_take_over_is_slow_keeps_its_place() {
    let (cluster, acquire) = held();
    the_slow_head_goes_first(&cluster, (&acquire, &acquire), |_| {
        let timeout = format!("{}ms", SLOW_TIMEOUT.as_millis());
        cluster
            .call(["release", "job", "--token", "holder", "--timeout", &timeout])
            .succeeds();
    });
}

#[test]
fn a_lock_that_expires_goes_to_the_head_not_to_a_later_waiter() {
    let (cluster, acquire) = held();
    // The holder's key goes as an expiry does: nobody is told.
    the_slow_head_goes_first(&cluster, (&acquire, &acquire), |watch| {
        watch.each(&[0, 1, 2], redis::cmd("DEL").arg(KEY));
    });
}

#[test]
fn a_waiting_writer_whose_take_over_is_slow_goes_before_a_later_reader() {
    let cluster = Cluster::start(3);
    let reader = cluster.acquire_token("job", &["--shared", "--ttl", "60s"]);
    let writer = ["acquire", "job", "--ttl", "60s"];
    let later_reader = ["acquire", "job", "--shared", "--ttl", "60s"];
    the_slow_head_goes_first(&cluster, (&writer, &later_reader), |_| {
        let timeout = format!("{}ms", SLOW_TIMEOUT.as_millis());
        cluster
            .call([
                "release",
                "job",
                "--shared",
                "--token",
                &reader,
                "--timeout",
                &timeout,
            ])
            .succeeds();
    });
}
