//! m. The run history: what recording a run costs. On the servers, the bytes an entry takes in
//! the list (a full history of 100 runs, `MEMORY USAGE` over `LLEN`), and what one `exec` asks
//! of a server with recording and without (`--history 0`): its commands (`INFO commandstats`,
//! the script's own calls included) and the bytes it sends (`INFO stats`). In exec's time: the
//! same `exec L -- true` with and without recording, interleaved, at 3 servers. With
//! `REDLOCK_BASELINE=/path/to/an/older/redlock`, that binary (one that records nothing) is
//! measured beside them, for the cost against a build without the history at all.

use super::harness::{interleave, Bench};
use super::redis_server::Redis;
use super::report::Report;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};

/// How many runs fill the history the bytes per entry are measured on (the default cap).
const FULL: usize = 100;

impl Bench {
    pub(super) fn part_m(&mut self, report: &mut Report, servers: &[Redis], runs: usize) {
        report.section("m. the run history: what recording a run costs");
        let server = &servers[0];
        for _ in 0..FULL {
            self.exec_true("m-full", &[]);
        }
        let key = "redlock:m-full\x1fhistory";
        let mut con = server.connection();
        let usage: Option<u64> = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(key)
            .query(&mut con)
            .ok();
        let entries: u64 = redis::cmd("LLEN").arg(key).query(&mut con).unwrap_or(0);
        let entry: Option<String> = redis::cmd("LINDEX")
            .arg(key)
            .arg(0)
            .query(&mut con)
            .ok()
            .flatten();
        if entries as usize != FULL {
            self.broken.push(format!(
                "m: {FULL} runs left {entries} entries in the history"
            ));
        }
        match usage {
            Some(bytes) if entries > 0 => report.note(&format!(
                "history of {entries} runs: {bytes} bytes in the server's memory, {} per entry (an entry is {} bytes of text)",
                bytes / entries,
                entry.as_ref().map_or(0, String::len)
            )),
            _ => report.note("history memory: unknown (MEMORY USAGE unavailable)"),
        }

        // One run's requests to one server, with and without recording (and from the baseline
        // binary, which has no history, when there is one).
        let baseline = std::env::var("REDLOCK_BASELINE").ok();
        let mut runs_asked: Vec<(&str, Command)> = [
            ("recorded", &[][..]),
            ("--history 0", &["--history", "0"][..]),
        ]
        .into_iter()
        .map(|(label, flags)| (label, self.exec_true_command("m-asked", flags)))
        .collect();
        if let Some(old) = &baseline {
            let mut old_cmd = Command::new(old);
            old_cmd
                .env("REDLOCK_SERVERS", &self.urls)
                .env("REDLOCK_TIMEOUT", super::harness::TIMEOUT)
                .args(["exec", "m-asked", "--", "true"]);
            runs_asked.push(("baseline", old_cmd));
        }
        let mut asked = Vec::new();
        for (label, mut command) in runs_asked {
            server.reset_stats();
            let ok = command
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                self.broken.push(format!("m: exec ({label}) failed"));
            }
            let calls = server.command_calls();
            let sent = net_input_bytes(server);
            let ours: BTreeMap<&String, &u64> = calls
                .iter()
                .filter(|(name, _)| !name.starts_with("config") && !name.starts_with("info"))
                .collect();
            let commands: u64 = ours.values().copied().sum();
            let listed: Vec<String> = ours
                .iter()
                .map(|(name, calls)| format!("{name} {calls}"))
                .collect();
            report.note(&format!(
                "exec L -- true, {label}: {commands} commands on each server ({}), {} bytes sent to it",
                listed.join(", "),
                sent.map_or("?".into(), |b| b.to_string())
            ));
            asked.push((commands, sent));
        }
        if let [(with, Some(with_bytes)), (without, Some(without_bytes)), ..] = asked[..] {
            report.note(&format!(
                "recording adds {} commands inside the release's own script and {} bytes to its request; no round trip",
                with.saturating_sub(without),
                with_bytes.saturating_sub(without_bytes)
            ));
        }

        // exec's time with and without recording, interleaved.
        let three: Vec<&str> = self.urls.split(',').take(3).collect();
        let three = three.join(",");
        let mut commands: Vec<(String, Command)> = [
            ("exec L -- true, recorded", &[][..]),
            ("exec L -- true, --history 0", &["--history", "0"][..]),
        ]
        .into_iter()
        .map(|(label, flags)| {
            let mut cmd = self.exec_true_command("m-time", flags);
            cmd.env("REDLOCK_SERVERS", &three);
            (label.to_string(), cmd)
        })
        .collect();
        if let Some(old) = &baseline {
            let mut cmd = Command::new(old);
            cmd.env("REDLOCK_SERVERS", &three)
                .env("REDLOCK_TIMEOUT", super::harness::TIMEOUT)
                .args(["exec", "m-time", "--", "true"]);
            commands.push(("exec L -- true, baseline binary".into(), cmd));
        }
        let (times, _) = interleave(&mut commands, runs);
        report.row(&commands[0].0, &times[0], Some(&times[1]), "goal ≤ 1.02×");
        report.row(&commands[1].0, &times[1], None, "");
        if let Some(old) = times.get(2) {
            report.row(
                &commands[0].0,
                &times[0],
                Some(old),
                "against the baseline binary",
            );
            report.row(&commands[2].0, old, None, "");
        }
    }

    /// `redlock exec NAME FLAGS -- true`.
    fn exec_true_command(&self, name: &str, flags: &[&str]) -> Command {
        let mut cmd = self.redlock();
        cmd.args(["exec", name]).args(flags).args(["--", "true"]);
        cmd
    }

    /// `redlock exec NAME FLAGS -- true`, which must succeed.
    fn exec_true(&mut self, name: &str, flags: &[&str]) {
        let ok = self
            .exec_true_command(name, flags)
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            self.broken.push(format!("m: exec {name} failed"));
        }
    }
}

/// The bytes the server has read from its clients since its stats were reset.
fn net_input_bytes(server: &Redis) -> Option<u64> {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query(&mut server.connection())
        .ok()?;
    info.lines()
        .find_map(|line| line.strip_prefix("total_net_input_bytes:"))
        .and_then(|bytes| bytes.trim().parse().ok())
}
