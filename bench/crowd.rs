//! f. A crowd: W processes each looping `exec --wait` over one lock, beside flock with the same
//! W: handover gaps, the longest wait, overtakes, and the commands and reads the servers served.

use super::harness::{Bench, SERVERS};
use super::redis_server::Redis;
use super::report::{ms, percentile, Report};
use std::fmt::Write as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

impl Bench {
    /// f. a crowd: W processes each looping `exec --wait` over one lock, `sections` in all,
    /// beside flock with the same W.
    pub(super) fn part_f(
        &mut self,
        report: &mut Report,
        servers: &[Redis],
        crowds: &[usize],
        sections: usize,
    ) {
        report.section(&format!(
            "f. a crowd of W waiters, {sections} critical sections in all, {SERVERS} servers"
        ));
        for &w in crowds {
            let flock = self.crowd("flock", w, sections, servers, |lockfile| {
                format!("flock -w 120 {lockfile} bash -c \"$SECTION\"")
            });
            let redlock = self.crowd("redlock", w, sections, servers, |_| {
                format!("\"$REDLOCK\" -q exec crowd-{w} --wait 120s -- bash -c \"$SECTION\"")
            });
            report.crowd(&format!("flock -w 120, W = {w}"), &flock, None);
            report.crowd(
                &format!("redlock exec --wait, W = {w}"),
                &redlock,
                Some(&flock),
            );
        }
        report.note("goals: commands per section at W = 64, 128 ≤ 1.25× W = 8 and < 10 × servers;");
        report.note("reads per server per section ≤ 5, flat in W;");
        report.note(
            "wall ≤ 2× flock; gap p99 ≤ 20 ms; longest wait at W = 64 ≤ 2 × 64 × mean section;",
        );
        report.note("overtakes ≤ 10 % of handovers");
    }

    pub(super) fn crowd(
        &mut self,
        name: &str,
        workers: usize,
        sections: usize,
        servers: &[Redis],
        take: impl Fn(&str) -> String,
    ) -> Crowd {
        let dir = self.dir.join(format!("f-{name}-{workers}"));
        std::fs::create_dir_all(&dir).expect("bench dir");
        let (counter, log) = (dir.join("counter"), dir.join("log"));
        std::fs::write(&counter, "0\n").expect("counter");
        // Each worker stamps when it starts asking (A), enters (E) and leaves (X) the section.
        let section = format!(
            "echo \"E $W $EPOCHREALTIME\" >> {log}; read n < {counter}; echo $((n + 1)) > {counter}; echo \"X $W $EPOCHREALTIME\" >> {log}",
            log = log.display(),
            counter = counter.display()
        );
        let step = take(&dir.join("lock").display().to_string());
        let before = commands_processed(servers);
        let reads_before = stat_sum(servers, "total_reads_processed");
        let started = Instant::now();
        let children: Vec<Child> = (0..workers)
            .map(|i| {
                let mine = sections / workers + usize::from(i < sections % workers);
                let script = format!(
                    "for i in $(seq {mine}); do echo \"A $W $EPOCHREALTIME\" >> {log}; {step} || exit 1; done",
                    log = log.display()
                );
                self.redlock_env(Command::new("bash"))
                    .args(["-c", &script])
                    .env("SECTION", &section)
                    .env("W", i.to_string())
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("spawn bash")
            })
            .collect();
        let mut failed = 0;
        for mut child in children {
            failed += usize::from(!child.wait().is_ok_and(|s| s.success()));
        }
        let wall = started.elapsed();
        let commands = commands_processed(servers).saturating_sub(before);
        let reads = stat_sum(servers, "total_reads_processed").saturating_sub(reads_before);
        let count = std::fs::read_to_string(&counter).unwrap_or_default();
        if failed > 0 {
            self.broken.push(format!(
                "f ({name}, W = {workers}): {failed} worker(s) failed"
            ));
        }
        if count.trim() != sections.to_string() {
            self.broken.push(format!(
                "f ({name}, W = {workers}): counter is {} after {sections} increments",
                count.trim()
            ));
        }
        let mut crowd = crowd_figures(&std::fs::read_to_string(&log).unwrap_or_default());
        crowd.wall = wall;
        // flock asks no server: the servers' counts are the other crowds' only.
        let asks = !name.ends_with("flock");
        crowd.per_section = asks.then(|| commands as f64 / sections as f64);
        crowd.reads = asks.then(|| reads as f64 / sections as f64 / servers.len() as f64);
        crowd
    }
}

/// What a crowd run showed.
#[derive(Default)]
pub(super) struct Crowd {
    wall: Duration,
    per_section: Option<f64>,
    /// Network reads (INFO stats `total_reads_processed`) per server per section.
    reads: Option<f64>,
    gaps: Vec<Duration>,
    longest_wait: Duration,
    mean_section: Duration,
    overtakes: usize,
    handovers: usize,
}

/// From the A (asks) / E (enters) / X (leaves) log: handover gaps, the longest wait from asking
/// to entering, and overtakes (a section entered by a worker that asked after another worker
/// still waiting).
fn crowd_figures(log: &str) -> Crowd {
    let mut crowd = Crowd::default();
    let mut asked: std::collections::BTreeMap<&str, f64> = Default::default();
    let mut last_exit: Option<f64> = None;
    let mut first_entry: Option<f64> = None;
    let mut entries = 0u32;
    for line in log.lines() {
        let mut parts = line.split(' ');
        let (Some(kind), Some(who), Some(at)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let Ok(at) = at.trim().parse::<f64>() else {
            continue;
        };
        match kind {
            "A" => {
                asked.insert(who, at);
            }
            "E" => {
                first_entry.get_or_insert(at);
                entries += 1;
                let since = asked.remove(who).unwrap_or(at);
                let wait = Duration::from_secs_f64((at - since).max(0.0));
                crowd.longest_wait = crowd.longest_wait.max(wait);
                if let Some(exit) = last_exit.take() {
                    crowd
                        .gaps
                        .push(Duration::from_secs_f64((at - exit).max(0.0)));
                    crowd.handovers += 1;
                    if asked.values().any(|&other| other < since) {
                        crowd.overtakes += 1;
                    }
                }
            }
            "X" => last_exit = Some(at),
            _ => {}
        }
    }
    if let (Some(first), Some(last)) = (first_entry, last_exit) {
        crowd.mean_section =
            Duration::from_secs_f64((last - first).max(0.0) / f64::from(entries.max(1)));
    }
    crowd
}

/// The servers' own count of commands processed, summed.
fn commands_processed(servers: &[Redis]) -> u64 {
    stat_sum(servers, "total_commands_processed")
}

/// One counter of INFO stats, summed over the servers.
fn stat_sum(servers: &[Redis], name: &str) -> u64 {
    let prefix = format!("{name}:");
    servers
        .iter()
        .map(|server| {
            let info: String = redis::cmd("INFO")
                .arg("stats")
                .query(&mut server.connection())
                .unwrap_or_default();
            info.lines()
                .find_map(|l| l.strip_prefix(prefix.as_str()))
                .and_then(|n| n.trim().parse::<u64>().ok())
                .unwrap_or(0)
        })
        .sum()
}

impl Report {
    pub(super) fn crowd(&mut self, name: &str, c: &Crowd, baseline: Option<&Crowd>) {
        let mut line = format!(
            "  {name:<30} wall {:>10}  gap median {:>8} p99 {:>9}  longest wait {:>10}  overtakes {:>4.1} %",
            ms(c.wall),
            ms(percentile(&c.gaps, 0.5)),
            ms(percentile(&c.gaps, 0.99)),
            ms(c.longest_wait),
            100.0 * c.overtakes as f64 / c.handovers.max(1) as f64
        );
        if let Some(per_section) = c.per_section {
            let _ = write!(line, "  {per_section:.1} commands/section");
        }
        if let Some(reads) = c.reads {
            let _ = write!(line, "  {reads:.1} reads/server/section");
        }
        if let Some(base) = baseline {
            let _ = write!(
                line,
                "  wall ratio {:.2}×  (mean section {})",
                c.wall.as_secs_f64() / base.wall.as_secs_f64().max(f64::EPSILON),
                ms(c.mean_section)
            );
        }
        let _ = writeln!(self.text, "{line}");
    }
}
