//! The fault margin a run ends with: when a quorum answered but a server could not vote, every
//! command says so once, naming the server, why, and what is left ("2 of 3 servers can vote: one
//! more failure stops every lock"). A misconfigured server is named even with `-q` (it will not
//! come back by itself, and a crontab's `-q` run must still mail it); a server that is down is
//! not (it may come back).

use crate::support::proxy::{Fault, Proxy};
use crate::support::*;
use std::time::Duration;

/// How much later than the third server the two good ones answer: its refusal then always
/// arrives before the round is decided on the other two (a round ends at its quorum).
const FARTHER: Duration = Duration::from_millis(30);

/// Two good servers behind proxies `FARTHER` away, and `third`'s URL.
fn servers(good: &Cluster, third: &str) -> (Vec<Proxy>, String) {
    let proxies: Vec<Proxy> = good.servers.iter().map(|s| Proxy::start(s.port)).collect();
    let mut urls: Vec<String> = proxies
        .iter()
        .map(|proxy| {
            proxy.set(Fault::Delay(FARTHER));
            format!("redis://127.0.0.1:{}", proxy.port)
        })
        .collect();
    urls.push(third.to_string());
    (proxies, urls.join(","))
}

fn exec(servers: &str, quiet: bool) -> std::process::Output {
    let mut command = redlock();
    command.env("REDLOCK_SERVERS", servers);
    if quiet {
        command.arg("-q");
    }
    command.args(["exec", "job", "--", "true"]).assert().code(0)
}

const MARGIN: &str = "warning: 2 of 3 servers can vote: one more failure stops every lock";

#[test]
fn a_server_with_a_password_not_given_is_named_once_even_with_q() {
    let good = Cluster::start(2);
    let guarded = Redis::start_with(&["--requirepass", "sekrit"]);
    let (_proxies, servers) = servers(&good, &guarded.url());
    for quiet in [false, true] {
        let said = stderr_of(&exec(&servers, quiet));
        let line = format!(
            "redlock: {MARGIN} (redis://127.0.0.1:{} cannot vote: the server requires a password",
            guarded.port
        );
        assert!(said.starts_with(&line), "-q {quiet}: {said}");
        assert_eq!(said.matches(MARGIN).count(), 1, "once per run: {said}");
        assert!(said.contains("--password-file"), "with its fix: {said}");
    }
    // In a JSON log: the margin event, its server misconfigured.
    let logged = redlock()
        .env("REDLOCK_SERVERS", &servers)
        .args(["--log-format", "json", "-q", "exec", "job", "--", "true"])
        .assert()
        .code(0);
    let events = json_lines(&stderr_of(&logged));
    let margin: Vec<_> = events.iter().filter(|e| e["event"] == "margin").collect();
    assert_eq!(margin.len(), 1, "{events:?}");
    assert_eq!(margin[0]["can_vote"], 2);
    assert_eq!(margin[0]["quorum"], 2);
    assert_eq!(margin[0]["cannot_vote"][0]["misconfigured"], true);
}

#[test]
fn a_server_that_is_down_is_named_without_q_and_not_with_it() {
    let good = Cluster::start(2);
    let closed = format!("redis://127.0.0.1:{}", free_port());
    let (_proxies, servers) = servers(&good, &closed);
    let said = stderr_of(&exec(&servers, false));
    assert!(
        said.contains(&format!("{MARGIN} ({closed} is down: connection refused)")),
        "{said}"
    );
    assert_eq!(
        stderr_of(&exec(&servers, true)),
        "",
        "-q: a server down may come back"
    );
}

#[test]
fn a_run_whose_servers_all_answer_says_nothing_of_a_margin() {
    let cluster = Cluster::start(3);
    let said = stderr_of(&exec(&cluster.urls(), false));
    assert!(!said.contains("can vote"), "{said}");
}

#[test]
fn a_tls_server_this_host_cannot_use_is_named_with_the_option_that_fixes_it() {
    let good = Cluster::start(2);
    let certs = Certs::generate();
    let wants_a_certificate = TlsRedis::start(&certs, true);
    let ca = certs.path("ca.crt");
    // The handshake's refusal, in rustls's words on the round's own wire, becomes the same
    // misconfiguration as on any connection: its CA not trusted (no --tls-ca), or no client
    // certificate sent. `status` waits for every server, so the refusal is always in.
    for (trust, said) in [
        (
            vec![],
            "its TLS certificate is signed by a CA this host does not trust: pass that CA's certificate with --tls-ca FILE",
        ),
        (
            vec!["--tls-ca", ca.as_str()],
            "the server requires a TLS client certificate: pass one with --tls-cert FILE and --tls-key FILE",
        ),
    ] {
        let servers = format!("{},{}", good.urls(), wants_a_certificate.url());
        let status = redlock()
            .env("REDLOCK_SERVERS", &servers)
            .args(trust)
            .args(["-q", "status", "job"])
            .assert()
            .code(1);
        let line = format!(
            "redlock: {MARGIN} ({} cannot vote: {said}",
            wants_a_certificate.url()
        );
        assert!(stderr_of(&status).starts_with(&line), "{}", stderr_of(&status));
    }
}
