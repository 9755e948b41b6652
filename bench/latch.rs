//! i. What a latch costs next to a plain acquire: a `latch done` (one round that records an id
//! and announces it), and a `latch wait` woken by it (from the start of the `done` to the
//! waiter's exit), interleaved run by run so that the machine's drift affects them alike.

use super::harness::Bench;
use super::redis_server::Redis;
use super::report::Report;
use std::process::Stdio;
use std::time::{Duration, Instant};

impl Bench {
    pub(super) fn part_i(&mut self, report: &mut Report, servers: &[Redis], runs: usize) {
        let ok = |out: std::io::Result<std::process::Output>| out.is_ok_and(|o| o.status.success());
        let count = (runs + 1).to_string();
        if !ok(self
            .redlock()
            .args(["latch", "set", "i-done", "--count", &count])
            .output())
        {
            self.broken.push("i: latch set failed".into());
            return;
        }
        let (mut acquire, mut done, mut woken) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..runs {
            let started = Instant::now();
            let acquired = self
                .redlock()
                .args(["acquire", &format!("i-{i}"), "--ttl", "5s"])
                .output();
            acquire.push(started.elapsed());
            let started = Instant::now();
            let counted = self
                .redlock()
                .args(["latch", "done", "i-done", "--id", &i.to_string()])
                .output();
            done.push(started.elapsed());
            if !ok(acquired) || !ok(counted) {
                self.broken.push(format!("i: acquire or done {i} failed"));
                return;
            }
            match self.wake_up(servers, i) {
                Some(took) => woken.push(took),
                None => return,
            }
        }
        report.section("i. latch: a count-down and a waiter's wake-up, next to acquire");
        report.row("redlock acquire (plain)", &acquire, None, "");
        report.row("latch done  vs acquire", &done, Some(&acquire), "one round");
        report.row(
            "wait woken by done  vs acquire",
            &woken,
            Some(&acquire),
            "done start → waiter exit",
        );
    }

    /// One waiter on a fresh latch of 1, listening on every server, and the time from the
    /// start of the `done` that opens it to the waiter's exit.
    fn wake_up(&mut self, servers: &[Redis], i: usize) -> Option<Duration> {
        let name = format!("i-wait-{i}");
        let channel = format!("redlock:{name}\x1flatch\x1fwake");
        let set = self
            .redlock()
            .args(["latch", "set", &name, "--count", "1"])
            .status();
        let waiter = self
            .redlock()
            .args(["latch", "wait", &name, "--wait", "30s"])
            .stdout(Stdio::null())
            .spawn();
        let (Ok(set), Ok(mut waiter)) = (set, waiter) else {
            self.broken.push(format!("i: waiter {i} did not start"));
            return None;
        };
        let listening = Instant::now() + Duration::from_secs(10);
        while servers.iter().any(|s| numsub(s, &channel) == 0) {
            if Instant::now() > listening || !set.success() {
                let _ = waiter.kill();
                let _ = waiter.wait();
                self.broken.push(format!("i: waiter {i} never listened"));
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let started = Instant::now();
        let counted = self
            .redlock()
            .args(["latch", "done", &name, "--id", "x"])
            .status();
        let exited = waiter.wait();
        let took = started.elapsed();
        if !counted.is_ok_and(|s| s.success()) || !exited.is_ok_and(|s| s.success()) {
            self.broken.push(format!("i: wake-up {i} failed"));
            return None;
        }
        Some(took)
    }
}

fn numsub(server: &Redis, channel: &str) -> usize {
    let reply: redis::RedisResult<(String, usize)> = redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg(channel)
        .query(&mut server.connection());
    reply.map_or(0, |(_, n)| n)
}
