//! Every JSON document the binary prints, checked against the tables the binary lists for
//! docs/json.md (`schema`): every document this test makes the binary print must follow its
//! table, and every table, and every field it lists, must show up in one of them. So a field
//! added to a struct fails until some run here prints it, and so does a document printed
//! around the structs.
//!
//! A new kind of document gets a struct (`crate::schema` in src/), a place in docs/json.md
//! (`schema::reference`) and a few lines in `every_json_document_has_the_fields_the_docs_list`
//! that make the binary print it.

mod schema;

use crate::support::*;
use schema::Schema;
use serde_json::Value;
use std::process::Output;
use std::time::Duration;

/// The events of `lines`, in order.
fn events(lines: &[Value]) -> Vec<&str> {
    lines.iter().filter_map(|l| l["event"].as_str()).collect()
}

/// What `redlock ARGS` on `cluster` printed; it must exit `code`.
fn exits(cluster: &Cluster, args: &[&str], code: i32) -> Output {
    cluster.cmd(args).assert().code(code).get_output().clone()
}

/// What `redlock ARGS` on `cluster` printed; it must exit 0.
fn ok(cluster: &Cluster, args: &[&str]) -> Output {
    exits(cluster, args, 0)
}

#[test]
fn every_json_document_has_the_fields_the_docs_list() {
    let schema = Schema::from_binary();
    let cluster = Cluster::start(3);
    let json = ["--log-format", "json"];

    // A renewal that fails, then a lost lock: a lone server stopped under a running exec.
    let lone = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let losing = lone
        .redlock()
        .args(json)
        .args([
            "exec",
            "lone",
            "--ttl",
            "1500ms",
            "--timeout",
            "100ms",
            "--",
            "sh",
            "-c",
            &format!("touch '{}'; sleep 30", ready.display()),
        ])
        .spawn();
    wait_for("the command to start", Duration::from_secs(10), || {
        ready.exists()
    });
    lone.servers[0].stop();

    // acquire, with -v's rounds, a fence and a slot; extend; busy.
    let acquired = ok(
        &cluster,
        &[&json[..], &["-v", "acquire", "job", "--fence", "--json"]].concat(),
    );
    let token = schema.stdout("acquire --json", &acquired)["token"]
        .as_str()
        .unwrap()
        .to_string();
    let lines = schema.log(&acquired);
    assert!(events(&lines).contains(&"round"), "{lines:?}");
    let slot = ok(
        &cluster,
        &[
            &json[..],
            &["acquire", "pool", "--limit", "2", "--fence", "--json"],
        ]
        .concat(),
    );
    let taken = schema.stdout("acquire --json", &slot)["slot"].clone();
    assert!(taken.is_u64(), "{taken}");
    assert_eq!(schema.log(&slot)[0]["slot"], taken);
    let extended = ok(
        &cluster,
        &[&json[..], &["extend", "job", "--token", &token, "--json"]].concat(),
    );
    schema.stdout("extend --json", &extended);
    assert_eq!(events(&schema.log(&extended)), ["renewed"]);
    let busy = exits(&cluster, &[&json[..], &["acquire", "job"]].concat(), 75);
    assert_eq!(events(&schema.log(&busy)), ["busy"]);

    // A lock with a fence and a waiter, seen through a fourth server that does not answer
    // (an even number: a warning).
    let waiter = cluster.spawn(&["acquire", "job", "--wait", "60s"]);
    wait_for("the waiter to queue", Duration::from_secs(20), || {
        let status = cluster.call(["status", "job", "--json"]);
        serde_json::from_str::<Value>(&status.stdout_text())
            .is_ok_and(|s| s["waiters"].as_array().is_some_and(|w| !w.is_empty()))
    });
    let four = format!("{},redis://127.0.0.1:{}", cluster.urls(), free_port());
    let status = cluster
        .cmd([&json[..], &["status", "job", "--json"]].concat())
        .env("REDLOCK_SERVERS", &four)
        .assert()
        .success();
    let document = schema.status(status.get_output());
    assert!(document["fence"].is_number() && document["per_server"][3]["error"].is_string());
    // The warning that four servers are an even number, and the margin the run ended with.
    assert_eq!(
        events(&schema.log(status.get_output())),
        ["warning", "margin"]
    );

    // Shared holders; another client's hash; a lock kept after its run; a run stopped by
    // --max-runtime.
    for _ in 0..2 {
        cluster.acquire_token("shared", &["--shared"]);
    }
    let shared = schema.status(&ok(&cluster, &["status", "shared", "--json"]));
    assert_eq!(shared["readers"].as_array().unwrap().len(), 2);
    for server in &cluster.servers {
        let _: () = redis::cmd("HSET")
            .arg("redlock:foreign")
            .arg("owner")
            .arg("redisson")
            .query(&mut server.connection())
            .unwrap();
    }
    let foreign = schema.status(&ok(&cluster, &["status", "foreign", "--json"]));
    assert_eq!(foreign["foreign_type"], "hash");
    // exec runs its command under supervision: process.rs's harness, not a one-shot.
    let kept = run(
        &cluster,
        &[
            &json[..],
            &["exec", "kept", "--hold-at-least", "60s", "--", "true"],
        ]
        .concat(),
    );
    assert_eq!(kept.status.code(), Some(0), "{}", stderr_of(&kept));
    assert!(events(&schema.log(&kept)).ends_with(&["child_exited", "kept"]));
    let kept = schema.status(&ok(&cluster, &["status", "kept", "--json"]));
    assert!(kept["kept"].is_object());
    let slow = run(
        &cluster,
        &[
            &json[..],
            &[
                "exec",
                "slow",
                "--max-runtime",
                "100ms",
                "--",
                "sleep",
                "30",
            ],
        ]
        .concat(),
    );
    assert_eq!(slow.status.code(), Some(124));
    assert!(events(&schema.log(&slow)).contains(&"timed_out"));
    let history = schema.stdout(
        "history NAME --json",
        &ok(&cluster, &["history", "slow", "--json"]),
    );
    assert_eq!(history["runs"][0]["ended_as"], "max-runtime");

    // The semaphore alone, then beside the mutex of its name (a warning), and the list.
    let semaphore = schema.status(&ok(&cluster, &["status", "pool", "--json"]));
    assert_eq!(semaphore["kind"], "semaphore");
    cluster.acquire_token("pool", &[]);
    let both = ok(
        &cluster,
        &[&json[..], &["status", "pool", "--json"]].concat(),
    );
    assert_eq!(schema.status(&both)["semaphore"]["slots_held"], 1);
    assert_eq!(events(&schema.log(&both)), ["warning"]);
    schema.stdout(
        "status --json: the list",
        &ok(&cluster, &["status", "--json"]),
    );

    // Releases, by token and forced, and an error.
    let released = ok(
        &cluster,
        &[&json[..], &["release", "job", "--token", &token]].concat(),
    );
    assert_eq!(events(&schema.log(&released)), ["released"]);
    let forced = ok(
        &cluster,
        &[&json[..], &["release", "foreign", "--force"]].concat(),
    );
    assert_eq!(events(&schema.log(&forced)), ["released"]);
    let refused = exits(
        &cluster,
        &[&json[..], &["acquire", "pool", "--limit", "3"]].concat(),
        64,
    );
    assert_eq!(events(&schema.log(&refused)), ["error"]);

    let lost = losing.wait();
    lone.servers[0].resume();
    assert_eq!(lost.status.code(), Some(125), "{}", stderr_of(&lost));
    let lines = schema.log(&lost);
    for event in ["renewal_failed", "lost"] {
        assert!(events(&lines).contains(&event), "{lines:?}");
    }
    let waiter = waiter.wait();
    assert_eq!(waiter.status.code(), Some(0), "{}", stderr_of(&waiter));

    // The latch: every verb's document (each with its own fields), each server's copy, and the
    // lists, `latch status` and `status`, which hold the same documents. `latch wait` on an open
    // latch returns at once.
    const LATCH: &str =
        "latch set --json, latch done --json, latch wait --json, latch status NAME --json";
    let latch = |args: &[&str]| ok(&cluster, &[&["latch"][..], args].concat());
    schema.stdout(LATCH, &latch(&["set", "etl", "--count", "2", "--json"]));
    schema.stdout(LATCH, &latch(&["done", "etl", "--id", "a", "--json"]));
    latch(&["done", "etl", "--id", "b"]);
    schema.stdout(LATCH, &latch(&["wait", "etl", "--wait", "5s", "--json"]));
    schema.stdout(LATCH, &latch(&["status", "etl", "--json"]));
    let list = latch(&["status", "--json"]);
    let list = schema.stdout("latch status --json: the list", &list);
    assert_eq!(list["latches"][0]["name"], "etl");
    let list = schema.stdout(
        "status --json: the list",
        &ok(&cluster, &["status", "--json"]),
    );
    assert_eq!(list["latches"][0]["state"], "open");

    // doctor: each server's facts, and its findings (these servers keep nothing on disk, and
    // started less than the hour --ttl says ago).
    let doctor = ok(&cluster, &["doctor", "--json", "--ttl", "1h"]);
    let doctor = schema.stdout("doctor --json", &doctor);
    assert_eq!(doctor["findings"][0]["code"], "restarted");
    schema.assert_complete();
}

#[test]
fn a_field_the_docs_do_not_list_fails_the_check() {
    let schema = Schema::from_binary();
    let document = serde_json::json!({
        "version": 1, "name": "job", "key": "redlock:job", "token": "t", "ttl_ms": 1,
        "validity_ms": 1, "servers": 3, "votes": 2, "undocumented": true,
    });
    let check = |document: &Value| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            schema.check("acquire --json", document)
        }))
    };
    let failure = check(&document).expect_err("an undocumented field must fail");
    let message = failure
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("`undocumented`"), "{message}");
    // And a documented type that does not match.
    let mut document = document;
    document.as_object_mut().unwrap().remove("undocumented");
    document["servers"] = serde_json::json!(["redis://a"]);
    assert!(check(&document).is_err());
}
