//! docs/doctor.md's ACL recipe against the code: a user made from it runs every feature, and doctor
//! finds what a user without one of its commands is refused (with ACL DRYRUN where the server
//! has it, else its probe), leaving nothing behind.

use crate::support::deployments::*;
use crate::support::*;
use std::time::Duration;

#[test]
fn a_command_the_acl_refuses_is_found() {
    let server = persistent(&[]);
    recipe_user(&server, "nozpop", &["zpopmin"], &[]);
    // ACL DRYRUN where the server has it (and the user may run it), else the probe.
    recipe_user(&server, "nopublish", &["publish"], &["acl|dryrun"]);
    let as_user = |user: &str| vec![format!("redis://{user}:pw@127.0.0.1:{}", server.port)];

    let (document, code) = doctor(&as_user("nozpop"), &[]);
    assert_eq!(code, 1, "{document}");
    assert_eq!(
        codes(&document),
        ["denied", "server_count", "unchecked"],
        "{document}"
    );
    let denied = message(&document, "denied");
    assert!(
        denied.contains("ZPOPMIN (for releases with shared waiters"),
        "{denied}"
    );
    assert!(
        denied.contains("ACL SETUSER nozpop resetkeys ~redlock:*"),
        "{denied}"
    );
    assert!(!denied.contains(":pw@"), "{denied}");
    assert_eq!(document["per_server"][0]["access"], "a probe");
    assert_eq!(
        document["per_server"][0]["refused"],
        serde_json::json!(["zpopmin"])
    );
    // It could not read INFO as this user: unchecked, not guessed.
    assert!(document["per_server"][0]["nodes"][0]["appendonly"].is_null());
    assert!(
        server.keys().is_empty(),
        "the probe left {:?}",
        server.keys()
    );

    let (document, code) = doctor(&as_user("nopublish"), &[]);
    assert_eq!(code, 0, "warnings only: {document}");
    assert_eq!(
        codes(&document),
        ["notifications", "server_count", "unchecked"],
        "{document}"
    );
    let how = if has_dry_run(&server) {
        "ACL DRYRUN"
    } else {
        "a probe"
    };
    assert_eq!(document["per_server"][0]["access"], how, "{document}");
    assert!(
        server.keys().is_empty(),
        "the probe left {:?}",
        server.keys()
    );
}

#[test]
fn the_documented_acl_runs_every_feature() {
    let server = persistent(&[]);
    recipe_user(&server, "redlock", &[], &[]);
    let url = format!("redis://redlock:pw@127.0.0.1:{}", server.port);
    let run = |args: &[&str]| one_shot(redlock_on(&url), args).assert();
    let acquired = run(&["acquire", "job", "--fence"]).success();
    let token = stdout_of(acquired.get_output())
        .lines()
        .next()
        .unwrap()
        .to_string();
    // A waiter, woken by the release: a queue, its channel, the hand-over.
    let waiter = Cmd::new(redlock_on(&url))
        .args(["acquire", "job", "--wait", "30s", "--retry-delay", "20s"])
        .spawn();
    wait_for("the waiter to queue", Duration::from_secs(10), || {
        server.keys().iter().any(|key| key.ends_with("\u{1f}queue"))
    });
    run(&["extend", "job", "--token", &token, "--ttl", "1m"]).success();
    run(&["release", "job", "--token", &token]).success();
    let woken = waiter.wait();
    assert_eq!(woken.status.code(), Some(0), "{}", stderr_of(&woken));
    run(&[
        "release",
        "job",
        "--token",
        &stdout_of(&woken),
        "--hold-at-least",
        "1m",
    ])
    .success();
    for args in [
        &["acquire", "pool", "--limit", "2"][..],
        &["acquire", "reads", "--shared"],
        &["status", "job"],
        &["status", "pool"],
        &["status"],
        &["exec", "work", "--", "true"],
        &["latch", "set", "etl", "--count", "1"],
        &["latch", "done", "etl", "--id", "a"],
        &["latch", "wait", "etl", "--wait", "1s"],
        &["latch", "status"],
        &["release", "job", "--force"],
    ] {
        run(args).success();
    }
    // doctor: everything allowed; only INFO, which the recipe leaves out, is not.
    let (document, code) = doctor(std::slice::from_ref(&url), &[]);
    assert_eq!(code, 0, "{document}");
    assert_eq!(
        codes(&document),
        ["server_count", "unchecked"],
        "{document}"
    );
    assert_eq!(document["per_server"][0]["refused"], serde_json::json!([]));
}
