//! o. The hand-over and its order: the gap from a holder's command ending to a queued waiter's
//! command starting, on loopback and with every server 20 ms away (a delay proxy in front of
//! each, 10 ms each way); first come, first served (E, queued early, before L, queued late); and
//! a writer that waits before every reader that arrived 0.2 s or more after it, also with one of
//! 5 servers stopped. With `REDLOCK_BASELINE=/path/to/an/older/redlock`, that binary runs the
//! same runs, for a before-and-after of one change.

use super::harness::{Bench, REDLOCK};
use super::proxy::{Fault, Proxy};
use super::redis_server::Redis;
use super::report::{ms, percentile, Report};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the holder of a gap run holds, and when the waiter arrives.
const HOLD: &str = "1.5";
const WAITER_AFTER: Duration = Duration::from_millis(200);
/// The E/L run: the holder holds 2 s, E arrives at +0.2 s and L at +1.4 s.
const EL_AT: [Duration; 2] = [Duration::from_millis(200), Duration::from_millis(1400)];
/// The readers' stream: one every `READER_EVERY`, each inside for 0.3 s; the writer arrives
/// `WRITER_AT` into it; a reader that arrived `GRACE` or more after the writer must enter after it.
const READERS: u32 = 16;
const READER_EVERY: Duration = Duration::from_millis(100);
const WRITER_AT: Duration = Duration::from_millis(550);
const GRACE: Duration = Duration::from_millis(200);

impl Bench {
    /// o. the hand-over gap and the order of the queue, `runs` times each (10 at 20 ms).
    pub(super) fn part_o(&mut self, report: &mut Report, servers: &[Redis], runs: usize) {
        report.section("o. the hand-over: gap, first come first served, writer preference");
        let mut binaries = vec![("now", REDLOCK.clone())];
        if let Ok(old) = std::env::var("REDLOCK_BASELINE") {
            binaries.push(("baseline", old));
        }
        let direct = urls(servers.iter().map(|s| s.port));
        let three = urls(servers[..3].iter().map(|s| s.port));
        let proxies: Vec<Proxy> = servers[..3].iter().map(|s| Proxy::start(s.port)).collect();
        for proxy in &proxies {
            proxy.set(Fault::Delay(Duration::from_millis(10)));
        }
        let far = urls(proxies.iter().map(|p| p.port));
        for (label, binary) in &binaries {
            let near = self.gaps(binary, &three, runs);
            report.note(&format!(
                "{label:<8} gap, loopback, 3 servers, {HOLD} s hold: {} ({runs} runs; goal median ≤ 10 ms, max ≤ 30 ms)",
                spread(&near)
            ));
            let away = self.gaps(binary, &far, runs.div_ceil(2));
            report.note(&format!(
                "{label:<8} gap, 20 ms RTT, 3 servers, {HOLD} s hold: {} ({} runs; goal median ≤ 40 ms = 2 RTT)",
                spread(&away),
                runs.div_ceil(2)
            ));
        }
        for (label, binary) in &binaries {
            let first = (0..runs)
                .filter(|run| self.e_before_l(binary, &direct, *run))
                .count();
            report.note(&format!(
                "{label:<8} E (at +0.2 s) before L (at +1.4 s) behind a 2 s holder, 5 servers: {first} of {runs} (goal: all)"
            ));
        }
        for stopped in [false, true] {
            if stopped {
                servers[4].stop();
            }
            for (label, binary) in &binaries {
                let (kept, waits) = self.writer_runs(binary, &direct, runs);
                report.note(&format!(
                    "{label:<8} writer before every reader that arrived ≥ 0.2 s after it, 5 servers{}: {kept} of {runs} (goal: all); writer waited {}",
                    if stopped { ", 1 stopped" } else { "" },
                    spread(&waits)
                ));
            }
            if stopped {
                servers[4].resume();
            }
        }
    }

    /// `runs` hand-over gaps: a holder's command prints the time as its last act, a waiter's
    /// as its first.
    fn gaps(&mut self, binary: &str, urls: &str, runs: usize) -> Vec<Duration> {
        let mut gaps = Vec::new();
        for run in 0..runs {
            let hold = format!("sleep {HOLD}; date +%s.%N");
            let holder = spawn(binary, urls, &["exec", "o-gap", "--", "sh", "-c", &hold]);
            std::thread::sleep(WAITER_AFTER);
            let waiter = spawn(
                binary,
                urls,
                &["exec", "o-gap", "--wait", "10s", "--", "date", "+%s.%N"],
            );
            let (Some(ended), Some(started)) = (stamp(holder), stamp(waiter)) else {
                self.broken
                    .push(format!("o (gap, {binary}): run {run} failed"));
                continue;
            };
            gaps.push(Duration::from_secs_f64((started - ended).max(0.0)));
        }
        gaps
    }

    /// Whether E, queued early behind a 2 s holder, entered before L, queued late.
    fn e_before_l(&mut self, binary: &str, urls: &str, run: usize) -> bool {
        let order = self.dir.join(format!("o-el-{run}"));
        let _ = std::fs::remove_file(&order);
        let started = Instant::now();
        let mut children = vec![spawn(binary, urls, &["exec", "o-el", "--", "sleep", "2"])];
        for (name, at) in ["E", "L"].into_iter().zip(EL_AT) {
            std::thread::sleep(at.saturating_sub(started.elapsed()));
            let enter = format!("echo {name} >> '{}'", order.display());
            let args = ["exec", "o-el", "--wait", "10s", "--", "sh", "-c", &enter];
            children.push(spawn(binary, urls, &args));
        }
        if !children.into_iter().all(succeeded) {
            self.broken
                .push(format!("o (E/L, {binary}): run {run} failed"));
        }
        std::fs::read_to_string(&order).is_ok_and(|o| o.lines().next() == Some("E"))
    }

    /// `runs` streams of readers with a writer arriving in the middle: in how many the writer
    /// entered before every reader that arrived `GRACE` or more after it, and how long it waited.
    fn writer_runs(&mut self, binary: &str, urls: &str, runs: usize) -> (usize, Vec<Duration>) {
        let mut kept = 0;
        let mut waits = Vec::new();
        for run in 0..runs {
            let order = self.dir.join(format!("o-rw-{run}"));
            let _ = std::fs::remove_file(&order);
            let (late, writer_arrived) = self.readers_and_a_writer(binary, urls, &order);
            let Some(writer_arrived) = writer_arrived else {
                self.broken
                    .push(format!("o (writer, {binary}): run {run} failed"));
                continue;
            };
            let entered = std::fs::read_to_string(&order).unwrap_or_default();
            let names: Vec<&str> = entered
                .lines()
                .filter_map(|l| l.split(' ').next())
                .collect();
            let writer = names.iter().position(|name| *name == "w");
            kept += usize::from(writer.is_some_and(|w| {
                names[..w]
                    .iter()
                    .all(|name| !late.iter().any(|late| late == name))
            }));
            // The writer wrote the time it entered after its name.
            let entry = entered
                .lines()
                .find_map(|line| line.strip_prefix("w ")?.trim().parse::<f64>().ok());
            if let Some(entry) = entry {
                waits.push(Duration::from_secs_f64((entry - writer_arrived).max(0.0)));
            }
        }
        (kept, waits)
    }

    /// One stream: the readers that arrived `GRACE` or more after the writer, by the name each
    /// writes into `order` as it enters, and when the writer arrived, in seconds since the epoch
    /// (`None` if anyone failed). The writer writes the time it entered after its name.
    fn readers_and_a_writer(
        &mut self,
        binary: &str,
        urls: &str,
        order: &Path,
    ) -> (Vec<String>, Option<f64>) {
        let started = Instant::now();
        let mut readers = Vec::new();
        let mut late = Vec::new();
        let mut writer: Option<(Child, Instant, f64)> = None;
        for k in 0..READERS {
            let at = READER_EVERY * k;
            if writer.is_none() && at >= WRITER_AT {
                std::thread::sleep(WRITER_AT.saturating_sub(started.elapsed()));
                let enter = format!("echo \"w $(date +%s.%N)\" >> '{}'", order.display());
                let args = ["exec", "o-rw", "--wait", "20s", "--", "sh", "-c", &enter];
                let arrived = Instant::now();
                writer = Some((spawn(binary, urls, &args), arrived, epoch()));
            }
            std::thread::sleep(at.saturating_sub(started.elapsed()));
            let name = format!("r{k}");
            if writer
                .as_ref()
                .is_some_and(|(_, at, _)| at.elapsed() >= GRACE)
            {
                late.push(name.clone());
            }
            let enter = format!("echo {name} >> '{}'; sleep 0.3", order.display());
            let args = [
                "exec", "o-rw", "--shared", "--wait", "20s", "--", "sh", "-c", &enter,
            ];
            readers.push(spawn(binary, urls, &args));
        }
        let Some((writer, _, arrived)) = writer else {
            return (late, None);
        };
        let all = succeeded(writer) & readers.into_iter().all(succeeded);
        (late, all.then_some(arrived))
    }
}

fn urls(ports: impl Iterator<Item = u16>) -> String {
    ports
        .map(|port| format!("redis://127.0.0.1:{port}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn spawn(binary: &str, urls: &str, args: &[&str]) -> Child {
    Command::new(binary)
        .env("REDLOCK_SERVERS", urls)
        .env("REDLOCK_TIMEOUT", super::harness::TIMEOUT)
        .env_remove("REDLOCK_WAIT")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn redlock")
}

fn succeeded(child: Child) -> bool {
    child.wait_with_output().is_ok_and(|o| o.status.success())
}

/// The `date +%s.%N` a run printed, if it succeeded.
fn stamp(child: Child) -> Option<f64> {
    let output = child.wait_with_output().ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8_lossy(&output.stdout).trim().parse().ok()
}

/// Now, in seconds since the epoch: the clock `date +%s.%N` prints.
fn epoch() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Median and max of `times`.
fn spread(times: &[Duration]) -> String {
    let max = times.iter().max().copied().unwrap_or_default();
    format!("median {}, max {}", ms(percentile(times, 0.5)), ms(max))
}
