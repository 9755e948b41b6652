//! p. A server shared with an application: `status` (every lock) on one server that holds
//! 1,000,000 other keys and 20 locks. Listed from the index of the keys redlock set (the default
//! on a server of over 100,000 keys, lock/list.rs) next to `status --scan`, which walks every
//! key as every listing did before the index, interleaved; and a check that the index's listing
//! has every one of the 20 locks.

use super::harness::{interleave, Bench};
use super::redis_server::Redis;
use super::report::{percentile, Report};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The locks listed among the other keys.
const LOCKS: usize = 20;

/// Sets `count` keys `p-app:<i>` on the server, a script per 100,000 (one round trip each).
fn fill(server: &Redis, count: u64) {
    let mut con = server.connection();
    let mut from = 1;
    while from <= count {
        let to = (from + 99_999).min(count);
        let _: () = redis::cmd("EVAL")
            .arg("for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do redis.call('set', 'p-app:' .. i, 'x') end")
            .arg(0)
            .arg(from)
            .arg(to)
            .query(&mut con)
            .expect("filling the server");
        from = to + 1;
    }
}

impl Bench {
    pub(super) fn part_p(
        &mut self,
        report: &mut Report,
        servers: &[Redis],
        others: u64,
        runs: usize,
    ) {
        report.section(&format!(
            "p. status (every lock): {LOCKS} locks among {others} other keys on one server"
        ));
        let server = &servers[0];
        let url = format!("redis://127.0.0.1:{}", server.port);
        fill(server, others);
        let base = self.redlock();
        let one = |args: &[&str]| {
            let mut cmd = Command::new(base.get_program());
            cmd.envs(base.get_envs().filter_map(|(k, v)| Some((k, v?))))
                .env("REDLOCK_SERVERS", &url)
                .stdin(Stdio::null())
                .args(args);
            cmd
        };
        for i in 0..LOCKS {
            let ok = one(&["acquire", &format!("p-lock-{i}"), "--ttl", "10m"])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                self.broken.push(format!("p: acquire p-lock-{i} failed"));
            }
        }
        let listed = |mut cmd: Command| {
            let out = cmd.stderr(Stdio::null()).output().ok();
            out.map_or(0, |out| {
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .filter(|line| line.starts_with("p-lock-"))
                    .count()
            })
        };
        for (label, args) in [
            ("index", &["status"][..]),
            ("--scan", &["status", "--scan"][..]),
        ] {
            let found = listed(one(args));
            if found != LOCKS {
                self.broken.push(format!(
                    "p: status ({label}) listed {found} of the {LOCKS} locks"
                ));
            }
        }
        let mut commands = vec![
            ("status (from the index)".to_string(), one(&["status"])),
            (
                "status --scan (every key)".to_string(),
                one(&["status", "--scan"]),
            ),
        ];
        for (_, cmd) in &mut commands {
            cmd.stdout(Stdio::null()).stderr(Stdio::null());
        }
        let (times, _) = interleave(&mut commands, runs);
        report.row(
            &commands[0].0,
            &times[0],
            Some(&times[1]),
            "goal well under 1 s",
        );
        report.row(&commands[1].0, &times[1], None, "");
        if percentile(&times[0], 0.5) >= Duration::from_secs(1) {
            self.broken
                .push("p: listing from the index took a second or more".to_string());
        }
        // The other parts run on clean servers.
        let _: () = redis::cmd("FLUSHALL")
            .query(&mut server.connection())
            .expect("FLUSHALL");
    }
}
