//! Semaphores (`--limit N`): never more than N holders, every slot used, with servers down,
//! a killed holder's slot coming back after its TTL, and no interference with a mutex of the
//! same name.

use crate::support::waiters::wake_channels;
use crate::support::*;
use serde_json::json;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `workers` processes each run `sections` `exec --limit 3 --wait` sections that log their
/// entry and exit; the log must never show more than 3 inside, nor two in one slot.
fn at_most_3_inside(cluster: Arc<Cluster>, workers: usize, sections: usize) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let section = format!(
        "echo \"in $REDLOCK_SLOT\" >> '{log}'; sleep 0.02; echo \"out $REDLOCK_SLOT\" >> '{log}'",
        log = log.display()
    );
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let cluster = Arc::clone(&cluster);
            let section = section.clone();
            std::thread::spawn(move || {
                for _ in 0..sections {
                    let output = cluster
                        .redlock()
                        .args(["exec", "pool", "--limit", "3", "--wait", "50s"])
                        .args(["--ttl", "5s", "--retry-delay", "100ms"])
                        .args(["--", "sh", "-c", &section])
                        .output()
                        .unwrap();
                    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let mut inside = BTreeSet::new();
    let mut used = BTreeSet::new();
    let mut entered = 0;
    for line in text.lines() {
        let (what, slot) = line.split_once(' ').unwrap();
        let slot: usize = slot.parse().expect("REDLOCK_SLOT is a number");
        if what == "in" {
            assert!(inside.insert(slot), "two holders in slot {slot}:\n{text}");
            assert!(inside.len() <= 3, "more than 3 inside:\n{text}");
            used.insert(slot);
            entered += 1;
        } else {
            assert!(
                inside.remove(&slot),
                "left slot {slot} without entering:\n{text}"
            );
        }
    }
    assert_eq!(entered, workers * sections, "every section ran");
    assert_eq!(used, BTreeSet::from([0, 1, 2]), "all 3 slots used");
}

/// The crowd of `at_most_3_inside`: 6 processes of 4 sections, twice the slots, so that every
/// slot is contended; 16 of 10 with `REDLOCK_TEST_FULL=1`.
fn crowd() -> (usize, usize) {
    (stress(6, 16), stress(4, 10))
}

#[test]
fn semaphore_of_3_admits_a_crowd_3_at_a_time_in_every_slot() {
    let (workers, sections) = crowd();
    at_most_3_inside(Arc::new(Cluster::start(3)), workers, sections);
}

#[test]
fn semaphore_of_3_holds_with_2_of_5_servers_killed() {
    let mut cluster = Cluster::start(5);
    cluster.servers[1].kill();
    cluster.servers[3].kill();
    let (workers, sections) = crowd();
    at_most_3_inside(Arc::new(cluster), workers, sections);
}

#[test]
fn a_killed_holder_frees_its_slot_after_its_ttl() {
    const TTL: Duration = Duration::from_secs(3);
    let cluster = Cluster::start(3);
    let ttl = format!("{}s", TTL.as_secs());
    let holders: Vec<Running> = (0..2)
        .map(|_| {
            cluster.spawn(&[
                "exec", "pool", "--limit", "2", "--ttl", &ttl, "--", "sleep", "60",
            ])
        })
        .collect();
    wait_for("both slots taken", Duration::from_secs(10), || {
        let status = || {
            let shown = cluster.call(["status", "pool", "--limit", "2", "--json"]);
            shown.get_output().clone()
        };
        status().status.code() == Some(0) && json(&status())["slots_held"] == 2
    });
    cluster.call(["acquire", "pool", "--limit", "2"]).exits(75);
    signal(holders[0].id() as i32, libc::SIGKILL);
    let killed = Instant::now();
    cluster.call(["acquire", "pool", "--limit", "2"]).exits(75);
    let output = run(
        &cluster,
        &["acquire", "pool", "--limit", "2", "--wait", "10s", "--json"],
    );
    let waited = killed.elapsed();
    assert!(json(&output)["slot"].as_u64().is_some());
    // Renewed every TTL/3, the killed holder's key had about two thirds of its TTL left at the
    // kill; a third is the bound, which leaves a renewal that came late room.
    assert!(
        waited >= TTL / 3,
        "the slot came back after only {waited:?}"
    );
    for holder in holders {
        holder.kill();
    }
}

#[test]
fn a_mutex_and_a_semaphore_of_one_name_do_not_exclude_each_other() {
    let cluster = Cluster::start(3);
    // A plain mutex taken on the key directly, as redis-py's Lock (SET NX PX) does.
    for server in &cluster.servers {
        let set: Option<String> = redis::cmd("SET")
            .arg("redlock:job")
            .arg("redis-py-token")
            .arg("NX")
            .arg("PX")
            .arg(30_000)
            .query(&mut server.connection())
            .unwrap();
        assert_eq!(set.as_deref(), Some("OK"));
    }
    let json_of = |args: &[&str]| json(cluster.cmd(args).assert().get_output());
    let first = json_of(&["acquire", "job", "--limit", "2", "--json"]);
    let second = json_of(&["acquire", "job", "--limit", "2", "--json"]);
    assert_ne!(first["slot"], second["slot"]);
    cluster.call(["acquire", "job", "--limit", "2"]).exits(75);
    cluster.call(["acquire", "job"]).exits(75);
    assert_eq!(cluster.holding("redlock:job", "redis-py-token"), 3);
    // status tells them apart: the mutex's holder, the semaphore's two, and both in the list.
    let mutex = json_of(&["status", "job", "--json"]);
    assert_eq!(mutex["token"], "redis-py-token");
    let semaphore = json_of(&["status", "job", "--limit", "2", "--json"]);
    assert_eq!(semaphore["slots_held"], 2);
    let listing = json_of(&["status", "--json"]);
    let slots: Vec<&serde_json::Value> = listing["locks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|lock| &lock["slot"])
        .collect();
    assert_eq!(slots, [&serde_json::Value::Null, &json!(0), &json!(1)]);
    let table = cluster.call(["status"]);
    let table = table.stdout_text();
    for name in ["job ", "job [slot 0]", "job [slot 1]"] {
        assert!(table.contains(name), "{name} missing:\n{table}");
    }
    // release finds the slot from the token, and leaves the mutex alone.
    for held in [&first, &second] {
        let token = held["token"].as_str().unwrap();
        cluster
            .call(["release", "job", "--limit", "2", "--token", token])
            .succeeds();
        let key = held["key"].as_str().unwrap();
        assert_eq!(cluster.values(key), vec![None, None, None]);
    }
    assert_eq!(cluster.holding("redlock:job", "redis-py-token"), 3);
    cluster.call(["status", "job", "--limit", "2"]).exits(1);
}

#[test]
fn exec_limit_gives_each_holder_its_slot_and_the_slots_fence() {
    let cluster = Cluster::start(3);
    let token = json(&run(
        &cluster,
        &["acquire", "pool", "--limit", "2", "--fence", "--json"],
    ));
    assert_eq!(token["fence"], 1);
    let output = run(
        &cluster,
        &[
            "exec",
            "pool",
            "--limit",
            "2",
            "--fence",
            "--",
            "sh",
            "-c",
            "echo \"$REDLOCK_SLOT $REDLOCK_FENCE $REDLOCK_KEY\"",
        ],
    );
    let other = 1 - token["slot"].as_u64().unwrap();
    assert_eq!(
        stdout_of(&output),
        format!("{other} 1 redlock:pool\u{1f}slots:{other}"),
        "{}",
        stderr_of(&output)
    );
    // Re-entered inside its own slot (the other is taken): no second slot, no wait, same fence.
    let inner = "redlock exec pool --limit 2 --fence -- sh -c 'echo $REDLOCK_SLOT $REDLOCK_FENCE'";
    let output = cluster
        .redlock()
        .env("PATH", path_with_redlock())
        .args([
            "exec", "pool", "--limit", "2", "--fence", "--", "sh", "-c", inner,
        ])
        .output()
        .unwrap();
    assert_eq!(
        stdout_of(&output),
        format!("{other} 2"),
        "{}",
        stderr_of(&output)
    );
    // extend, too, finds the slot from the token.
    let token = token["token"].as_str().unwrap();
    cluster
        .call(["extend", "pool", "--limit", "2", "--token", token])
        .succeeds();
    cluster
        .call(["release", "pool", "--limit", "2", "--token", "nobody"])
        .exits(1);
}

#[test]
fn bad_limits_exit_64_and_leave_nothing() {
    let cluster = Cluster::start(1);
    for limit in ["0", "-1", "three", "1001", "2.5"] {
        for command in [
            vec!["acquire", "job"],
            vec!["exec", "job"],
            vec!["status", "job"],
            vec!["release", "job", "--token", "t"],
        ] {
            let mut args = command.clone();
            args.extend(["--limit", limit]);
            if args[0] == "exec" {
                args.extend(["--", "true"]);
            }
            cluster.cmd(&args).assert().code(64).stderr(
                predicate::str::contains(limit)
                    .and(predicate::str::contains("from 1 to 1000"))
                    .and(line_count(1)),
            );
        }
    }
    let keys = cluster.servers[0].keys();
    assert!(keys.is_empty(), "{keys:?}");
}

/// Servers that disagree on which slots are free: slot 0 is taken (by a foreign value) on A
/// only, slot 1 on B only. Whichever order the attempt tries, A and B set different slots, so
/// one slot wins on a majority and the other, set on one server, must be deleted again.
#[test]
fn a_split_between_slots_wins_the_majority_slot_and_deletes_the_other() {
    let cluster = Cluster::start(3);
    let semaphore = "redlock:pool\u{1f}slots";
    let slot = |s: u64| format!("{semaphore}:{s}");
    cluster.servers[0].set(&slot(0), "foreign-0");
    cluster.servers[1].set(&slot(1), "foreign-1");
    for _ in 0..4 {
        let held = json(&run(
            &cluster,
            &["acquire", "pool", "--limit", "2", "--json"],
        ));
        let token = held["token"].as_str().unwrap();
        let won = held["slot"].as_u64().unwrap();
        assert_eq!(held["votes"], 2);
        assert_eq!(cluster.holding(&slot(won), token), 2);
        assert_eq!(
            cluster.holding(&slot(1 - won), token),
            0,
            "a stray was left"
        );
        let output = run(
            &cluster,
            &["release", "pool", "--limit", "2", "--token", token],
        );
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    assert_eq!(
        cluster.servers[0].get(&slot(0)).as_deref(),
        Some("foreign-0")
    );
    assert_eq!(
        cluster.servers[1].get(&slot(1)).as_deref(),
        Some("foreign-1")
    );
}

/// A waiter for a full semaphore hears the release of any slot at once, as a mutex's waiter
/// does, instead of sleeping out its (here very long) retry delay.
#[test]
fn a_waiter_wakes_when_any_slot_is_released() {
    let cluster = Cluster::start(3);
    let tokens: Vec<String> = (0..2)
        .map(|_| cluster.acquire_token("pool", &["--limit", "2"]))
        .collect();
    const RETRY_DELAY: Duration = Duration::from_secs(30);
    let retry_delay = format!("{}s", RETRY_DELAY.as_secs());
    let waiter = cluster.spawn(&[
        "acquire",
        "pool",
        "--limit",
        "2",
        "--wait",
        "60s",
        "--retry-delay",
        &retry_delay,
    ]);
    // Its wake-up channel is the semaphore's (any slot's release serves it), one per waiter.
    wait_for("the waiter to subscribe", Duration::from_secs(10), || {
        cluster
            .servers
            .iter()
            .all(|server| wake_channels(server, "redlock:pool\u{1f}slots").len() == 1)
    });
    let released = Instant::now();
    let output = run(
        &cluster,
        &["release", "pool", "--limit", "2", "--token", &tokens[1]],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let output = waiter.wait();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    // Its own schedule pauses half its retry delay at least.
    assert!(
        released.elapsed() < RETRY_DELAY / 2,
        "woke only after {:?}",
        released.elapsed()
    );
}
