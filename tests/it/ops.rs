//! Operations: force-release, status listings, -v/-q/--log-format json, TLS and ACL users,
//! environment variables, and the committed completions and man pages.

use crate::support::*;
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn force_release_removes_any_token_prints_it_and_exits_1_when_nothing_is_left() {
    let cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &["--ttl", "20s"]);
    cluster.servers[2].set(KEY, "someone-else");
    let output = cluster
        .redlock()
        .args(["release", "job", "--force"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let stdout = stdout_of(&output);
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    let pid = token.split(':').nth(2).unwrap();
    assert_eq!(stdout.matches(&format!("pid {pid}")).count(), 2, "{stdout}");
    assert!(stdout.contains("someone-else"), "{stdout}");
    assert_eq!(cluster.values(KEY), vec![None, None, None]);

    let again = cluster
        .redlock()
        .args(["release", "job", "--force"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(stdout_of(&again).is_empty());
    assert!(stderr_of(&again).contains("nothing to remove"));
}

#[test]
fn force_release_is_never_the_default_and_needs_a_quorum_to_say_nothing_was_there() {
    let mut cluster = Cluster::start(3);
    let token = cluster.acquire_token("job", &["--ttl", "20s"]);
    // Without --token or --force, release refuses before sending anything.
    cluster.redlock().args(["release", "job"]).assert().code(64);
    assert_eq!(cluster.holding(KEY, &token), 3);
    cluster
        .redlock()
        .args(["release", "job", "--force", "--token", &token])
        .assert()
        .code(64);
    cluster.servers[0].kill();
    cluster.servers[1].kill();
    cluster
        .redlock()
        .args(["release", "other", "--force", "--timeout", "100ms"])
        .assert()
        .code(69);
}

#[test]
fn status_without_a_name_lists_every_lock_sorted_with_its_holder() {
    let cluster = Cluster::start(3);
    for name in ["charlie", "alpha", "bravo"] {
        cluster.acquire_token(name, &["--ttl", "20s"]);
    }
    // A key under another prefix is not ours to list.
    cluster.servers[0].set("other:alpha", "x");
    let output = cluster.redlock().arg("status").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let stdout = stdout_of(&output);
    let names: Vec<&str> = stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "bravo", "charlie"], "{stdout}");
    assert!(stdout
        .lines()
        .skip(1)
        .all(|l| l.contains("held") && l.contains("pid ") && l.contains("3/3")));

    let json = cluster
        .redlock()
        .args(["status", "--json"])
        .output()
        .unwrap();
    let value: serde_json::Value = serde_json::from_str(&stdout_of(&json)).unwrap();
    let locks = value["locks"].as_array().unwrap();
    assert_eq!(locks.len(), 3);
    assert_eq!(locks[0]["name"], "alpha");
    assert!(locks[0]["holder"]["pid"].as_u64().is_some());
    assert!(locks[2]["validity_ms"].as_u64().unwrap() > 15_000);
}

#[test]
fn status_shows_holder_facts_and_per_server_ttl() {
    const TTL: Duration = Duration::from_secs(20);
    let cluster = Cluster::start(3);
    let acquiring = Instant::now();
    cluster.acquire_token("job", &["--ttl", &format!("{}s", TTL.as_secs())]);
    let output = cluster
        .redlock()
        .args(["status", "job", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let value: serde_json::Value = serde_json::from_str(&stdout_of(&output)).unwrap();
    let holder = &value["holder"];
    assert!(holder["host"].as_str().is_some_and(|h| !h.is_empty()));
    assert!(holder["pid"].as_u64().is_some());
    assert!(holder["acquired_unix_ms"].as_u64().unwrap() > 1_600_000_000_000);
    let servers = value["per_server"].as_array().unwrap();
    assert_eq!(servers.len(), 3);
    for server in servers {
        assert_left(
            "expires_in_ms",
            server["expires_in_ms"].as_u64().unwrap(),
            TTL,
            acquiring,
        );
    }
    let table = cluster.redlock().args(["status", "job"]).output().unwrap();
    let table = stdout_of(&table);
    assert!(
        table.contains("acquired ") && table.contains(" ago)"),
        "{table}"
    );
    let header = table.lines().nth(2).unwrap();
    assert!(
        header.starts_with("SERVER") && header.contains("TTL"),
        "{table}"
    );
}

#[test]
fn verbose_shows_each_server_outcome_latency_and_validity() {
    let mut cluster = Cluster::start(3);
    cluster.servers[2].kill();
    let output = cluster
        .redlock()
        .args(["acquire", "job", "-v", "--ttl", "10s"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("acquire redlock:job: 2 of 3 servers"),
        "{stderr}"
    );
    assert!(stderr.contains("validity "), "{stderr}");
    assert_eq!(stderr.matches("  set").count(), 2, "{stderr}");
    assert!(stderr.contains("down: connection refused"), "{stderr}");
    assert!(stderr.contains("ms  "), "{stderr}");
    // Without -v, success says nothing.
    let quiet = cluster
        .redlock()
        .args(["acquire", "other"])
        .output()
        .unwrap();
    assert_eq!(stderr_of(&quiet), "");
}

#[test]
fn quiet_keeps_errors_only() {
    let cluster = Cluster::start(2);
    let output = cluster.redlock().args(["acquire", "job"]).output().unwrap();
    assert!(stderr_of(&output).contains("even"));
    let output = cluster
        .redlock()
        .args(["acquire", "job", "-q"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(75));
    // Busy is an expected outcome, not an error: the exit status says it.
    assert_eq!(stderr_of(&output), "");
    let output = cluster
        .redlock()
        .args(["-q", "release", "job", "--token", "not-the-token"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = stderr_of(&output);
    assert!(!stderr.contains("even"), "{stderr}");
    assert!(stderr.contains("not held by this token"), "{stderr}");
}

#[test]
fn json_log_format_gives_one_object_per_line_and_no_secrets() {
    /// The TTL when none is given.
    const TTL: Duration = Duration::from_secs(30);
    let server = Redis::start_with(&["--requirepass", "hunter2"]);
    let url = server.url_with_password();
    let acquiring = Instant::now();
    let output = redlock()
        .args(["-s", &url, "--log-format", "json", "acquire", "job"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let token = stdout_of(&output);
    let lines = json_lines(&stderr_of(&output));
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["event"], "acquired");
    assert_eq!(lines[0]["level"], "info");
    assert_eq!(lines[0]["name"], "job");
    assert_eq!(lines[0]["token_id"], &token[..8]);
    let validity = lines[0]["validity_ms"].as_u64().unwrap();
    assert_left("validity", validity, TTL - drift(TTL), acquiring);

    let output = redlock()
        .args(["-s", &url, "--log-format", "json", "-v", "release", "job"])
        .args(["--token", &token])
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    let events: Vec<String> = json_lines(&stderr)
        .iter()
        .map(|l| l["event"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(events, ["round", "released"], "{stderr}");
    assert!(
        !stderr.contains("hunter2") && !stderr.contains(&token),
        "{stderr}"
    );
    assert!(stderr.contains(":***@"), "{stderr}");

    // The final error is a JSON line too, with the exit status.
    let output = redlock()
        .args(["-s", &url, "--log-format", "json", "extend", "job"])
        .args(["--token", &token])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let lines = json_lines(&stderr_of(&output));
    assert_eq!(lines[0]["event"], "error");
    assert_eq!(lines[0]["exit_code"], 1);
}

#[test]
fn tls_servers_work_with_a_custom_ca_and_are_refused_without_it() {
    let certs = Certs::generate();
    let servers: Vec<TlsRedis> = (0..3).map(|_| TlsRedis::start(&certs, false)).collect();
    let urls: Vec<String> = servers.iter().map(|s| s.url()).collect();
    let urls = urls.join(",");
    let ca = certs.path("ca.crt");
    let output = redlock()
        .env("REDLOCK_SERVERS", &urls)
        .args(["--tls-ca", &ca, "acquire", "job", "--timeout", "1s"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let token = stdout_of(&output);
    redlock()
        .env("REDLOCK_SERVERS", &urls)
        .env("REDLOCK_TLS_CA", &ca)
        .args(["status", "job", "--timeout", "1s"])
        .assert()
        .code(0);
    // The system's trust store does not know our test CA: no server counts.
    let output = redlock()
        .env("REDLOCK_SERVERS", &urls)
        .args(["status", "job", "--timeout", "1s"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(69));
    assert!(
        stderr_of(&output).contains("certificate") || stdout_of(&output).contains("certificate"),
        "{}",
        stdout_of(&output)
    );
    // --tls-insecure skips verification (the dangerous way out).
    redlock()
        .env("REDLOCK_SERVERS", &urls)
        .args(["--tls-insecure", "release", "job", "--timeout", "1s"])
        .args(["--token", &token])
        .assert()
        .code(0);
}

#[test]
fn tls_client_certificates_are_sent_when_the_server_requires_them() {
    let certs = Certs::generate();
    let server = TlsRedis::start(&certs, true);
    let ca = certs.path("ca.crt");
    let base = ["-s", &server.url(), "--tls-ca", &ca, "--timeout", "1s"];
    redlock()
        .args(base)
        .args(["acquire", "job"])
        .assert()
        .code(69);
    redlock()
        .args(base)
        .args(["--tls-cert", &certs.path("client.crt")])
        .args(["--tls-key", &certs.path("client.key")])
        .args(["acquire", "job"])
        .assert()
        .code(0);
}

#[test]
fn a_stopped_tls_server_costs_one_timeout() {
    // Long enough that one timeout more stands out from a loaded machine's delays.
    const TIMEOUT: Duration = Duration::from_secs(1);
    let certs = Certs::generate();
    let servers: Vec<TlsRedis> = (0..3).map(|_| TlsRedis::start(&certs, false)).collect();
    servers[0].stop();
    let urls: Vec<String> = servers.iter().map(|s| s.url()).collect();
    let timeout = format!("{}ms", TIMEOUT.as_millis());
    let started = Instant::now();
    let output = redlock()
        .env("REDLOCK_SERVERS", urls.join(","))
        .args(["--tls-ca", &certs.path("ca.crt"), "--timeout", &timeout])
        .args(["acquire", "job", "-v"])
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    // With -v every server's answer is waited for: one timeout for the stopped server (in
    // parallel with the others), not one per step: the failed handshake is not retried.
    assert!(TIMEOUT <= took && took < TIMEOUT * 2, "took {took:?}");
    let stderr = stderr_of(&output);
    let said = format!("no answer within {}", humantime::format_duration(TIMEOUT));
    assert!(stderr.contains(&said), "{stderr}");
}

#[test]
fn bad_tls_files_are_usage_errors_and_nothing_is_sent() {
    let cluster = Cluster::start(1);
    let certs = Certs::generate();
    let tls_url = format!("rediss://127.0.0.1:{}", cluster.servers[0].port);
    let missing = redlock()
        .args([
            "-s",
            &tls_url,
            "--tls-ca",
            "/nonexistent/ca.pem",
            "acquire",
            "job",
        ])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(64));
    let stderr = stderr_of(&missing);
    assert!(stderr.contains("--tls-ca /nonexistent/ca.pem"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1);
    let not_pem = redlock()
        .args(["-s", &tls_url, "--tls-ca", &certs.path("server.ext")])
        .args(["acquire", "job"])
        .output()
        .unwrap();
    assert_eq!(not_pem.status.code(), Some(64), "{}", stderr_of(&not_pem));
    redlock()
        .args(["-s", &tls_url, "--tls-cert", &certs.path("client.crt")])
        .args(["acquire", "job"])
        .assert()
        .code(64);
    // TLS options with no rediss:// server would leave traffic in the clear: refused.
    cluster
        .redlock()
        .args(["--tls-ca", &certs.path("ca.crt"), "acquire", "job"])
        .assert()
        .code(64);
    assert_eq!(cluster.values(KEY), vec![None]);
}

#[test]
fn acl_users_authenticate_from_the_url_the_environment_or_a_file() {
    // The default user may not touch lock keys, so only the ACL user can take a lock.
    let server = Redis::start_with(&[
        "--user",
        "default",
        "on",
        "nopass",
        "~nothing:*",
        "+@all",
        "--user",
        "app",
        "on",
        ">s3cret-pw",
        "~redlock:*",
        "+@all",
    ]);
    let plain = server.url();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("password");
    std::fs::write(&file, "s3cret-pw\n").unwrap();

    redlock()
        .args(["-s", &plain, "acquire", "a"])
        .assert()
        .code(69);
    redlock()
        .args([
            "-s",
            &format!("redis://app:s3cret-pw@127.0.0.1:{}", server.port),
        ])
        .args(["acquire", "b"])
        .assert()
        .code(0);
    redlock()
        .env("REDLOCK_USERNAME", "app")
        .env("REDLOCK_PASSWORD", "s3cret-pw")
        .args(["-s", &plain, "acquire", "c"])
        .assert()
        .code(0);
    redlock()
        .env("REDLOCK_USERNAME", "app")
        .args(["-s", &plain, "--password-file"])
        .arg(&file)
        .args(["acquire", "d"])
        .assert()
        .code(0);

    let wrong = redlock()
        .args([
            "-s",
            &format!("redis://app:wrong-pw@127.0.0.1:{}", server.port),
        ])
        .args(["-v", "acquire", "e"])
        .output()
        .unwrap();
    assert_eq!(wrong.status.code(), Some(69));
    let stderr = stderr_of(&wrong);
    assert!(!stderr.contains("wrong-pw"), "{stderr}");
    assert!(stderr.contains("redis://app:***@"), "{stderr}");
    assert!(stderr.to_lowercase().contains("password"), "{stderr}");
}

#[test]
fn a_password_in_the_query_is_refused_with_64_and_never_printed() {
    let server = Redis::start_with(&["--requirepass", "q-s3cret"]);
    let url = format!("redis://127.0.0.1:{}/?password=q-s3cret", server.port);
    for args in [&["acquire", "q"][..], &["status", "q", "--json"][..]] {
        let output = redlock().args(["-s", &url]).args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(64), "{args:?}");
        let all = format!("{}{}", stdout_of(&output), stderr_of(&output));
        assert!(!all.contains("q-s3cret"), "{all}");
        assert!(all.contains("unknown query parameter 'password'"), "{all}");
    }
    assert_eq!(server.get("redlock:q"), None);
}

#[test]
fn help_shows_the_environment_variable_of_every_option_and_examples() {
    for sub in ["acquire", "release", "extend", "status", "exec"] {
        let output = redlock().args([sub, "--help"]).output().unwrap();
        let help = stdout_of(&output);
        // Help wraps to the terminal, which may break a line inside `[env: …]`.
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for var in [
            "REDLOCK_SERVERS",
            "REDLOCK_TIMEOUT",
            "REDLOCK_TLS_CA",
            "REDLOCK_TLS_INSECURE",
            "REDLOCK_LOG_FORMAT",
            "REDLOCK_VERBOSE",
            "REDLOCK_QUIET",
        ] {
            assert!(flat.contains(&format!("[env: {var}")), "{sub}: {var}");
        }
        let examples = help.split("Examples:").nth(1).unwrap_or_default();
        assert!(examples.lines().count() >= 2, "{sub}:\n{help}");
    }
}

#[test]
fn committed_completions_and_man_pages_are_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for what in ["completions", "man"] {
        let fresh = tempfile::tempdir().unwrap();
        redlock()
            .args(["generate", what])
            .arg(fresh.path())
            .assert()
            .code(0);
        let mut names: Vec<_> = std::fs::read_dir(fresh.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert!(names.len() >= 3, "{what}: {names:?}");
        for name in names {
            let new = std::fs::read(fresh.path().join(&name)).unwrap();
            let committed = std::fs::read(root.join(what).join(&name)).unwrap_or_default();
            assert!(
                new == committed,
                "{what}/{} is stale: run `cargo run -- generate {what} {what}` and commit",
                name.to_string_lossy()
            );
        }
    }
}
