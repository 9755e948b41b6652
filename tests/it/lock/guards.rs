//! What every run guards against at no cost to a run that does not need it: one server under two
//! names votes once; a replica, a full server and a refused command say what they are; a
//! refused notification never fails a release or a count-down; and RESP3 or a wildcard address
//! say what to write instead.

use crate::support::deployments::recipe_user;
use crate::support::*;
use std::time::Duration;

/// The two holders: a lock held on P and Q; P restarts empty. Listed as 127.0.0.1:P,
/// `alias` (another name of P) and Q, a second acquire must find it busy (P and Q are two
/// servers, Q still holds it), not take it on "2 of 3".
fn second_holder_refused(first: &mut Redis, alias: &str, q: &Redis) {
    let pq = format!("{},{}", first.url(), q.url());
    one_shot(redlock_on(&pq), ["acquire", "job", "--ttl", "1m"])
        .assert()
        .success();
    first.restart();
    let listed = format!("{},{alias},{}", first.url(), q.url());
    one_shot(redlock_on(&listed), ["acquire", "job", "--ttl", "1m"])
        .assert()
        .code(75)
        .stderr(predicate::str::contains(format!(
            "{} and {alias} are one server",
            first.url()
        )));
    assert!(
        first.get(KEY).is_none(),
        "nothing granted on P: {:?}",
        first.get(KEY)
    );
}

#[test]
fn one_server_under_two_names_votes_once() {
    let mut p = Redis::start();
    let q = Redis::start();
    let alias = format!("redis://localhost:{}", p.port);
    second_holder_refused(&mut p, &alias, &q);
}

#[test]
fn a_unix_socket_of_a_listed_server_votes_once() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("redis.sock");
    let mut p = Redis::start_with(&["--unixsocket", &socket.display().to_string()]);
    let q = Redis::start();
    let alias = format!("unix://{}", socket.display());
    second_holder_refused(&mut p, &alias, &q);
}

#[test]
fn a_replica_is_named_as_one_not_as_down() {
    let master = Redis::start();
    let replica = Redis::start_with(&["--replicaof", "127.0.0.1", &master.port.to_string()]);
    call(["-s", &replica.url(), "acquire", "job"])
        .exits(69)
        .stderr(
            predicate::str::contains(format!(
                "{}: replica (read-only): list its master, or the group as redis+sentinel://",
                replica.url()
            ))
            .and(line_count(1)),
        );
}

#[test]
fn a_server_out_of_memory_says_so() {
    let server = Redis::start();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(1)
        .query(&mut server.connection())
        .unwrap();
    call(["-s", &server.url(), "acquire", "job"])
        .exits(69)
        .stderr_has("out of memory (maxmemory)")
        .stderr_lines(1);
}

#[test]
fn a_command_refused_inside_a_script_is_named() {
    let server = Redis::start();
    // Every release with nobody waiting ends in DEL; a successful acquire sends none.
    recipe_user(&server, "nodel", &["del"], &[]);
    let url = format!("redis://nodel:pw@127.0.0.1:{}", server.port);
    let acquired = call(["-s", &url, "acquire", "job"]).succeeds();
    let token = acquired.stdout_text();
    call(["-s", &url, "release", "job", "--token", &token]).exits(69)
        .stderr(
            predicate::str::contains(
                "the ACL user may not run DEL (in a script): give it the ACL that docs/doctor.md lists",
            )
            .and(predicate::str::contains("pw@").not()),
        );
}

/// A release with a waiter queued, and a latch's count-down, on `server` reached as `url`,
/// where every PUBLISH is refused: both succeed, nothing is reserved for the waiter nobody
/// told, and the waiter gets the lock at its next retry.
fn notifications_refused(server: &Redis, url: &str) {
    let run = |args: &[&str]| one_shot(redlock_on(url), args).assert();
    let token = stdout_of(
        run(&["acquire", "job", "--ttl", "1m"])
            .success()
            .get_output(),
    );
    let waiter = Cmd::new(redlock_on(url))
        .args(["acquire", "job", "--wait", "30s", "--retry-delay", "2s"])
        .spawn();
    wait_for("the waiter to queue", Duration::from_secs(10), || {
        server.keys().iter().any(|key| key.ends_with("\u{1f}queue"))
    });
    run(&["release", "job", "--token", &token]).success();
    let value = server.get(KEY);
    assert!(
        value.as_deref().is_none_or(|v| !v.starts_with("next:")),
        "a reservation for a waiter nobody told: {value:?}"
    );
    let waited = waiter.wait();
    assert_eq!(waited.status.code(), Some(0), "{}", stderr_of(&waited));
    run(&["latch", "set", "etl", "--count", "1"]).success();
    run(&["latch", "done", "etl", "--id", "a"]).success();
    run(&["latch", "wait", "etl", "--wait", "1s"]).success();
}

#[test]
fn notifications_never_decide_an_outcome() {
    let renamed = Redis::start_with(&["--rename-command", "PUBLISH", ""]);
    notifications_refused(&renamed, &renamed.url());
    let server = Redis::start();
    recipe_user(&server, "nopublish", &["publish"], &[]);
    notifications_refused(
        &server,
        &format!("redis://nopublish:pw@127.0.0.1:{}", server.port),
    );
}

#[test]
fn resp3_on_a_server_without_hello_says_what_to_do() {
    // A server that does not know HELLO, as Redis 5 does not.
    let server = Redis::start_with(&["--rename-command", "HELLO", ""]);
    let url = format!("redis://127.0.0.1:{}/?protocol=3", server.port);
    call(["-s", &url, "acquire", "job"]).exits(69).stderr(
        predicate::str::contains("does not speak RESP3")
            .and(predicate::str::contains("leave ?protocol=3 out of its URL"))
            .and(line_count(1)),
    );
}

#[test]
fn a_wildcard_address_is_a_usage_error() {
    call(["-s", "redis://0.0.0.0:6390", "acquire", "job"]).exits(64)
        .stderr(
            predicate::str::contains(
                "invalid server URL 'redis://0.0.0.0:6390': 0.0.0.0 and :: are where a server listens",
            )
            .and(predicate::str::contains("InvalidClientConfig").not())
            .and(line_count(1)),
        );
}
