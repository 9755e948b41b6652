//! Reaching servers safely: TLS with a CA of one's own or client certificates, bad TLS files
//! refused before anything is sent, ACL users from the URL, the environment or a file, and
//! passwords that never show.

use crate::support::*;
use std::time::{Duration, Instant};

#[test]
fn tls_servers_work_with_a_custom_ca_and_are_refused_without_it() {
    let certs = Certs::generate();
    let servers: Vec<TlsRedis> = (0..3).map(|_| TlsRedis::start(&certs, false)).collect();
    let urls: Vec<String> = servers.iter().map(|s| s.url()).collect();
    let urls = urls.join(",");
    let ca = certs.path("ca.crt");
    let acquired = redlock_cmd(["--tls-ca", &ca, "acquire", "job", "--timeout", "1s"])
        .env("REDLOCK_SERVERS", &urls)
        .assert()
        .success();
    let token = stdout_of(acquired.get_output());
    redlock_cmd(["status", "job", "--timeout", "1s"])
        .env("REDLOCK_SERVERS", &urls)
        .env("REDLOCK_TLS_CA", &ca)
        .assert()
        .success();
    // The system's trust store does not know our test CA: no server counts.
    let refused = redlock_cmd(["status", "job", "--timeout", "1s"])
        .env("REDLOCK_SERVERS", &urls)
        .assert()
        .code(69);
    let output = refused.get_output();
    assert!(
        stderr_of(output).contains("certificate") || stdout_of(output).contains("certificate"),
        "{}",
        stdout_of(output)
    );
    // --tls-insecure skips verification (the dangerous way out).
    redlock_cmd(["--tls-insecure", "release", "job", "--timeout", "1s"])
        .args(["--token", &token])
        .env("REDLOCK_SERVERS", &urls)
        .assert()
        .success();
}

#[test]
fn tls_client_certificates_are_sent_when_the_server_requires_them() {
    let certs = Certs::generate();
    let server = TlsRedis::start(&certs, true);
    let ca = certs.path("ca.crt");
    let base = ["-s", &server.url(), "--tls-ca", &ca, "--timeout", "1s"];
    redlock_cmd(base).args(["acquire", "job"]).assert().code(69);
    redlock_cmd(base)
        .args(["--tls-cert", &certs.path("client.crt")])
        .args(["--tls-key", &certs.path("client.key")])
        .args(["acquire", "job"])
        .assert()
        .success();
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
    let acquired = redlock_cmd(["--tls-ca", &certs.path("ca.crt"), "--timeout", &timeout])
        .args(["acquire", "job", "-v"])
        .env("REDLOCK_SERVERS", urls.join(","))
        .assert();
    let took = started.elapsed();
    // With -v every server's answer is waited for: one timeout for the stopped server (in
    // parallel with the others), not one per step: the failed handshake is not retried.
    let said = format!("no answer within {}", humantime::format_duration(TIMEOUT));
    acquired.success().stderr(predicate::str::contains(said));
    assert!(TIMEOUT <= took && took < TIMEOUT * 2, "took {took:?}");
}

#[test]
fn bad_tls_files_are_usage_errors_and_nothing_is_sent() {
    let cluster = Cluster::start(1);
    let certs = Certs::generate();
    let tls_url = format!("rediss://127.0.0.1:{}", cluster.servers[0].port);
    redlock_cmd(["-s", &tls_url, "--tls-ca", "/nonexistent/ca.pem"])
        .args(["acquire", "job"])
        .assert()
        .code(64)
        .stderr(predicate::str::contains("--tls-ca /nonexistent/ca.pem").and(line_count(1)));
    redlock_cmd(["-s", &tls_url, "--tls-ca", &certs.path("server.ext")])
        .args(["acquire", "job"])
        .assert()
        .code(64);
    redlock_cmd(["-s", &tls_url, "--tls-cert", &certs.path("client.crt")])
        .args(["acquire", "job"])
        .assert()
        .code(64);
    // A key that is not the certificate's: refused when the TLS configuration is made, before
    // any connection, not found out server by server.
    redlock_cmd(["-s", &tls_url, "--tls-cert", &certs.path("client.crt")])
        .args(["--tls-key", &certs.path("server.key")])
        .args(["acquire", "job"])
        .assert()
        .code(64)
        .stderr(predicate::str::contains("--tls-key").and(line_count(1)));
    // TLS options with no rediss:// server would leave traffic in the clear: refused.
    cluster
        .call(["--tls-ca", &certs.path("ca.crt"), "acquire", "job"])
        .exits(64);
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

    call(["-s", &plain, "acquire", "a"]).exits(69);
    let app = format!("redis://app:s3cret-pw@127.0.0.1:{}", server.port);
    call(["-s", &app, "acquire", "b"]).succeeds();
    redlock_cmd(["-s", &plain, "acquire", "c"])
        .env("REDLOCK_USERNAME", "app")
        .env("REDLOCK_PASSWORD", "s3cret-pw")
        .assert()
        .success();
    redlock_cmd(["-s", &plain, "--password-file"])
        .arg(&file)
        .args(["acquire", "d"])
        .env("REDLOCK_USERNAME", "app")
        .assert()
        .success();

    let wrong = format!("redis://app:wrong-pw@127.0.0.1:{}", server.port);
    let refused = call(["-s", &wrong, "-v", "acquire", "e"])
        .exits(69)
        .never_shows("wrong-pw")
        .stderr_has("redis://app:***@");
    let stderr = refused.stderr_text();
    assert!(stderr.to_lowercase().contains("password"), "{stderr}");
}

#[test]
fn a_password_in_the_query_is_refused_with_64_and_never_printed() {
    let server = Redis::start_with(&["--requirepass", "q-s3cret"]);
    let url = format!("redis://127.0.0.1:{}/?password=q-s3cret", server.port);
    for args in [&["acquire", "q"][..], &["status", "q", "--json"][..]] {
        let refused = redlock_cmd(["-s", &url]).args(args).assert().code(64);
        let output = refused.get_output();
        let all = format!("{}{}", stdout_of(output), stderr_of(output));
        assert!(!all.contains("q-s3cret"), "{all}");
        assert!(all.contains("unknown query parameter 'password'"), "{all}");
    }
    assert_eq!(server.get("redlock:q"), None);
}
