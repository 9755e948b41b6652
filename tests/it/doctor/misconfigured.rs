//! Servers set up wrong the way a user would, as `doctor` and every command see them: a server
//! that will not come back by itself (a password, a certificate, a server of another kind than
//! its URL says) is a `misconfigured` error with its fix, never "did not answer"; doctor's blind
//! spots (channels on the probe path, CONFIG renamed, SCRIPT renamed, the `default` user); and
//! the messages a newcomer meets first. TLS cases run on the system redis-server only.

use crate::support::deployments::*;
use crate::support::redis_cluster::RedisCluster;
use crate::support::*;
use serde_json::Value;

/// The finding about `server`: its code, severity, message and detail.
fn about(document: &Value, server: &str) -> (String, String, String, String) {
    let finding = document["findings"]
        .as_array()
        .and_then(|all| all.iter().find(|f| f["server"] == server))
        .unwrap_or_else(|| panic!("no finding about {server} in {document}"));
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (
        text(&finding["code"]),
        text(&finding["severity"]),
        text(&finding["message"]),
        text(&finding["detail"]),
    )
}

/// Three good servers, so that the quorum stands and the exit status is the findings'.
fn good() -> (Vec<Redis>, Vec<String>) {
    let servers: Vec<Redis> = (0..3).map(|_| persistent(&[])).collect();
    let urls = servers.iter().map(url).collect();
    (servers, urls)
}

#[test]
fn passwords_that_are_wrong_missing_or_unwanted_are_errors_with_their_fix() {
    let (_good, urls) = good();
    let guarded = persistent(&["--requirepass", "sekrit"]);
    let open = persistent(&[]);
    let cases = [
        (
            format!("redis://:wrong@127.0.0.1:{}", guarded.port),
            format!("redis://:***@127.0.0.1:{}", guarded.port),
            "wrong password or user",
            "--password-file",
            // The redis crate's words: it reads the server's WRONGPASS itself.
            "password authentication failed",
        ),
        (
            guarded.url(),
            guarded.url(),
            "requires a password",
            "redis://:PASSWORD@host:port",
            "NOAUTH",
        ),
        (
            format!("redis://:pw@127.0.0.1:{}", open.port),
            format!("redis://:***@127.0.0.1:{}", open.port),
            "has none",
            "leave the password out",
            "without any password configured",
        ),
    ];
    // One at a time: two URLs of one server would vote once.
    for (listed, shown, what, fix, detail) in &cases {
        let (document, code) = doctor(&[&urls[..], std::slice::from_ref(listed)].concat(), &[]);
        assert_eq!(code, 1, "{document}");
        let (code, severity, message, said) = about(&document, shown);
        assert_eq!(
            (code.as_str(), severity.as_str()),
            ("misconfigured", "error")
        );
        assert!(message.contains(what) && message.contains(fix), "{message}");
        // Plain words in the message; the server's own, verbatim, in the detail.
        assert!(!message.contains(detail), "{message}");
        assert!(said.contains(detail), "{said}");
    }
    // -v adds the cause in the server's words; without it, none.
    let text = |args: &[&str]| {
        let output = one_shot(redlock_on(&cases[1].0), args).assert().code(1);
        stdout_of(output.get_output())
    };
    assert!(!text(&["doctor"]).contains("NOAUTH"));
    assert!(text(&["-v", "doctor"]).contains("cause: NOAUTH Authentication required."));
}

#[test]
fn a_quorum_lost_to_misconfiguration_is_1_and_to_an_outage_69() {
    let guarded = persistent(&["--requirepass", "sekrit"]);
    let (document, code) = doctor(&[guarded.url()], &[]);
    assert_eq!(code, 1, "waiting will not help: {document}");
    let stopped = format!("redis://127.0.0.1:{}", free_port());
    let good = persistent(&[]);
    let (document, code) = doctor(&[guarded.url(), stopped.clone(), url(&good)], &[]);
    assert_eq!(code, 69, "the stopped one could bring it back: {document}");
    let (code, severity, ..) = about(&document, &stopped);
    assert_eq!(
        (code.as_str(), severity.as_str()),
        ("unreachable", "warning")
    );
}

#[test]
fn a_cluster_listed_as_plain_servers_and_a_server_listed_as_a_cluster_are_named() {
    let cluster = RedisCluster::start();
    let masters: Vec<String> = cluster.masters().iter().map(|m| m.url()).collect();
    let (document, code) = doctor(&masters, &[]);
    assert_eq!(code, 1, "{document}");
    for master in &masters {
        let (code, severity, message, _) = about(&document, master);
        assert_eq!(
            (code.as_str(), severity.as_str()),
            ("misconfigured", "error")
        );
        assert!(message.contains("redis+cluster://host:port"), "{message}");
    }
    let plain = persistent(&[]);
    let as_cluster = format!("redis+cluster://127.0.0.1:{}", plain.port);
    let (document, code) = doctor(std::slice::from_ref(&as_cluster), &[]);
    assert_eq!(code, 1, "{document}");
    let (code, _, message, _) = about(&document, &as_cluster);
    assert_eq!(code, "misconfigured");
    assert!(
        message.contains("name it as redis://host:port"),
        "{message}"
    );
}

#[test]
fn tls_mistakes_are_named_with_the_option_that_fixes_them() {
    if std::env::var_os("REDLOCK_TEST_SERVER").is_some_and(|s| !s.is_empty()) {
        return; // TLS runs on the system redis-server only.
    }
    let certs = Certs::generate();
    certs.other_name();
    let trusted = TlsRedis::start(&certs, false);
    let client_cert = TlsRedis::start(&certs, true);
    let misnamed = TlsRedis::start_with(
        &certs,
        false,
        &[
            "--tls-cert-file",
            &certs.path("other.crt"),
            "--tls-key-file",
            &certs.path("other.key"),
        ],
    );
    let plain = persistent(&[]);
    let ca = certs.path("ca.crt");
    let case = |url: String, ca: Option<&str>, what: &str, fix: &str| {
        let mut command = redlock_on(&url);
        if let Some(ca) = ca {
            command.env("REDLOCK_TLS_CA", ca);
        }
        let output = one_shot(command, ["doctor", "--json"]).assert().code(1);
        let document = document(output.get_output());
        let (code, severity, message, _) = about(&document, &url);
        assert_eq!(
            (code.as_str(), severity.as_str()),
            ("misconfigured", "error"),
            "{url}: {document}"
        );
        assert!(message.contains(what) && message.contains(fix), "{message}");
    };
    case(trusted.url(), None, "does not trust", "--tls-ca");
    case(
        misnamed.url(),
        Some(&ca),
        "another name",
        "host the certificate names",
    );
    case(
        client_cert.url(),
        Some(&ca),
        "client certificate",
        "--tls-cert",
    );
    case(
        format!("redis://127.0.0.1:{}", trusted.port),
        None,
        "speaks TLS only",
        "write rediss://",
    );
    case(
        format!("rediss://127.0.0.1:{}", plain.port),
        Some(&ca),
        "does not speak TLS",
        "write redis://",
    );
}

#[test]
fn a_user_without_channels_is_found_on_the_probe_path() {
    let server = persistent(&[]);
    if !has_dry_run(&server) {
        return; // Redis 6.0 has no channel permissions.
    }
    // The README's user, without channels and without ACL DRYRUN: doctor must probe.
    let _: () = redis::cmd("ACL")
        .arg(
            &[
                "SETUSER",
                "nochan",
                "on",
                ">pw",
                "~*",
                "resetchannels",
                "+@all",
                "-acl",
            ][..],
        )
        .query(&mut server.connection())
        .unwrap();
    let url = format!("redis://nochan:pw@127.0.0.1:{}", server.port);
    let shown = format!("redis://nochan:***@127.0.0.1:{}", server.port);
    let (document, _) = doctor(&[url], &[]);
    assert_eq!(document["per_server"][0]["access"], "a probe", "{document}");
    let (code, severity, message, _) = about(&document, &shown);
    assert_eq!(
        (code.as_str(), severity.as_str()),
        ("notifications", "warning")
    );
    assert!(
        message.contains("PUBLISH") && message.contains("SUBSCRIBE"),
        "{message}"
    );
}

#[test]
fn what_doctor_cannot_read_is_named_and_fails_strict() {
    let (_good, mut urls) = good();
    let hidden = Redis::start_with(&[
        "--appendonly",
        "yes",
        "--appendfsync",
        "everysec",
        "--rename-command",
        "CONFIG",
        "",
    ]);
    urls.push(hidden.url());
    let (document, code) = doctor(&urls, &[]);
    assert_eq!(code, 0, "a warning: {document}");
    let (code, severity, message, _) = about(&document, &hidden.url());
    assert_eq!((code.as_str(), severity.as_str()), ("unchecked", "warning"));
    assert!(
        message.contains("appendfsync") && message.contains("--read-as"),
        "{message}"
    );
    let (document, code) = doctor(&urls, &["--strict"]);
    assert_eq!(code, 1, "{document}");
}

#[test]
fn a_renamed_script_command_is_a_warning_when_every_lock_works() {
    let (_good, mut urls) = good();
    let renamed = persistent(&["--rename-command", "SCRIPT", ""]);
    urls.push(renamed.url());
    let (document, code) = doctor(&urls, &[]);
    assert_eq!(code, 0, "{document}");
    let (code, severity, message, _) = about(&document, &renamed.url());
    assert_eq!(
        (code.as_str(), severity.as_str()),
        ("notifications", "warning")
    );
    assert!(message.contains("SCRIPT LOAD"), "{message}");
    redlock_cmd(["-s", &renamed.url(), "acquire", "job", "--ttl", "5s"])
        .assert()
        .success();
}

#[test]
fn a_fix_never_restricts_the_default_user() {
    let server = persistent(&[]);
    let _: () = redis::cmd("ACL")
        .arg(&["SETUSER", "default", "-zpopmin"][..])
        .query(&mut server.connection())
        .unwrap();
    let (document, code) = doctor(&[server.url()], &[]);
    assert_eq!(code, 1, "{document}");
    let (code, _, message, _) = about(&document, &server.url());
    assert_eq!(code, "denied");
    assert!(
        message.contains("ACL SETUSER redlock on >PASSWORD"),
        "{message}"
    );
    assert!(!message.contains("SETUSER default"), "{message}");
}

#[test]
fn the_documented_acl_passes_strict_with_a_reader() {
    let servers: Vec<Redis> = (0..3).map(|_| persistent(&[])).collect();
    for server in &servers {
        recipe_user(server, "redlock", &[], &[]);
        let _: () = redis::cmd("ACL")
            .arg(
                &[
                    "SETUSER",
                    "redlock-doctor",
                    "on",
                    ">docpw",
                    "-@all",
                    "+ping",
                    "+info",
                    "+time",
                    "+config|get",
                ][..],
            )
            .query(&mut server.connection())
            .unwrap();
    }
    let urls: Vec<String> = servers
        .iter()
        .map(|s| format!("redis://redlock:pw@127.0.0.1:{}", s.port))
        .collect();
    let (own, code) = doctor(&urls, &["--strict"]);
    assert_eq!(code, 1, "it cannot read INFO as itself: {own}");
    assert_eq!(codes(&own), ["unchecked"], "{own}");
    let output = one_shot(
        {
            let mut command = redlock_on(&urls.join(","));
            command.env("REDLOCK_READ_AS_PASSWORD", "docpw");
            command
        },
        [
            "doctor",
            "--json",
            "--strict",
            "--read-as",
            "redlock-doctor",
        ],
    )
    .assert()
    .code(0);
    let document = document(output.get_output());
    assert_eq!(findings(&document), [], "{document}");
    assert_eq!(
        document["per_server"][0]["nodes"][0]["appendfsync"],
        "always"
    );
}

#[test]
fn a_listing_that_could_not_finish_never_says_no_locks() {
    let stopped = format!("redis://127.0.0.1:{}", free_port());
    for args in [&["status"][..], &["latch", "status"][..]] {
        let output = one_shot(redlock_on(&stopped), args).assert().code(69);
        let output = output.get_output();
        assert_eq!(stdout_of(output), "", "{args:?}");
        let said = stderr_of(output);
        assert!(said.contains("could not finish the list"), "{said}");
        assert!(said.contains("connection refused"), "{said}");
    }
}

#[test]
fn the_first_mistakes_get_plain_messages() {
    let server = persistent(&[]);
    let bare = format!("127.0.0.1:{}", server.port);
    redlock_cmd(["-s", &bare, "status", "job"])
        .assert()
        .code(64)
        .stderr(predicate::str::contains(format!("write redis://{bare}")).and(line_count(1)));
    let other = persistent(&[]);
    let third = persistent(&[]);
    let spaced = format!("{} {}\t{}", server.url(), other.url(), third.url());
    let output = one_shot(redlock_on(&spaced), ["status", "job"])
        .assert()
        .code(1);
    assert!(stdout_of(output.get_output()).contains("free on all 3 servers"));
    let output = redlock_cmd(["-s", &server.url(), "status", "job"])
        .assert()
        .code(1);
    assert!(stdout_of(output.get_output()).contains("free on its 1 server"));
    let replica = Redis::start_with(&["--replicaof", "127.0.0.1", &server.port.to_string()]);
    let urls = format!("{},{},{}", server.url(), other.url(), replica.url());
    let output = one_shot(redlock_on(&urls), ["-v", "acquire", "job", "--ttl", "5s"])
        .assert()
        .success();
    let said = stderr_of(output.get_output());
    assert!(said.contains("cannot vote: replica (read-only)"), "{said}");
}

#[test]
fn a_listing_on_a_server_shared_with_many_other_keys_finds_every_lock() {
    let server = persistent(&["--appendfsync", "no"]);
    // An application's keys, written by one script: far more than one --timeout of SCAN pages.
    let _: () = redis::cmd("EVAL")
        .arg("for i = 1, tonumber(ARGV[1]) do redis.call('set', 'app:' .. i, 'x') end")
        .arg(0)
        .arg(300_000)
        .query(&mut server.connection())
        .unwrap();
    // The locks to list, set up with time to spare: the server writes the script's 300,000 keys
    // to its append-only file before it answers again, which a loaded machine's disk can hold
    // up past the default --timeout.
    for n in 0..20 {
        redlock_cmd([
            "-s",
            &server.url(),
            "acquire",
            &format!("job{n}"),
            "--ttl",
            "5m",
            "--timeout",
            "5s",
        ])
        .assert()
        .success();
    }
    // The default --timeout: each page is held to it, the listing as a whole is not.
    let output = redlock_cmd(["-s", &server.url(), "status", "--json"])
        .assert()
        .success();
    let document = document(output.get_output());
    let locks = document["locks"].as_array().expect("locks");
    assert_eq!(locks.len(), 20, "{document}");
}

#[test]
fn connections_refused_for_maxclients_are_a_warning_with_their_rule() {
    let (_good, mut urls) = good();
    let full = persistent(&["--maxclients", "4"]);
    // Clients fill it until one is refused (and counted) before any is let go: four, or fewer
    // while the harness's own first connection is still being closed.
    let client = redis::Client::open(full.url()).unwrap();
    let mut held: Vec<redis::Connection> = Vec::new();
    loop {
        let opened = client
            .get_connection_with_timeout(std::time::Duration::from_secs(2))
            .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c).map(|_| c));
        match opened {
            Ok(connection) => held.push(connection),
            Err(_) => break,
        }
        assert!(held.len() <= 4, "maxclients 4 let a fifth client in");
    }
    held.truncate(1);
    urls.push(full.url());
    let (document, code) = doctor(&urls, &[]);
    assert_eq!(code, 0, "a warning: {document}");
    let (code, severity, message, _) = about(&document, &full.url());
    assert_eq!((code.as_str(), severity.as_str()), ("clients", "warning"));
    assert!(message.contains("refused 1 connection"), "{message}");
    assert_eq!(document["per_server"][3]["nodes"][0]["maxclients"], 4);
    drop(held);
}
