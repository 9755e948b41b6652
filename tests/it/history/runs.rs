//! The run history: every way a run ends recorded by the give-back that ends it, with its host,
//! pid, times, slot and mode; the cap and the idle expiry on the servers; `--history 0`; a
//! history written with servers down, complete from the others and partial where it is; and a
//! Redis Cluster keeping it in the lock key's hash slot.

use crate::support::mixed::{beside, key_of, Mixed};
use crate::support::proxy::{Fault, Proxy};
use crate::support::*;
use serde_json::Value;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// `history NAME --json` of `cluster`, which must exit `code`.
fn history(cluster: &Cluster, name: &str, code: i32) -> Value {
    let output = cluster
        .call(["history", name, "--json"])
        .exits(code)
        .get_output()
        .clone();
    document(&output)
}

/// The `runs` of a history document.
fn runs(history: &Value) -> &Vec<Value> {
    history["runs"].as_array().expect("runs")
}

/// Each server's entries in the history of `name`, as the server has them.
fn entries(cluster: &Cluster, name: &str) -> Vec<Vec<String>> {
    cluster
        .servers
        .iter()
        .map(|server| {
            redis::cmd("LRANGE")
                .arg(format!("redlock:{name}\x1fhistory"))
                .arg(0)
                .arg(-1)
                .query(&mut server.connection())
                .unwrap()
        })
        .collect()
}

#[test]
fn every_way_a_run_ends_is_recorded_with_its_host_and_times() {
    let cluster = Cluster::start(3);
    let host = nix::unistd::gethostname()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let before = unix_ms();
    let exec = |args: &[&str], code| {
        cluster
            .redlock()
            .args([&["exec", "job"][..], args].concat())
            .assert()
            .code(code)
    };
    exec(&["--", "true"], 0);
    exec(&["--", "sh", "-c", "exit 3"], 3);
    exec(&["--", "/nonexistent/command"], 127);
    exec(&["--", "sh", "-c", "kill -KILL $$"], 137);
    exec(&["--max-runtime", "100ms", "--", "sleep", "30"], 124);
    let (interrupted, _dir) =
        exec_until_ready(&cluster, &["exec", "job"], "touch \"$DIR/ready\"; sleep 30");
    let pid = interrupted.id();
    signal(pid as i32, libc::SIGTERM);
    assert_eq!(interrupted.wait().status.code(), Some(143));
    // A lock deleted under its run (`release --force`): lost, and recorded everywhere although
    // no server holds its token any more.
    let (losing, _dir) = exec_until_ready(
        &cluster,
        &["exec", "job", "--ttl", "1500ms", "--timeout", "100ms"],
        "touch \"$DIR/ready\"; sleep 30",
    );
    cluster.call(["release", "job", "--force"]).succeeds();
    assert_eq!(losing.wait().status.code(), Some(125));
    let token = cluster.acquire_token("job", &[]);
    cluster
        .call(["release", "job", "--token", &token])
        .succeeds();
    let after = unix_ms();

    let document = history(&cluster, "job", 0);
    let jobs = runs(&document);
    let ended: Vec<(&str, Value, Value)> = jobs
        .iter()
        .map(|run| {
            (
                run["ended_as"].as_str().unwrap(),
                run["exit_status"].clone(),
                run["signal"].clone(),
            )
        })
        .collect();
    assert_eq!(
        ended,
        [
            ("released", Value::Null, Value::Null),
            ("lost", Value::Null, Value::Null),
            ("interrupted", Value::Null, Value::from(libc::SIGTERM)),
            ("max-runtime", Value::Null, Value::Null),
            ("signal", Value::Null, Value::from(libc::SIGKILL)),
            ("failed", Value::from(127), Value::Null),
            ("failed", Value::from(3), Value::Null),
            ("ok", Value::from(0), Value::Null),
        ],
        "{document}"
    );
    for run in jobs {
        assert_eq!(run["host"], host.as_str(), "{run}");
        assert_eq!(run["servers_holding"], 3, "{run}");
        assert_eq!(run["partial"], false, "{run}");
        assert_eq!(run["mode"], "exclusive", "{run}");
        let acquired = run["acquired_unix_ms"].as_u64().unwrap();
        let ended = run["ended_unix_ms"].as_u64().unwrap();
        assert!(
            before <= acquired && acquired <= ended && ended <= after,
            "{run}"
        );
        assert!(run["held_ms"].as_u64().unwrap() <= after - before, "{run}");
    }
    // The command, and what only exec knows (its wait); the run the signal interrupted is
    // exec's own, pid and all.
    assert_eq!(jobs[7]["command"], "true");
    assert_eq!(jobs[6]["command"], "sh -c exit 3");
    assert_eq!(jobs[5]["command"], "/nonexistent/command");
    assert_eq!(jobs[2]["pid"], pid);
    assert!(jobs[3]["held_ms"].as_u64().unwrap() >= 100, "{}", jobs[3]);
    assert!(jobs[7]["waited_ms"].is_u64());
    assert!(jobs[0]["waited_ms"].is_null() && jobs[0]["command"].is_null());
    assert_eq!(jobs[0]["token"], token.as_str());

    // The table says the same, newest first; -n keeps the newest.
    let table = cluster.call(["history", "job"]).succeeds();
    let table = table.stdout_text();
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("history of job: 8 runs"), "{table}");
    assert!(lines[1].starts_with("STARTED ") && lines[1].contains(" ENDED AS "));
    for (line, ended) in lines[2..].iter().zip([
        "released",
        "lost",
        "interrupted 15",
        "max-runtime",
        "signal 9",
        "failed 127",
        "failed 3",
        "ok",
    ]) {
        assert!(line.contains(&format!(" {ended} ")), "{ended}: {line}");
        assert!(line.contains(&format!(" {host} ")), "{line}");
    }
    let newest = history_of(&cluster, &["job", "-n", "2", "--since", "1h"]);
    assert_eq!(runs_of(&newest), ["released", "lost"]);
    cluster.call(["history", "never-ran"]).exits(1);

    // A semaphore's runs with their slot, a shared lock's with their mode.
    exec_on(&cluster, &["pool", "--limit", "2", "--", "true"]);
    exec_on(&cluster, &["rw", "--shared", "--", "true"]);
    let reader = cluster.acquire_token("rw", &["--shared"]);
    cluster
        .call(["release", "rw", "--shared", "--token", &reader])
        .succeeds();
    let pool = history(&cluster, "pool", 0);
    let slot = runs(&pool)[0]["slot"].as_u64().expect("a slot");
    assert!(slot < 2, "{pool}");
    let rw = history(&cluster, "rw", 0);
    let modes: Vec<(&Value, &Value)> = runs(&rw)
        .iter()
        .map(|run| (&run["mode"], &run["ended_as"]))
        .collect();
    assert_eq!(
        modes,
        [
            (&"shared".into(), &"released".into()),
            (&"shared".into(), &"ok".into())
        ]
    );
    let table = cluster.call(["history", "pool"]).succeeds();
    assert!(table.stdout_text().contains(&format!(" slot {slot} ")));

    // --history 0 writes nothing; --history N keeps the N newest on each server.
    exec_on(&cluster, &["quiet", "--history", "0", "--", "true"]);
    assert!(entries(&cluster, "quiet").iter().all(Vec::is_empty));
    cluster.call(["history", "quiet"]).exits(1);
    for _ in 0..3 {
        exec_on(&cluster, &["capped", "--history", "2", "--", "true"]);
    }
    let capped = entries(&cluster, "capped");
    assert!(capped.iter().all(|kept| kept.len() == 2), "{capped:?}");
    assert_eq!(runs(&history(&cluster, "capped", 0)).len(), 2);
}

/// `redlock exec ARGS` on `cluster`, which must exit 0.
fn exec_on(cluster: &Cluster, args: &[&str]) {
    cluster
        .redlock()
        .args([&["exec"][..], args].concat())
        .assert()
        .code(0);
}

/// `history ARGS --json` of `cluster`, which must exit 0.
fn history_of(cluster: &Cluster, args: &[&str]) -> Value {
    json(
        cluster
            .cmd([&["history"][..], args, &["--json"]].concat())
            .assert()
            .get_output(),
    )
}

/// How each run of a history document ended.
fn runs_of(history: &Value) -> Vec<&str> {
    runs(history)
        .iter()
        .map(|run| run["ended_as"].as_str().unwrap())
        .collect()
}

#[test]
fn a_history_goes_once_its_name_has_been_idle_for_the_retention() {
    let cluster = Cluster::start(1);
    let retention = Duration::from_millis(600);
    let key = "redlock:idle\x1fhistory";
    let run = || {
        exec_on(
            &cluster,
            &["idle", "--history-retention", "600ms", "--", "true"],
        )
    };
    run();
    let left = cluster.servers[0].pttl(key);
    assert!(left > 0 && left <= retention.as_millis() as i64, "{left}");
    // A run before it goes starts the retention again.
    let half = retention.as_millis() as i64 / 2;
    wait_for("half the retention to pass", retention, || {
        cluster.servers[0].pttl(key) < half
    });
    run();
    assert!(cluster.servers[0].pttl(key) > half);
    assert_eq!(entries(&cluster, "idle")[0].len(), 2);
    wait_for("the idle history to go", retention * 2, || {
        cluster.servers[0].pttl(key) == -2
    });
    cluster.call(["history", "idle"]).exits(1);
}

#[test]
fn a_history_written_with_servers_down_is_complete_from_the_others_and_partial_where_not() {
    let cluster = Cluster::start(3);
    let proxies: Vec<Proxy> = cluster
        .servers
        .iter()
        .map(|server| Proxy::start(server.port))
        .collect();
    let urls: Vec<String> = proxies
        .iter()
        .map(|proxy| format!("redis://127.0.0.1:{}", proxy.port))
        .collect();
    let redlock = || {
        let mut command = cluster.redlock();
        command.env("REDLOCK_SERVERS", urls.join(","));
        command
    };
    let history = |code| {
        let output = redlock()
            .args(["history", "job", "--json"])
            .assert()
            .code(code);
        document(&output)
    };
    redlock()
        .args(["exec", "job", "--", "true"])
        .assert()
        .code(0);
    // The third server down: the run is on the other two, a quorum. Down as a closed port, not
    // a proxy resetting: a release decided at its quorum goes without waiting for the third, and
    // what it wrote there would reach the server once a proxy accepted it, fault cleared or not.
    let third_down = [
        urls[0].clone(),
        urls[1].clone(),
        format!("redis://127.0.0.1:{}", free_port()),
    ];
    redlock()
        .env("REDLOCK_SERVERS", third_down.join(","))
        .args(["exec", "job", "--", "sh", "-c", "exit 4"])
        .assert()
        .code(4);
    // The first two down while a run holds the lock: it is lost, and its give-back reaches
    // the third server only.
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let losing = redlock()
        .args(["exec", "job", "--ttl", "1500ms", "--timeout", "100ms"])
        .args(["--", "sh", "-c"])
        .arg(format!("touch '{}'; sleep 30", ready.display()))
        .spawn_until("the command to start", || ready.exists());
    proxies[0].set(Fault::Reset);
    proxies[1].set(Fault::Reset);
    assert_eq!(losing.wait().status.code(), Some(125));
    // Too few servers to tell: what the one had, and 69.
    let seen = history(69);
    assert_eq!(runs_of(&seen), ["lost", "ok"]);
    assert_eq!(seen["servers_answered"], 1);
    proxies[0].set(Fault::None);
    proxies[1].set(Fault::None);

    let merged = history(0);
    let found: Vec<(&str, &Value, &Value)> = runs(&merged)
        .iter()
        .map(|run| {
            (
                run["ended_as"].as_str().unwrap(),
                &run["servers_holding"],
                &run["partial"],
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("lost", &1.into(), &true.into()),
            ("failed", &2.into(), &false.into()),
            ("ok", &3.into(), &false.into()),
        ],
        "{merged}"
    );
    let table = redlock().args(["history", "job"]).assert().code(0);
    let table = stdout_of(&table);
    assert!(table.contains("1 partial"), "{table}");
    let lost = table.lines().find(|line| line.contains(" lost ")).unwrap();
    assert!(lost.contains(" 1/3 partial "), "{lost}");
}

#[test]
fn a_cluster_keeps_the_history_in_the_lock_keys_slot() {
    let setup = Mixed::start();
    let port = setup.cluster.masters()[0].port;
    let name = setup.cluster.name_on(port, "redlock:", "job");
    for limit in [&[][..], &["--limit", "2"]] {
        setup
            .redlock()
            .args([&["exec", &name][..], limit, &["--", "true"]].concat())
            .assert()
            .code(0);
    }
    let key = key_of(&name);
    let history = beside(&key, "history");
    assert_eq!(setup.cluster.slot_of(&history), setup.cluster.slot_of(&key));
    let kept: usize = redis::cmd("LLEN")
        .arg(&history)
        .query(&mut setup.cluster.node(port).connection())
        .unwrap();
    assert_eq!(kept, 2);
    let document = json(setup.call(["history", &name, "--json"]).get_output());
    let slots: Vec<(Option<u64>, &Value)> = runs(&document)
        .iter()
        .map(|run| (run["slot"].as_u64(), &run["servers_holding"]))
        .collect();
    assert!(
        matches!(slots[..], [(Some(0 | 1), three), (None, _)] if *three == 3),
        "{document}"
    );
    assert!(runs(&document)
        .iter()
        .all(|run| run["servers_holding"] == 3));
}

#[test]
fn times_from_the_year_10000_on_are_shown_as_numbers_not_a_crash() {
    // A hand-written entry, or a token from a host whose clock is wrong, can carry a time no
    // four-digit year can write: history and status show it as its number.
    let cluster = Cluster::start(1);
    let year_10000 = 253_402_300_800_000_u64;
    let token =
        |acquired: u64| format!("0123456789abcdef0123456789abcdef:host-a:42:{acquired}:job");
    let mut con = cluster.servers[0].connection();
    for acquired in [year_10000, year_10000 + 1, u64::MAX] {
        let entry = format!("1 {acquired} 5 ok - - - exclusive {}", token(acquired));
        let _: () = redis::cmd("LPUSH")
            .arg("redlock:future\x1fhistory")
            .arg(entry)
            .query(&mut con)
            .unwrap();
    }
    cluster.servers[0].set("redlock:future", &token(year_10000));
    let kept = format!(
        "0123456789abcdef0123456789abcdef:host-a:42:{year_10000}::kept:{}:exit-0",
        u64::MAX
    );
    let _: () = redis::cmd("SET")
        .arg("redlock:kept-future")
        .arg(kept)
        .arg("PX")
        .arg(60_000)
        .query(&mut con)
        .unwrap();
    let shown = format!("{year_10000} (unix ms)");
    for args in [
        &["history", "future"][..],
        &["status", "future"],
        &["status", "future", "-v"],
        &["status", "kept-future"],
    ] {
        let output = cluster.cmd(args).assert().code(0).get_output().clone();
        let text = stdout_of(&output);
        assert!(text.contains(&shown), "{args:?}: {text}");
    }
    for args in [
        &["history", "future", "--json"][..],
        &["status", "future", "--json"],
        &["status", "--json"],
    ] {
        let output = cluster.cmd(args).assert().code(0).get_output().clone();
        let document = document(&output);
        assert!(document.is_object(), "{args:?}");
    }
    cluster.call(["status"]).exits(0);
}
