//! Fencing numbers (`--fence`): strictly increasing across grants whatever minority of servers
//! is stopped, restarted empty or slow, visible to exec's command, acquire, status and the log,
//! and kept in a counter key that no lock name can reach.

use crate::support::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const COUNTER: &str = "redlock:job\u{1f}fence";

/// `acquire job --fence --json` then `release`; returns the fence.
fn grant(cluster: &Cluster, timeout: &str) -> u64 {
    let granted = cluster.call(["acquire", "job", "--fence", "--json", "--timeout", timeout]);
    let granted = json(granted.get_output());
    let token = granted["token"].as_str().unwrap().to_string();
    cluster
        .call(["release", "job", "--token", &token, "--timeout", timeout])
        .succeeds();
    granted["fence"].as_u64().expect("a fence in the JSON")
}

fn counter(redis: &Redis) -> Option<u64> {
    let value: Option<String> = redis::cmd("HGET")
        .arg(COUNTER)
        .arg("fence")
        .query(&mut redis.connection())
        .unwrap();
    value.map(|v| v.parse().unwrap())
}

#[test]
fn acquire_fence_prints_a_growing_number_and_status_shows_the_holders() {
    let cluster = Cluster::start(3);
    let first = cluster.call(["acquire", "job", "--fence", "--json", "--ttl", "20s"]);
    let first = json(first.get_output());
    assert_eq!(first["fence"], 1);
    let token = first["token"].as_str().unwrap();
    cluster
        .call(["status", "job"])
        .stdout(predicate::str::contains(", fence 1\n"));
    let status = cluster.call(["status", "job", "--json"]);
    assert_eq!(json(status.get_output())["fence"], 1);
    cluster
        .call(["release", "job", "--token", token])
        .succeeds();

    // Plain acquire: the token, then the fence on a second line.
    let plain = cluster.call(["acquire", "job", "--fence"]);
    let stdout = plain.stdout_text();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(lines[1], "2");
    assert_eq!(cluster.holding("redlock:job", lines[0]), 3);
    // Both lines, as `TOKEN=$(redlock acquire job --fence)` would capture them: a usage error
    // that says why, not a puzzling "not held".
    cluster
        .call(["release", "job", "--token", &stdout])
        .exits(64)
        .stderr_has("second line");
    cluster
        .cmd(["release", "job", "--token", lines[0]])
        .assert()
        .success();

    // Without --fence nothing about fences is sent, printed or shown.
    let unfenced = cluster.call(["acquire", "other", "--json"]);
    let unfenced = json(unfenced.get_output());
    assert!(unfenced.get("fence").is_none(), "{unfenced}");
    for server in &cluster.servers {
        let exists: i64 = redis::cmd("EXISTS")
            .arg("redlock:other\u{1f}fence")
            .query(&mut server.connection())
            .unwrap();
        assert_eq!(exists, 0);
    }
    let status = cluster.call(["status", "other", "--json"]);
    assert_eq!(json(status.get_output())["fence"], serde_json::Value::Null);
    // A holder without a fence is not shown the previous holder's.
    let acquired = cluster.call(["acquire", "job", "--json"]);
    let token = json(acquired.get_output())["token"]
        .as_str()
        .unwrap()
        .to_string();
    cluster
        .call(["status", "job"])
        .stdout(predicate::str::contains("fence").not());
    assert_eq!(cluster.holding("redlock:job", &token), 3);
}

#[test]
fn fence_counter_cannot_collide_with_any_lock_name() {
    let cluster = Cluster::start(3);
    // The obvious suffix would be this lock's key: it must stay an ordinary, separate lock.
    let neighbour = cluster.call(["acquire", "job:fence", "--json"]);
    let neighbour = json(neighbour.get_output());
    let neighbour = neighbour["token"].as_str().unwrap().to_string();
    assert_eq!(grant(&cluster, TEST_TIMEOUT), 1);
    assert_eq!(grant(&cluster, TEST_TIMEOUT), 2);
    assert_eq!(cluster.holding("redlock:job:fence", &neighbour), 3);
    // A round ends at a quorum, so the write-back reaches at least a quorum (not always all).
    let counters = || -> Vec<Option<u64>> { cluster.servers.iter().map(counter).collect() };
    let before = counters();
    assert!(
        before.iter().filter(|c| **c == Some(2)).count() >= 2,
        "{before:?}"
    );
    assert!(before.iter().all(|c| *c <= Some(2)), "{before:?}");
    // The counter's own key is not a name anyone can lock, release or force-release.
    for command in [
        vec!["acquire", "job\u{1f}fence"],
        vec!["release", "job\u{1f}fence", "--force"],
        vec!["status", "job\u{1f}fence"],
    ] {
        cluster
            .cmd(command)
            .assert()
            .code(64)
            .stderr(predicate::str::contains("control character"));
    }
    assert_eq!(counters(), before);
    // And the listing shows the two locks' worth of names, not the counter.
    let listing = cluster.call(["status", "--json"]);
    let names: Vec<String> = json(listing.get_output())["locks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|lock| lock["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["job:fence"]);
}

/// The schedule from issue 11 made real. "max of per-server INCR" would hand out 3 after 4
/// in phase 3 (A and C each at 3); the quorum register reads C's 4 and gives 5. Phase 4 restarts
/// C without its data (persistence is off): A, in every quorum with C, still has the counter.
#[test]
fn fence_survives_the_split_quorum_schedule() {
    let mut cluster = Cluster::start(3);
    let timeout = "150ms";
    let mut fences = Vec::new();
    // Phase 1: C is stopped; grants on {A, B}.
    cluster.servers[2].stop();
    fences.push(grant(&cluster, timeout));
    fences.push(grant(&cluster, timeout));
    // Phase 2: A is stopped; grants on {B, C}, where C starts from nothing.
    cluster.servers[2].resume();
    cluster.servers[0].stop();
    fences.push(grant(&cluster, timeout));
    fences.push(grant(&cluster, timeout));
    // Phase 3: B is stopped; grants on {A, C}: A is behind, C is not.
    cluster.servers[0].resume();
    cluster.servers[1].stop();
    fences.push(grant(&cluster, timeout));
    // Phase 4: C restarts empty; still on {A, C}.
    cluster.servers[2].restart();
    assert_eq!(counter(&cluster.servers[2]), None);
    fences.push(grant(&cluster, timeout));
    // Phase 5: B is back, A stopped; grants on {B, C}: both were behind A once.
    cluster.servers[1].resume();
    cluster.servers[0].stop();
    fences.push(grant(&cluster, timeout));
    cluster.servers[0].resume();
    assert_eq!(fences, [1, 2, 3, 4, 5, 6, 7]);
    let counters: Vec<Option<u64>> = cluster.servers.iter().map(counter).collect();
    assert_eq!(counters, [Some(6), Some(7), Some(7)]);
}

#[test]
fn exec_fence_gives_the_command_its_fence_and_nested_execs_the_right_one() {
    let cluster = Cluster::start(3);
    let show = "echo \"$REDLOCK_NAME=${REDLOCK_FENCE:-none}\"";
    let output = cluster
        .redlock()
        .args(["exec", "job", "--fence", "--", "sh", "-c", show])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(stdout_of(&output), "job=1");
    // Re-entered: the inner exec runs under the outer grant and passes its fence on. Another
    // lock taken inside without --fence does not see the outer lock's fence.
    let script = format!(
        "{show}; redlock exec job --fence -- sh -c '{inner}'; redlock exec other -- sh -c '{inner}'",
        inner = show.replace('"', "")
    );
    let output = cluster
        .redlock()
        .env("PATH", path_with_redlock())
        .args(["exec", "job", "--fence", "--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(stdout_of(&output), "job=2\njob=2\nother=none");
    // Re-entered with --fence under an outer exec that has none: refused, not made up.
    let output = cluster
        .redlock()
        .env("PATH", path_with_redlock())
        .args([
            "exec",
            "job",
            "--",
            "sh",
            "-c",
            "redlock exec job --fence -- true",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(64), "{}", stderr_of(&output));
    assert!(stderr_of(&output).contains("without --fence"));
    // The JSON log's acquired event carries the fence.
    let output = cluster
        .redlock()
        .args(["--log-format", "json"])
        .args(["exec", "job", "--fence", "--", "true"])
        .output()
        .unwrap();
    let acquired = json_lines(&stderr_of(&output))
        .into_iter()
        .find(|event| event["event"] == "acquired")
        .expect("an acquired event");
    assert_eq!(acquired["fence"], 3);
}

/// `workers` processes, each making `grants` `exec --fence` grants of one name over 5 servers,
/// while a random minority (1 or 2 servers) is stopped and resumed. Each command appends its
/// REDLOCK_FENCE to a file inside its critical section, so the file is in grant order.
fn fences_grow_under_contention_and_faults(workers: usize, grants: usize) {
    let cluster = Arc::new(Cluster::start(5));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fences");
    let done = Arc::new(AtomicBool::new(false));
    let chaos = {
        let cluster = Arc::clone(&cluster);
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut rounds = 0;
            while !done.load(Ordering::Relaxed) {
                let mut order: Vec<usize> = (0..5).collect();
                shuffle(&mut order);
                let stopped = &order[..1 + rounds % 2];
                for &i in stopped {
                    cluster.servers[i].stop();
                }
                std::thread::sleep(Duration::from_millis(300));
                for &i in stopped {
                    cluster.servers[i].resume();
                }
                std::thread::sleep(Duration::from_millis(200));
                rounds += 1;
            }
            rounds
        })
    };
    let append = format!("echo \"$REDLOCK_FENCE\" >> '{}'", file.display());
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let cluster = Arc::clone(&cluster);
            let append = append.clone();
            std::thread::spawn(move || {
                for _ in 0..grants {
                    let output = cluster
                        .redlock()
                        .args(["exec", "job", "--fence", "--wait", "60s", "--ttl", "3s"])
                        .args(["--timeout", "100ms", "--retry-delay", "50ms"])
                        .args(["--", "sh", "-c", &append])
                        .output()
                        .unwrap();
                    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
                }
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
    done.store(true, Ordering::Relaxed);
    let rounds = chaos.join().unwrap();
    for result in results {
        result.unwrap();
    }
    assert!(rounds >= 2, "the faults never happened");
    let fences: Vec<u64> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|line| line.parse().expect("a number in REDLOCK_FENCE"))
        .collect();
    assert_eq!(fences.len(), workers * grants);
    for pair in fences.windows(2) {
        assert!(
            pair[0] < pair[1],
            "fence {} came after {}",
            pair[1],
            pair[0]
        );
    }
}

fn shuffle(items: &mut [usize]) {
    for i in (1..items.len()).rev() {
        let mut byte = [0u8; 1];
        getrandom::fill(&mut byte).unwrap();
        items.swap(i, byte[0] as usize % (i + 1));
    }
}

/// 128 grants; the full run of issue 11, 504 grants, with `REDLOCK_TEST_FULL=1` (about 30 s on
/// an idle 2-core machine, more under load).
#[test]
fn fences_grow_over_grants_by_8_processes_while_servers_stop() {
    fences_grow_under_contention_and_faults(8, stress(16, 63));
}

/// The write-back is what makes a fence count: where it cannot land (HSET is disabled on two of
/// three servers, so the counter cannot be written there), the grant fails with 69 and nothing is
/// left on any server; without --fence the same servers grant as usual.
#[test]
fn a_fence_that_reaches_no_quorum_fails_the_acquisition_and_leaves_nothing() {
    let cluster = Cluster {
        servers: vec![
            Redis::start(),
            Redis::start_with(&["--rename-command", "HSET", ""]),
            Redis::start_with(&["--rename-command", "HSET", ""]),
        ],
    };
    // The servers without HSET can confirm nothing: whichever two decided the grant, at most
    // the one with HSET confirmed the write-back.
    cluster
        .call(["acquire", "job", "--fence"])
        .exits(69)
        .stderr(
            predicate::str::contains("fence 1 was confirmed by 1 of the 2 servers").or(
                predicate::str::contains("fence 1 was confirmed by 0 of the 2 servers"),
            ),
        );
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
    let token = cluster.acquire_token("job", &[]);
    assert_eq!(cluster.holding(KEY, &token), 3);
}
