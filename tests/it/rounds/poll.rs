//! The poll loop that runs a round on single servers (src/lock/nodes/poll.rs): one thread for
//! every server, TLS ones too, the connection's own set-up (AUTH, SELECT) in the same burst as
//! the request, and Unix sockets beside TCP.

use crate::support::*;
use std::time::{Duration, Instant};

/// The threads of process `pid` right now (0 once it is gone).
fn threads_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |tasks| tasks.count())
}

/// The most threads `running` was seen with, looked at until it ended (or for `limit`), and
/// what it said.
fn most_threads(mut running: Running, limit: Duration) -> (usize, std::process::Output) {
    let pid = running.id();
    let started = Instant::now();
    let mut most = 0;
    while running.try_wait().is_none() && started.elapsed() < limit {
        most = most.max(threads_of(pid));
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(most >= 1, "the process was never seen");
    (most, running.wait())
}

#[test]
fn a_round_on_plain_servers_runs_on_one_thread_while_a_server_is_stopped() {
    const TIMEOUT: Duration = Duration::from_secs(2);
    let cluster = Cluster::start(3);
    cluster.servers[2].stop();
    let timeout = format!("{}ms", TIMEOUT.as_millis());
    // With -v every server's answer is shown, so the stopped server keeps the round open for
    // the timeout (without it the round is decided on the other two, at once): a thread per
    // server would be alive all that time.
    let acquire = cluster
        .redlock()
        .args(["-v", "acquire", "job", "--timeout", &timeout])
        .deadline(TIMEOUT * 10)
        .spawn();
    let (most, output) = most_threads(acquire, TIMEOUT * 10);
    cluster.servers[2].resume();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(most, 1, "threads of redlock acquire during its round");
    // The late SET went out in the round, with its script's source (the server never ran
    // it), and is applied once the server runs again.
    let token = stdout_of(&output);
    wait_for(
        "the resumed server to apply the late SET",
        TIMEOUT * 5,
        || cluster.holding(KEY, &token) == 3,
    );
}

#[test]
fn a_round_on_tls_servers_runs_on_one_thread_while_a_server_is_stopped() {
    const TIMEOUT: Duration = Duration::from_secs(2);
    let certs = Certs::generate();
    let servers: Vec<TlsRedis> = (0..3).map(|_| TlsRedis::start(&certs, false)).collect();
    servers[2].stop();
    let urls: Vec<String> = servers.iter().map(TlsRedis::url).collect();
    let timeout = format!("{}ms", TIMEOUT.as_millis());
    // As over plain servers: every TLS connection is a wire of the one poll loop, its
    // handshake run by rustls inside it (server/socket.rs), not a thread per server.
    let acquire = redlock()
        .env("REDLOCK_SERVERS", urls.join(","))
        .args(["--tls-ca", &certs.path("ca.crt")])
        .args(["-v", "acquire", "job", "--timeout", &timeout])
        .deadline(TIMEOUT * 10)
        .spawn();
    let (most, output) = most_threads(acquire, TIMEOUT * 10);
    servers[2].resume();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(most, 1, "threads of redlock acquire during its round");
    // The stopped server's handshake never came back: a time-out like any other.
    let said = format!("no answer within {}", humantime::format_duration(TIMEOUT));
    assert!(stderr.contains(&said), "{stderr}");
    let token = stdout_of(&output);
    let holding = servers[..2]
        .iter()
        .filter(|server| server.get(KEY).as_deref() == Some(token.as_str()))
        .count();
    assert_eq!(holding, 2);
}

#[test]
fn a_password_and_a_database_are_sent_with_the_first_request_over_tcp_and_unix_sockets() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("redis.sock");
    let socket_arg = socket.display().to_string();
    let server = Redis::start_with(&[
        "--requirepass",
        "s3cret-pw",
        "--unixsocket",
        &socket_arg,
        "--unixsocketperm",
        "700",
    ]);
    let tcp = format!("redis://:s3cret-pw@127.0.0.1:{}/2", server.port);
    let unix = format!("unix://{socket_arg}?db=3&pass=s3cret-pw");
    for (url, db) in [(&tcp, 2), (&unix, 3)] {
        let acquired = call(["-s", url, "acquire", "job", "--ttl", "1m"]);
        let token = stdout_of(acquired.succeeds().get_output());
        let mut connection = server.connection();
        let in_db = |db: i64, connection: &mut redis::Connection| -> Option<String> {
            redis::cmd("SELECT")
                .arg(db)
                .query::<()>(connection)
                .unwrap();
            redis::cmd("GET").arg(KEY).query(connection).unwrap()
        };
        assert_eq!(in_db(db, &mut connection), Some(token.clone()), "{url}");
        assert_eq!(in_db(0, &mut connection), None, "{url}: database 0");
        call(["-s", url, "release", "job", "--token", &token]).succeeds();
        assert_eq!(in_db(db, &mut connection), None, "{url}: released");
    }
    call([
        "-s",
        &unix.replace("s3cret-pw", "wrong-pw"),
        "acquire",
        "job",
    ])
    .exits(69)
    .stderr(
        predicate::str::contains("wrong password or user")
            .and(predicate::str::contains("wrong-pw").not()),
    );
}

#[test]
fn a_waiter_listens_on_the_connections_its_attempts_use() {
    const WAIT: Duration = Duration::from_secs(60);
    // The waiter's own schedule asks again after half the retry delay at the soonest.
    const RETRY: Duration = Duration::from_secs(30);
    let cluster = Cluster::start(3);
    let holder = cluster.acquire_token("job", &["--ttl", "2m"]);
    // A long retry delay: the waiter gets the lock on the release's wake-up, which only its
    // subscriptions hear.
    let waiter = cluster
        .redlock()
        .args(["acquire", "job", "--wait", "60s", "--retry-delay", "30s"])
        .deadline(WAIT * 2)
        .spawn();
    let pid = waiter.id();
    // Subscribed on every server: each counts one subscriber to the waiter's channel.
    wait_for("the waiter to subscribe on every server", WAIT, || {
        cluster.servers.iter().all(|server| {
            let channels: Vec<String> = redis::cmd("PUBSUB")
                .arg("CHANNELS")
                .query(&mut server.connection())
                .unwrap_or_default();
            !channels.is_empty()
        })
    });
    // One connection per server, the one its attempt used, now subscribed: the CLIENT LIST of
    // each server shows ours (the test's) and that one, once the test's earlier connections
    // (the PUBSUB above) are gone: a server may not have read their end yet.
    for server in &cluster.servers {
        let mut ours = server.connection();
        let id: u64 = redis::cmd("CLIENT").arg("ID").query(&mut ours).unwrap();
        let others = |ours: &mut redis::Connection| -> Vec<String> {
            let clients: String = redis::cmd("CLIENT").arg("LIST").query(ours).unwrap();
            (clients.lines())
                .filter(|line| !line.starts_with(&format!("id={id} ")))
                .map(str::to_string)
                .collect()
        };
        wait_for("the test's own connections to close", WAIT, || {
            others(&mut ours).len() <= 1
        });
        let others = others(&mut ours);
        assert_eq!(others.len(), 1, "clients of {}: {others:?}", server.port);
        assert!(others[0].contains(" sub=1 "), "{}", others[0]);
        assert!(others[0].contains("cmd=subscribe"), "{}", others[0]);
    }
    // One thread: it makes the rounds and listens on their connections, and polls a signalfd
    // beside them (a thread watching for signals would make two, subscriptions on connections
    // of their own three, and a thread per server five).
    assert_eq!(
        threads_of(pid),
        1,
        "threads of a waiting acquire on 3 servers"
    );
    let started = Instant::now();
    cluster
        .call(["release", "job", "--token", &holder])
        .succeeds();
    let output = waiter.finish(WAIT);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert!(
        started.elapsed() < RETRY / 2,
        "woken by its own schedule, not by the release: {:?}",
        started.elapsed()
    );
    assert!(cluster.holding(KEY, &stdout_of(&output)) >= 2);
}

#[test]
fn a_one_shot_release_over_tls_reaches_every_server_that_answers() {
    // A one-shot waits for a TLS server that has yet to answer the handshake a tenth of this
    // at least before it goes (lock/nodes/behind.rs): ample for a server that is running.
    const TIMEOUT: Duration = Duration::from_secs(2);
    let certs = Certs::generate();
    let servers: Vec<TlsRedis> = (0..3).map(|_| TlsRedis::start(&certs, false)).collect();
    let urls: Vec<String> = servers.iter().map(TlsRedis::url).collect();
    let timeout = format!("{}ms", TIMEOUT.as_millis());
    let run = |args: &[&str]| {
        let ran = redlock_cmd(["--tls-ca", &certs.path("ca.crt"), "--timeout", &timeout])
            .args(args)
            .env("REDLOCK_SERVERS", urls.join(","))
            .assert()
            .success();
        stdout_of(ran.get_output())
    };
    // Each release is decided on the first two deletes, and goes: the third server's, on a
    // connection no reply has come back on yet, must not be lost with it (a reset of a TLS
    // connection closed too soon discards what its server has not read: server/socket.rs).
    for _ in 0..10 {
        let token = run(&["acquire", "job", "--ttl", "1m"]);
        run(&["release", "job", "--token", &token]);
        wait_for("the release on every server", TIMEOUT, || {
            servers.iter().all(|server| server.get(KEY).is_none())
        });
    }
}
