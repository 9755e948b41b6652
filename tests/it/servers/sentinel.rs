//! Sentinel-managed groups as servers (`redis+sentinel://`): resolving the master, failovers
//! under a held lock, sentinels that are down or do not know the name, and passwords for the
//! sentinels and the masters that never show.

use crate::support::groups::{Group, Passwords, Sentinel};
use crate::support::waiters::{assert_woken, waiting_on};
use crate::support::*;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// `redlock exec` over `servers` with a command that runs until the returned `done` file
/// exists; returns once the command has started.
fn start_exec(servers: &[String], ttl: Duration) -> (Running, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (started, done) = (dir.path().join("started"), dir.path().join("done"));
    let ttl = format!("{}s", ttl.as_secs());
    let child = redlock()
        .env("REDLOCK_SERVERS", servers.join(","))
        .env("REDLOCK_TIMEOUT", TEST_TIMEOUT)
        // --wait: a loaded machine may make one attempt miss the timeout; the lock is free.
        .args(["exec", "job", "--ttl", &ttl, "--wait", "10s", "--"])
        .args(["sh", "-c", &until_file(&started, &done)])
        .spawn_until("the command to start", || started.exists());
    (child, dir, done)
}

/// `status job` over `servers`, with time for a sentinel and a master each on a loaded machine.
fn status(servers: &[String]) -> std::process::Output {
    let mut command = redlock_command();
    command
        .env("REDLOCK_SERVERS", servers.join(","))
        .env("REDLOCK_TIMEOUT", "2s");
    let shown = one_shot(command, ["status", "job"]).assert();
    shown.get_output().clone()
}

#[test]
fn acquire_status_and_release_through_a_group_never_print_its_passwords() {
    let (master_pw, sentinel_pw) = ("m-s3cret", "s-s3cret");
    let group = Group::start_many(
        1,
        Passwords {
            master: Some(master_pw),
            sentinel: Some(sentinel_pw),
        },
    )
    .remove(0);
    let url = group.url().replace(
        "redis+sentinel://",
        &format!("redis+sentinel://:{master_pw}@"),
    );
    // The same group again, sentinels in another order: one server, one vote.
    let mut hosts: Vec<&str> = url["redis+sentinel://:m-s3cret@".len()..]
        .split('/')
        .next()
        .unwrap()
        .split(',')
        .collect();
    hosts.reverse();
    let again = format!("redis+sentinel://{}/g1", hosts.join(","));
    let with = |args: &[&str]| {
        let run = redlock_cmd([&["-s", &url, "-s", &again, "-v"], args].concat())
            .env("REDLOCK_SENTINEL_PASSWORD", sentinel_pw)
            .env("REDLOCK_PASSWORD", master_pw)
            .assert();
        run.get_output().clone()
    };
    let acquired = with(&["acquire", "job", "--ttl", "30s"]);
    assert_eq!(acquired.status.code(), Some(0), "{}", stderr_of(&acquired));
    let token = stdout_of(&acquired);
    let master = group.master();
    assert_eq!(master.get(KEY).as_deref(), Some(token.as_str()));

    let shown = with(&["status", "job"]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr_of(&shown));
    let table = stdout_of(&shown);
    assert!(table.contains("on 1 of 1 server,"), "{table}");
    assert!(
        table.contains(&format!("(master 127.0.0.1:{})", master.port)),
        "{table}"
    );
    let json = with(&["status", "job", "--json"]);
    assert_eq!(json.status.code(), Some(0));
    let parsed: serde_json::Value = serde_json::from_str(&stdout_of(&json)).unwrap();
    assert_eq!(
        parsed["per_server"][0]["master"],
        format!("127.0.0.1:{}", master.port)
    );

    // The sentinels refuse a client without their password; the message says where it goes.
    let refused = redlock_cmd(["-s", &group.url(), "status", "job"])
        .env("REDLOCK_PASSWORD", master_pw)
        .assert()
        .code(69)
        .stdout(predicate::str::contains("REDLOCK_SENTINEL_PASSWORD"));
    let refused = refused.get_output().clone();

    let released = with(&["release", "job", "--token", &token]);
    assert_eq!(released.status.code(), Some(0), "{}", stderr_of(&released));
    assert_eq!(master.get(KEY), None);

    for output in [&acquired, &shown, &json, &refused, &released] {
        let all = format!("{}\n{}", stdout_of(output), stderr_of(output));
        assert!(
            !all.contains(master_pw) && !all.contains(sentinel_pw),
            "{all}"
        );
    }
}

/// The TTL of the failover test: longer than an automatic failover takes (down-after 1 s, an
/// election, a promotion), so that the promoted replica still has the key it copied.
const FAILOVER_TTL: Duration = Duration::from_secs(8);

/// Waits until `port`, the new master of `group`, holds `token` with a TTL that only a renewal
/// sent after `since` can have given it: a copy from before has at most TTL minus the time
/// since, so after a third of the TTL more than five sixths left means a renewal got there.
fn wait_renewed_on(group: &Group, port: u16, token: &str, since: Instant) {
    wait_for("a renewal on the new master", FAILOVER_TTL * 2, || {
        let node = group.node(port);
        since.elapsed() > FAILOVER_TTL / 3
            && node.get(KEY).as_deref() == Some(token)
            && node.pttl(KEY) > (FAILOVER_TTL * 5 / 6).as_millis() as i64
    });
}

#[test]
fn failovers_while_exec_holds_the_lock_over_three_groups_are_followed() {
    let mut groups = Group::start_many(3, Passwords::default());
    let servers: Vec<String> = groups.iter().map(Group::url).collect();
    let (child, _dir, done) = start_exec(&servers, FAILOVER_TTL);
    let before = status(&servers);
    assert_eq!(before.status.code(), Some(0), "{}", stdout_of(&before));
    let old: Vec<u16> = groups[..2].iter().map(|g| g.master().port).collect();
    let token = groups[2].master().get(KEY).expect("held on group 3");

    // A failover while the old master still answers (it keeps taking writes until the
    // sentinels demote it): renewals go to the new master all the same.
    let new = groups[0].start_failover();
    groups[0].wait_master(new);
    wait_renewed_on(&groups[0], new, &token, Instant::now());
    // A master that stops answering (killed): the sentinels fail the group over on their own.
    let promoted = groups[1].replica().port;
    groups[1].kill_node(old[1]);
    groups[1].wait_master(promoted);
    wait_renewed_on(&groups[1], promoted, &token, Instant::now());

    let after = status(&servers);
    let table = stdout_of(&after);
    assert_eq!(after.status.code(), Some(0), "{table}");
    assert!(table.contains("on 3 of 3 servers"), "{table}");
    for port in [new, promoted] {
        assert!(
            table.contains(&format!("(master 127.0.0.1:{port})")),
            "{table}"
        );
    }
    for port in old {
        assert!(
            !table.contains(&format!("(master 127.0.0.1:{port})")),
            "{table}"
        );
    }
    println!("status before the failovers:\n{}", stdout_of(&before));
    println!("status after the failovers:\n{table}");

    std::fs::write(&done, "").unwrap();
    let output = child.finish(SLACK);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(stdout_of(&output), "finished");
    assert_eq!(groups[2].master().get(KEY), None, "released at the end");
}

#[test]
fn two_groups_failing_over_to_masters_without_the_key_lose_the_lock_with_125() {
    const TTL: Duration = Duration::from_secs(3);
    let groups = Group::start_many(3, Passwords::default());
    let servers: Vec<String> = groups.iter().map(Group::url).collect();
    let (child, _dir, done) = start_exec(&servers, TTL);
    let mut new_masters = Vec::new();
    for group in &groups[..2] {
        // The replica forgets the key (a replica that lagged, or lost it in a restart), then
        // becomes the master.
        let replica = group.replica();
        let mut con = replica.connection();
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg("replica-read-only")
            .arg("no")
            .query(&mut con)
            .unwrap();
        let _: () = redis::cmd("DEL").arg(KEY).query(&mut con).unwrap();
        new_masters.push(group.start_failover());
    }
    for (group, port) in groups.iter().zip(&new_masters) {
        group.wait_master(*port);
    }
    let failed_over = Instant::now();
    let output = child.finish(TTL + SLACK);
    assert_eq!(output.status.code(), Some(125), "{}", stderr_of(&output));
    assert!(!done.exists());
    // The next renewal (a third of the TTL away) finds the key gone, or the lease runs out
    // while renewals fail: either way the command is stopped within a TTL of the last renewal.
    assert!(
        failed_over.elapsed() < TTL * 2,
        "{:?}",
        failed_over.elapsed()
    );
    let stderr = stderr_of(&output);
    assert!(stderr.contains("lost"), "{stderr}");
    // Never a silent success: nothing claims the lock on the new masters.
    for (group, port) in groups.iter().zip(&new_masters) {
        assert_eq!(group.node(*port).get(KEY), None);
    }
}

#[test]
fn a_group_whose_sentinels_are_all_down_costs_one_timeout_and_one_vote() {
    let cluster = Cluster::start(2);
    // Two of three sentinels black-holed: the refusal of the third leaves a majority possible,
    // so the group waits for the others (and no longer than one timeout).
    let holes = [BlackHole::start(), BlackHole::start()];
    let closed = free_port();
    let group = format!(
        "{},{},127.0.0.1:{closed}/g1",
        holes[0].url().replace("redis://", "redis+sentinel://"),
        holes[1].url().replace("redis://", "")
    );
    let mut servers: Vec<String> = cluster.servers.iter().map(Redis::url).collect();
    servers.push(group.clone());
    // Long enough that one timeout more stands out from a loaded machine's delays.
    const TIMEOUT: Duration = Duration::from_secs(1);
    let started = Instant::now();
    let timeout = format!("{}ms", TIMEOUT.as_millis());
    let acquired = redlock_cmd(["--timeout", &timeout, "acquire", "job", "-v"])
        .env("REDLOCK_SERVERS", servers.join(","))
        .assert();
    let took = started.elapsed();
    let acquired = acquired.success().stderr(
        predicate::str::contains("connection refused")
            .and(predicate::str::contains("no answer in time")),
    );
    // With -v every server's answer is waited for: one timeout for the group (its sentinels
    // asked in parallel), not one per sentinel.
    assert!(TIMEOUT <= took && took < TIMEOUT * 2, "took {took:?}");
    assert_eq!(cluster.holding(KEY, &stdout_of(acquired.get_output())), 2);

    call(["-s", &group, "--timeout", "300ms", "acquire", "other"]).exits(69);
}

#[test]
fn a_wrong_master_name_is_an_error_naming_it() {
    let sentinel = Sentinel::start(None, &[]);
    let url = format!("redis+sentinel://127.0.0.1:{}/nosuch", sentinel.port);
    call(["-s", &url, "acquire", "job"])
        .exits(69)
        .stderr(predicate::str::contains(
            "its sentinels know no master named 'nosuch'",
        ));
}

#[test]
fn a_tls_group_is_reached_over_tls_and_checked_against_the_ca() {
    let certs = Certs::generate();
    let master = TlsRedis::start(&certs, false);
    let tls: Vec<String> = [
        "port 0",
        "tls-port {port}",
        "tls-replication yes",
        "tls-auth-clients no",
    ]
    .iter()
    .map(|line| line.to_string())
    .chain(
        [
            ("tls-cert-file", "server.crt"),
            ("tls-key-file", "server.key"),
            ("tls-ca-cert-file", "ca.crt"),
        ]
        .iter()
        .map(|(option, file)| format!("{option} {}", certs.path(file))),
    )
    .collect();
    let sentinel = Sentinel::start(Some(("g1", master.port)), &tls);
    let url = format!("rediss+sentinel://127.0.0.1:{}/g1", sentinel.port);
    // Two TLS handshakes in a row (sentinel, then master) in an unoptimised build.
    let redlock = |args: &[&str]| redlock_cmd([&["-s", &url, "--timeout", "2s"], args].concat());
    let ca = certs.path("ca.crt");

    redlock(&["--tls-ca", &ca, "acquire", "job"])
        .assert()
        .success();
    redlock(&["--tls-ca", &ca, "status", "job"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "(master 127.0.0.1:{})",
            master.port
        )));
    // Without the CA, neither the sentinel nor the master is trusted.
    redlock(&["acquire", "other"]).assert().code(69);
}

#[test]
fn a_waiter_on_sentinel_groups_is_woken_by_the_release_through_their_relays() {
    // Every server a group: every round, and every wake-up, goes through relays (server/relay).
    let groups = Group::start_many(3, Passwords::default());
    let servers: Vec<String> = groups.iter().map(Group::url).collect();
    let on = |args: &[&str]| {
        let mut command = redlock_on(&servers.join(","));
        command.env("REDLOCK_TIMEOUT", "2s").args(args);
        command
    };
    let holder = on(&["acquire", "job", "--ttl", "30s"]).output().unwrap();
    assert!(holder.status.success(), "{}", stderr_of(&holder));
    let token = stdout_of(&holder);
    // Queued and subscribed on every group's master: the relay subscribed before the attempt
    // it was handed with the SUBSCRIBE ran, and only then handed the attempt's answer on.
    let waiting = |group: &Group| {
        let queue = format!("{KEY}\x1fqueue");
        waiting_on(&mut group.master().connection(), KEY, &queue) == (1, 1)
    };
    let waiter = Cmd::new(on(&[
        "acquire",
        "job",
        "--wait",
        "30s",
        "--retry-delay",
        "20s",
    ]))
    .spawn_until("the waiter to queue and listen on every group", || {
        groups.iter().all(waiting)
    });
    let released = Instant::now();
    let release = on(&["release", "job", "--token", &token]).output().unwrap();
    assert!(release.status.success(), "{}", stderr_of(&release));
    let output = waiter.finish(SLACK);
    // Woken, not retried: its next try of its own was 10 s away at least.
    assert_woken(&output, released);
    let won = stdout_of(&output);
    let holding = groups
        .iter()
        .filter(|group| group.master().get(KEY).as_deref() == Some(won.as_str()))
        .count();
    assert!(holding >= 2, "held on {holding} of 3");
}
