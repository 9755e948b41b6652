//! `redlock latch`'s commands and their refusals: a retried count-down counts once and one
//! without an id counts anew; `set` is a no-op for the same count and refuses another; `done` and
//! `wait` with a count create the latch and without one refuse an unknown latch; bad input exits
//! 64 leaving nothing; without a quorum `done` and `wait` exit 69; `status` lists latches apart
//! from locks.

use crate::support::latches::*;
use crate::support::*;

#[test]
fn a_retried_count_down_counts_once_and_one_without_an_id_counts_anew() {
    let cluster = Cluster::start(3);
    latch(&cluster, &["set", "etl", "--count", "3"])
        .assert()
        .success();
    for _ in 0..3 {
        let done = latch(&cluster, &["done", "etl", "--id", "host-a", "--json"])
            .assert()
            .success();
        assert_eq!(document(done.get_output())["done"], 1);
    }
    let status = latch(&cluster, &["status", "etl"]).assert().code(1);
    let text = stdout_of(status.get_output());
    assert!(
        text.starts_with("latch etl: 1 of 3 done: host-a (") && text.contains("waiting for 2"),
        "{text}"
    );
    for _ in 0..2 {
        count_down_anonymously(&cluster);
    }
    let status = latch(&cluster, &["status", "etl", "--json"])
        .assert()
        .success();
    let status = document(status.get_output());
    assert_eq!(status["state"], "open");
    assert_eq!(status["done"], 3);
}

fn count_down_anonymously(cluster: &Cluster) {
    latch(cluster, &["done", "etl"]).assert().success();
}

#[test]
fn set_is_a_no_op_for_the_same_count_and_refuses_another() {
    let cluster = Cluster::start(3);
    let first = latch(&cluster, &["set", "etl", "--count", "3", "--json"])
        .assert()
        .success();
    let first = document(first.get_output());
    assert_eq!(first["created"], 3);
    assert_eq!(first["votes"], 3);
    assert_eq!(first["count"], 3);
    assert_eq!(first["state"], "waiting");
    assert_eq!(first["missing"], 3);
    let again = latch(
        &cluster,
        &["set", "etl", "--count", "3", "--ttl", "1h", "--json"],
    )
    .assert()
    .success();
    let again = document(again.get_output());
    assert_eq!(again["created"], 0);
    // The first set's TTL (12h by default) stands.
    assert!(again["expires_in_ms"].as_u64().unwrap() > 3_600_000);
    latch(&cluster, &["set", "etl", "--count", "4"])
        .assert()
        .code(75)
        .stderr(predicate::str::contains(
            "latch 'etl' exists with count 3 on 3 server(s), not 4",
        ));
    latch(&cluster, &["done", "etl", "--id", "a", "--count", "4"])
        .assert()
        .code(75);
    let status = latch(&cluster, &["status", "etl", "--json"]).assert();
    assert_eq!(
        document(status.get_output())["done"],
        0,
        "a refused done counted"
    );
}

#[test]
fn done_and_wait_with_a_count_create_the_latch_and_without_one_refuse_an_unknown_latch() {
    let cluster = Cluster::start(3);
    for args in [
        &["done", "etl", "--id", "host-a"][..],
        &["wait", "etl", "--wait", "1s"][..],
    ] {
        let refused = latch(&cluster, args).assert().code(64);
        assert_eq!(
            stderr_of(refused.get_output()),
            "redlock: latch 'etl' does not exist on any server that answered; expected `redlock latch set etl --count N` first, or --count N here"
        );
        assert_eq!(cluster.servers[0].pttl(LATCH_KEY), -2, "{args:?} wrote");
    }
    let wait = latch(
        &cluster,
        &["wait", "etl", "--count", "1", "--wait", "0s", "--json"],
    )
    .assert()
    .code(75);
    assert_eq!(document(wait.get_output())["state"], "waiting");
    let done = latch(
        &cluster,
        &["done", "other", "--id", "x", "--count", "1", "--json"],
    )
    .assert()
    .success();
    let done = document(done.get_output());
    assert_eq!(done["open"], true);
    assert_eq!(done["id"], "x");
}

#[test]
fn bad_input_exits_64_and_leaves_nothing() {
    let cluster = Cluster::start(1);
    for args in [
        &["set", "etl", "--count", "0"][..],
        &["set", "etl", "--count", "1001"][..],
        &["set", "etl", "--count", "three"][..],
        &["set", "etl", "--count", "2", "--ttl", "8d"][..],
        &["set", "", "--count", "2"][..],
        &["set", "a\nb", "--count", "2"][..],
        &["done", "etl", "--id", ""][..],
        &["done", "etl", "--id", "a\u{1f}count"][..],
        &["wait", "etl", "--wait", "5"][..],
    ] {
        let refused = latch(&cluster, args).assert().code(64);
        let message = stderr_of(refused.get_output());
        // A duration without a unit gets the flock hint, which says what to write instead.
        assert!(
            message.lines().count() == 1
                && (message.contains("expected") || message.contains("need a unit")),
            "{args:?}: {message}"
        );
    }
    // clap's own words for a missing flag: still one line, and 64.
    latch(&cluster, &["set", "etl"])
        .assert()
        .code(64)
        .stderr(predicate::str::contains("--count <N>"));
    let keys = cluster.servers[0].keys();
    assert!(keys.is_empty(), "{keys:?}");
}

#[test]
fn without_a_quorum_done_and_wait_exit_69_and_a_retried_count_down_counts_once() {
    let cluster = Cluster::start(3);
    latch(&cluster, &["set", "etl", "--count", "2"])
        .assert()
        .success();
    cluster.servers[1].stop();
    cluster.servers[2].stop();
    latch(&cluster, &["done", "etl", "--id", "host-a"])
        .assert()
        .code(69)
        .stderr(
            predicate::str::starts_with(
                "redlock: cannot count down latch 'etl': no quorum: 1 of 3",
            )
            .trim(),
        );
    latch(&cluster, &["status", "etl"]).assert().code(69);
    latch(&cluster, &["wait", "etl", "--wait", "0s"])
        .assert()
        .code(69)
        .stderr(predicate::str::starts_with(
            "redlock: cannot wait for latch 'etl': no quorum: 1 of 3 servers answered, 2 needed (",
        ));
    // As its help says.
    let help = latch(&cluster, &["wait", "--help"]).assert().success();
    let help = stdout_of(help.get_output()).replace('\n', " ");
    assert!(
        help.contains("when too few servers answer to tell (69)"),
        "{help}"
    );
    cluster.servers[1].resume();
    cluster.servers[2].resume();
    count_down(&cluster, "host-a");
    let status = latch(&cluster, &["status", "etl", "--json"]).assert();
    assert_eq!(document(status.get_output())["done"], 1);
}

#[test]
fn status_lists_latches_apart_from_locks() {
    let cluster = Cluster::start(3);
    cluster.acquire_token("etl", &["--ttl", "60s"]);
    latch(&cluster, &["set", "etl", "--count", "2"])
        .assert()
        .success();
    count_down(&cluster, "host-a");
    let list = cluster.call(["status", "--json"]).succeeds();
    let list = document(list.get_output());
    let locks = list["locks"].as_array().unwrap();
    assert_eq!(locks.len(), 1, "{list}");
    assert_eq!(locks[0]["name"], "etl");
    let latches = list["latches"].as_array().unwrap();
    assert_eq!(latches.len(), 1, "{list}");
    assert_eq!(latches[0]["name"], "etl");
    assert_eq!(latches[0]["key"], LATCH_KEY);
    assert_eq!(latches[0]["done"], 1);
    let text = cluster.call(["status"]);
    let text = text.stdout_text();
    let (locks, latches) = text.split_once("\n\n").expect("two tables");
    assert!(locks.starts_with("NAME") && locks.contains("etl"), "{text}");
    assert!(latches.starts_with("LATCH"), "{text}");
    assert!(latches.contains("etl    waiting  1/2   3/3"), "{text}");
    let only = latch(&cluster, &["status"]).assert();
    assert_eq!(stdout_of(only.get_output()), latches);
}
