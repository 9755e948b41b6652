//! Deployments as `redlock doctor` sees them: servers that keep their locks, doctor's `--json`
//! run and its findings read back, and docs/doctor.md's ACL recipe made into a server's user.

use super::binary::document;
use super::cluster::redlock_on;
use super::markdown::doc;
use super::one_shot::one_shot;
use super::redis_server::Redis;
use serde_json::Value;

/// What every server of a deployment that keeps its locks is started with.
pub const PERSISTENT: [&str; 4] = ["--appendonly", "yes", "--appendfsync", "always"];

/// A server that keeps its locks across a restart, with `extra` arguments.
pub fn persistent(extra: &[&str]) -> Redis {
    Redis::start_with(&[&PERSISTENT[..], extra].concat())
}

/// `redlock -s URL… doctor --json ARGS`: its document and exit status.
pub fn doctor(urls: &[String], args: &[&str]) -> (Value, i32) {
    let output = one_shot(
        redlock_on(&urls.join(",")),
        [&["doctor", "--json"], args].concat(),
    )
    .assert()
    .get_output()
    .clone();
    (document(&output), output.status.code().unwrap_or(-1))
}

/// Each finding as `(code, severity, server)`, in the order found.
pub fn findings(document: &Value) -> Vec<(String, String, String)> {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
    document["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| (text(&f["code"]), text(&f["severity"]), text(&f["server"])))
        .collect()
}

/// The codes found, each once, sorted.
pub fn codes(document: &Value) -> Vec<String> {
    let mut codes: Vec<String> = findings(document).into_iter().map(|f| f.0).collect();
    codes.sort();
    codes.dedup();
    codes
}

/// The message of the first finding with `code`.
pub fn message(document: &Value, code: &str) -> String {
    document["findings"]
        .as_array()
        .and_then(|all| all.iter().find(|f| f["code"] == code))
        .and_then(|f| f["message"].as_str())
        .unwrap_or_else(|| panic!("no {code} finding in {document}"))
        .to_string()
}

pub fn url(server: &Redis) -> String {
    server.url()
}

/// docs/doctor.md's ACL recipe, as a server of this version takes it (Redis 6.0 has no channel
/// permissions), for a user `name` with `password`, without `-command` and with `+extra`.
pub fn recipe_user(server: &Redis, name: &str, without: &[&str], extra: &[&str]) {
    let doctor_md = doc("docs/doctor.md");
    let line = doctor_md
        .lines()
        .find(|line| line.starts_with("ACL SETUSER redlock on >PASSWORD"))
        .expect("docs/doctor.md's ACL recipe");
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut server.connection())
        .unwrap();
    let channels = !info.contains("redis_version:6.0.");
    let mut setuser = redis::cmd("ACL");
    for word in line.split_whitespace().skip(1) {
        let word = match word {
            "redlock" => name,
            ">PASSWORD" => ">pw",
            "resetchannels" | "&redlock:*" if !channels => continue,
            word if without.iter().any(|w| word == format!("+{w}")) => continue,
            word => word,
        };
        setuser.arg(word);
    }
    for word in extra {
        setuser.arg(format!("+{word}"));
    }
    let _: () = setuser.query(&mut server.connection()).unwrap();
}

/// Whether the server has `ACL DRYRUN` (Redis 7.0 and later).
pub fn has_dry_run(server: &Redis) -> bool {
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut server.connection())
        .unwrap();
    !info.contains("redis_version:6.")
}
