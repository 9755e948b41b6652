//! The queue of waiters keeps nothing it should not: a winner leaves it on every server (also
//! where it was refused), a waiter that gives up leaves it, a crowd leaves no key behind, a
//! release wakes a whole batch of shared waiters at the head and only them, and `status` lists
//! who waits, in order.

use crate::support::waiters::{release_holder, spawn_waiter, spawn_workers, subscribers};
use crate::support::*;
use std::time::Duration;

const QUEUE: &str = "redlock:job\u{1f}queue";

fn queued(server: &Redis) -> Vec<String> {
    redis::cmd("ZRANGE")
        .arg(QUEUE)
        .arg(0)
        .arg(-1)
        .query(&mut server.connection())
        .unwrap()
}

#[test]
fn a_winner_refused_on_a_minority_server_leaves_the_queue_there_too() {
    let cluster = Cluster::start(3);
    let holder = cluster.acquire_token("job", &["--ttl", "60s"]);
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let waiter = cluster.spawn(&[
        "exec",
        "job",
        "--wait",
        "30s",
        "--retry-delay",
        "20s",
        "--",
        "sh",
        "-c",
        &format!("touch '{}'; sleep 2", started.display()),
    ]);
    wait_for(
        "the waiter to listen everywhere",
        Duration::from_secs(10),
        || subscribers(&cluster) == 3,
    );
    for server in &cluster.servers {
        assert_eq!(queued(server).len(), 1, "the waiter queued on every server");
    }
    // Server C is now held by another client, so the waiter's take-over is refused there (and
    // it stays in C's queue) while A and B hand the lock over to it.
    let c = &cluster.servers[2];
    let _: () = redis::cmd("SET")
        .arg(KEY)
        .arg("someone-else")
        .arg("PX")
        .arg(60_000)
        .query(&mut c.connection())
        .unwrap();
    release_holder(&cluster, &holder);
    wait_for(
        "the waiter's command to start",
        Duration::from_secs(10),
        || started.exists(),
    );
    for server in &cluster.servers {
        assert_eq!(queued(server), Vec::<String>::new(), "{}", server.url());
    }
    let output = waiter.finish(Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
}

#[test]
fn a_waiter_that_gives_up_leaves_the_queue_on_every_server() {
    let cluster = Cluster::start(3);
    let _holder = cluster.acquire_token("job", &["--ttl", "60s"]);
    let waiter = spawn_waiter(&cluster, &["--wait", "1s", "--retry-delay", "200ms"]);
    let output = waiter.finish(Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(75), "{}", stderr_of(&output));
    for server in &cluster.servers {
        assert_eq!(queued(server), Vec::<String>::new(), "{}", server.url());
    }
    wait_for(
        "the waiter's listeners to close",
        Duration::from_secs(5),
        || subscribers(&cluster) == 0,
    );
}

#[test]
fn a_crowd_of_waiters_leaves_nothing_on_any_server() {
    let cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    let script = r#"for i in 1 2 3; do
          "$REDLOCK" exec job --wait "$WAIT" -- true || exit 1
        done"#;
    let wait = Duration::from_secs(120);
    let workers = spawn_workers(&cluster, (12, 3, wait), script, dir.path(), &[]);
    for worker in workers {
        let output = worker.wait();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    // The last section's release found nobody queued and deleted the key: no reservation
    // (`next:<waiter>`), no queue, nothing at all, the moment the last worker is gone.
    for server in &cluster.servers {
        let left: Vec<String> = server
            .keys()
            .into_iter()
            .filter(|key| !is_kept_by_design(key))
            .collect();
        let values: Vec<(Option<String>, i64)> = left
            .iter()
            .map(|key| (server.get(key), server.pttl(key)))
            .collect();
        assert_eq!(left, Vec::<String>::new(), "{}: {values:?}", server.url());
    }
    wait_for("every listener to close", Duration::from_secs(5), || {
        subscribers(&cluster) == 0
    });
}

/// A subscriber on `channel` of every server, and how many messages each got.
struct Listener {
    pubsubs: Vec<redis::Connection>,
}

impl Listener {
    fn start(cluster: &Cluster, channel: &str) -> Listener {
        let pubsubs = cluster
            .servers
            .iter()
            .map(|server| {
                let mut connection = server.connection();
                let subscribe = redis::cmd("SUBSCRIBE").arg(channel).get_packed_command();
                connection.send_packed_command(&subscribe).unwrap();
                // The confirmation: from here on nothing published on `channel` is missed.
                connection.recv_response().unwrap();
                connection
            })
            .collect();
        Listener { pubsubs }
    }

    /// The payload each server sent within `limit`, if any.
    fn heard(&mut self, limit: Duration) -> Vec<Option<String>> {
        self.pubsubs
            .iter_mut()
            .map(|connection| {
                connection.set_read_timeout(Some(limit)).unwrap();
                let message: Vec<String> =
                    redis::from_redis_value(connection.recv_response().ok()?).ok()?;
                message.get(2).cloned()
            })
            .collect()
    }
}

#[test]
fn a_release_wakes_the_batch_of_shared_waiters_at_the_head_and_only_them() {
    let cluster = Cluster::start(3);
    let holder = cluster.acquire_token("job", &["--ttl", "60s"]);
    // The queue as shared waiters (entries marked `r:`) and an exclusive one behind them leave
    // it: two live readers, a dead one between them (nobody listens), then a writer.
    let entries = ["r:reader-1", "r:dead-reader", "r:reader-2", "writer-3"];
    for server in &cluster.servers {
        for (score, entry) in entries.iter().enumerate() {
            let _: i64 = redis::cmd("ZADD")
                .arg(QUEUE)
                .arg(score + 1)
                .arg(*entry)
                .query(&mut server.connection())
                .unwrap();
        }
    }
    let channel = |entry: &str| format!("redlock:job\u{1f}wake\u{1f}{entry}");
    let mut readers = [
        Listener::start(&cluster, &channel("r:reader-1")),
        Listener::start(&cluster, &channel("r:reader-2")),
    ];
    let mut writer = Listener::start(&cluster, &channel("writer-3"));
    // A long --timeout, so that the reservation (twice it) outlasts the checks below on a
    // loaded machine.
    let timeout = Duration::from_secs(10);
    cluster
        .call(["release", "job", "--token", &holder, "--timeout", "10s"])
        .succeeds();
    for server in &cluster.servers {
        // The lock is reserved for the batch for twice the --timeout, not for one waiter.
        assert_eq!(server.get(KEY).as_deref(), Some("next:readers"));
        assert!(server.pttl(KEY) <= (timeout * 2).as_millis() as i64);
        assert_eq!(queued(server), ["writer-3"], "{}", server.url());
    }
    for reader in &mut readers {
        assert_eq!(reader.heard(timeout), vec![Some("go".to_string()); 3]);
    }
    let quiet = Duration::from_millis(300);
    assert_eq!(
        writer.heard(quiet),
        vec![None; 3],
        "the writer is not in the batch"
    );
}

#[test]
fn status_lists_the_waiters_in_the_order_they_queued() {
    let cluster = Cluster::start(3);
    let _holder = cluster.acquire_token("job", &["--ttl", "60s"]);
    let mut waiters = Vec::new();
    for (i, command) in ["sleep 11", "sleep 22"].into_iter().enumerate() {
        let mut args = vec!["exec", "job", "--wait", "60s", "--retry-delay", "30s", "--"];
        args.extend(command.split(' '));
        waiters.push(cluster.spawn(&args));
        wait_for(
            "the waiter to listen everywhere",
            Duration::from_secs(10),
            || subscribers(&cluster) == 3 * (i + 1),
        );
    }
    let status = json(cluster.call(["status", "job", "--json"]).get_output());
    let waiting = status["waiters"].as_array().unwrap();
    let pids: Vec<u64> = waiting.iter().map(|w| w["pid"].as_u64().unwrap()).collect();
    assert_eq!(
        pids,
        waiters
            .iter()
            .map(|w| u64::from(w.id()))
            .collect::<Vec<_>>()
    );
    assert_eq!(waiting[0]["command"], "sleep 11");
    assert_eq!(waiting[1]["command"], "sleep 22");
    for waiter in waiting {
        assert_eq!(waiter["servers_queued"], 3);
        assert_eq!(waiter["shared"], false);
        assert!(waiter["since_unix_ms"].as_u64().unwrap() > 0);
        assert!(waiter["host"].as_str().is_some_and(|h| !h.is_empty()));
    }
    let table = cluster.call(["status", "job"]);
    let text = table.stdout_text();
    assert!(text.contains("2 waiting:"), "{text}");
    let first = text
        .find(&format!("pid {}", waiters[0].id()))
        .expect("first waiter");
    let second = text
        .find(&format!("pid {}", waiters[1].id()))
        .expect("second");
    assert!(first < second, "{text}");
    for waiter in waiters {
        waiter.kill();
    }
}
