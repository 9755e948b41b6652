//! `cargo bench` (or `bench/run`): what redlock costs next to flock and redis-cli, measured as
//! whole processes against 5 redis-server processes this program starts on free loopback ports.
//!
//! It reports; it does not gate. It exits non-zero only if something broke: a lost counter
//! increment, or a redlock command that failed where it should have succeeded.
//! `--smoke` runs a few iterations of everything, to check that the benchmark still works;
//! `--crowd` runs only the crowd of waiters and the stampede; `--latch` only the latch;
//! `--cluster` only a Redis Cluster as a server; `--floor` only the floor (part l) and the crowd.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

// The integration tests' redis-server launcher; the benchmark uses only part of it.
#[allow(dead_code)]
#[path = "../tests/it/support/redis_server.rs"]
mod redis_server;
use redis_server::Redis;
mod cluster;
mod floor;
mod grants;
mod latch;
mod mixed;

/// The binary measured: `REDLOCK_BIN` (bench/run sets it to the static release build that ships),
/// else the one cargo built for this bench.
static REDLOCK: LazyLock<String> = LazyLock::new(|| {
    std::env::var("REDLOCK_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_redlock").to_string())
});
const SERVERS: usize = 5;
const TIMEOUT: &str = "200ms";

fn main() {
    let smoke = std::env::args().any(|a| a == "--smoke");
    // `--crowd`: only the crowd and the stampede (parts f and g).
    let crowd_only = std::env::args().any(|a| a == "--crowd");
    // `--latch`: only the latch (part i).
    let latch_only = std::env::args().any(|a| a == "--latch");
    // `--cluster`: only a Redis Cluster as one of the servers (part k).
    let cluster_only = std::env::args().any(|a| a == "--cluster");
    // `--floor`: only what one process costs next to flock (part l), and the crowd (part f).
    let floor_only = std::env::args().any(|a| a == "--floor");
    let runs = if smoke { 10 } else { 300 };
    let (workers, sections) = if smoke { (8, 3) } else { (8, 25) };
    for tool in ["redis-server", "redis-cli", "flock", "bash"] {
        if which(tool).is_none() {
            eprintln!("bench: {tool} is not on PATH; install it (Debian/Ubuntu: apt-get install redis-server util-linux bash)");
            std::process::exit(2);
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let servers: Vec<Redis> = (0..SERVERS).map(|_| Redis::start()).collect();
    let urls = servers
        .iter()
        .map(|s| format!("redis://127.0.0.1:{}", s.port))
        .collect::<Vec<_>>()
        .join(",");
    let bench = Bench {
        urls,
        dir: dir.path().to_path_buf(),
        broken: Vec::new(),
    };
    let mut bench = bench;
    let mut report = Report::default();
    println!(
        "redlock benchmark: {SERVERS} local redis-server, {} cpus, {} runs per figure{}",
        cpus(),
        runs,
        if smoke { " (smoke)" } else { "" }
    );
    println!("binary: {}", *REDLOCK);

    let exec = bench.exec_available() && !latch_only && !cluster_only;
    if latch_only {
        bench.part_i(&mut report, &servers, runs.min(100));
    } else if cluster_only {
        bench.part_k(&mut report, &servers, runs.min(100));
    } else if floor_only {
        bench.part_l(&mut report, runs.min(100), sections);
    } else if !crowd_only {
        bench.part_a(&mut report, runs, servers[0].port);
        bench.part_b(&mut report, runs, exec);
        bench.part_c(&mut report, workers, sections, exec);
        bench.part_d(&mut report, &servers, runs.min(50));
        bench.part_e(&mut report, exec);
        bench.part_h(&mut report, runs);
        bench.part_i(&mut report, &servers, runs.min(100));
        bench.part_k(&mut report, &servers, runs.min(100));
        bench.part_l(&mut report, runs.min(100), sections);
    }
    if exec {
        let crowds: &[usize] = if smoke { &[4, 8] } else { &[8, 32, 64, 128] };
        bench.part_f(&mut report, &servers, crowds, if smoke { 16 } else { 320 });
        if !floor_only {
            bench.part_g(&mut report, if smoke { 8 } else { 64 });
        }
        let (mix, mixed_sections) = if smoke { ((6, 2), 24) } else { ((60, 4), 320) };
        if !floor_only {
            bench.part_j(&mut report, mix, mixed_sections);
        }
    }
    print!("{}", report.text);
    drop(servers);
    if bench.broken.is_empty() {
        println!("\nall checks passed");
    } else {
        for what in &bench.broken {
            println!("BROKEN: {what}");
        }
        std::process::exit(1);
    }
}

struct Bench {
    urls: String,
    dir: PathBuf,
    broken: Vec<String>,
}

impl Bench {
    fn redlock(&self) -> Command {
        let mut cmd = Command::new(&*REDLOCK);
        cmd.env("REDLOCK_SERVERS", &self.urls)
            .env("REDLOCK_TIMEOUT", TIMEOUT)
            .env_remove("REDLOCK_WAIT")
            .stdin(Stdio::null());
        cmd
    }

    /// a. acquire and release as whole processes, next to flock and redis-cli.
    fn part_a(&mut self, report: &mut Report, runs: usize, port: u16) {
        let lockfile = self.dir.join("a.lock");
        let truth = sample(runs, || Command::new("true").status().map(|_| ()));
        let flock = sample(runs, || {
            Command::new("flock")
                .arg(&lockfile)
                .arg("true")
                .status()
                .map(|_| ())
        });
        let cli = sample(runs, || {
            Command::new("redis-cli")
                .args([
                    "-p",
                    &port.to_string(),
                    "SET",
                    "bench:cli",
                    "v",
                    "NX",
                    "PX",
                    "30000",
                ])
                .stdout(Stdio::null())
                .status()
                .map(|_| ())
        });
        let mut acquire = Vec::new();
        let mut release = Vec::new();
        for i in 0..runs {
            let started = Instant::now();
            let out = self.redlock().args(["acquire", "a"]).output();
            acquire.push(started.elapsed());
            let token = match out {
                Ok(out) if out.status.success() => {
                    String::from_utf8_lossy(&out.stdout).trim().to_string()
                }
                other => {
                    self.broken
                        .push(format!("a: acquire {i} failed: {other:?}"));
                    return;
                }
            };
            let started = Instant::now();
            let ok = self
                .redlock()
                .args(["release", "a", "--token", &token])
                .status()
                .is_ok_and(|s| s.success());
            release.push(started.elapsed());
            if !ok {
                self.broken.push(format!("a: release {i} failed"));
                return;
            }
        }
        let both: Vec<Duration> = acquire.iter().zip(&release).map(|(a, r)| *a + *r).collect();
        report.section("a. one-shot acquire / release, whole processes (median [p10–p90])");
        report.row("true (process floor)", &truth, None, "");
        report.row("flock FILE true", &flock, None, "");
        report.row("redis-cli SET k v NX PX 30000", &cli, None, "");
        report.row(
            "redlock acquire  vs flock",
            &acquire,
            Some(&flock),
            "goal ≤ 1.2×",
        );
        report.row(
            "redlock acquire  vs redis-cli",
            &acquire,
            Some(&cli),
            "goal ≤ 0.5×",
        );
        report.row("redlock release  vs flock", &release, Some(&flock), "");
        report.row(
            "acquire + release vs 2×flock",
            &both,
            Some(&doubled(&flock)),
            "",
        );
    }

    /// Whether this build has `redlock exec` (it may predate it).
    fn exec_available(&self) -> bool {
        self.redlock()
            .args(["exec", "probe", "--", "true"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// b. exec around `true`, next to flock around `true`.
    fn part_b(&mut self, report: &mut Report, runs: usize, exec: bool) {
        report.section("b. redlock exec L -- true");
        if !exec {
            report.skip(
                "redlock exec L -- true  vs flock",
                "skipped: exec not available",
            );
            return;
        }
        let lockfile = self.dir.join("b.lock");
        let flock = sample(runs, || {
            Command::new("flock")
                .arg(&lockfile)
                .arg("true")
                .status()
                .map(|_| ())
        });
        let mut failed = 0;
        let exec_times = sample(runs, || {
            let status = self.redlock().args(["exec", "b", "--", "true"]).status()?;
            failed += usize::from(!status.success());
            Ok(())
        });
        if failed > 0 {
            self.broken
                .push(format!("b: {failed} of {runs} exec runs failed"));
        }
        report.row(
            "redlock exec L -- true  vs flock",
            &exec_times,
            Some(&flock),
            "goal ≤ 1.5×",
        );
    }

    /// c. 8 processes taking turns at a read-increment-write critical section.
    fn part_c(&mut self, report: &mut Report, workers: usize, sections: usize, exec: bool) {
        report.section(&format!(
            "c. contention: {workers} processes × {sections} critical sections (total wall; handover gap median / p99)"
        ));
        let flock = self.contend("flock", workers, sections, |lockfile| {
            format!("flock -w 60 {lockfile} bash -c \"$SECTION\"")
        });
        let acquire = self.contend("acquire", workers, sections, |_| {
            "t=$(\"$REDLOCK\" acquire c --wait 60s) || exit 1; bash -c \"$SECTION\"; \"$REDLOCK\" release c --token \"$t\" || exit 2".into()
        });
        let execd = exec.then(|| {
            self.contend("exec", workers, sections, |_| {
                "\"$REDLOCK\" exec --wait 60s c -- bash -c \"$SECTION\" || exit 1".into()
            })
        });
        let Some(flock) = flock else { return };
        report.contention("flock -w 60 FILE", &flock, None);
        match execd {
            Some(Some(execd)) => report.contention("redlock exec --wait", &execd, Some(&flock)),
            Some(None) => {}
            None => report.skip("redlock exec --wait", "skipped: exec not available"),
        }
        if let Some(acquire) = acquire {
            report.contention("redlock acquire --wait + release", &acquire, Some(&flock));
        }
        report.note(
            "goal for exec: total ≤ 1.5× flock; gap median ≤ 2 ms, p99 ≤ 20 ms; counter exact",
        );
    }

    fn contend(
        &mut self,
        name: &str,
        workers: usize,
        sections: usize,
        take: impl Fn(&str) -> String,
    ) -> Option<Contention> {
        let dir = self.dir.join(format!("c-{name}"));
        std::fs::create_dir_all(&dir).expect("bench dir");
        let counter = dir.join("counter");
        let log = dir.join("log");
        std::fs::write(&counter, "0\n").expect("counter");
        // bash's EPOCHREALTIME stamps entry and exit without forking `date`, so the gap is the
        // lock's handover, not the clock's cost.
        let section = format!(
            "echo \"E $EPOCHREALTIME\" >> {log}; read n < {counter}; echo $((n + 1)) > {counter}; echo \"X $EPOCHREALTIME\" >> {log}",
            log = log.display(),
            counter = counter.display()
        );
        let lockfile = dir.join("lock");
        let step = take(&lockfile.display().to_string());
        let script = format!("for i in $(seq {sections}); do {step}; done");
        let started = Instant::now();
        let children: Vec<Child> = (0..workers)
            .map(|_| {
                self.redlock_env(Command::new("sh"))
                    .args(["-c", &script])
                    .env("SECTION", &section)
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("spawn sh")
            })
            .collect();
        let mut failed = 0;
        for mut child in children {
            failed += usize::from(!child.wait().is_ok_and(|s| s.success()));
        }
        let total = started.elapsed();
        let count = std::fs::read_to_string(&counter).unwrap_or_default();
        let expected = workers * sections;
        let exact = count.trim() == expected.to_string();
        if failed > 0 {
            self.broken
                .push(format!("c ({name}): {failed} worker(s) failed"));
        }
        if !exact {
            self.broken.push(format!(
                "c ({name}): counter is {} after {expected} increments",
                count.trim()
            ));
        }
        let gaps = handover_gaps(&std::fs::read_to_string(&log).unwrap_or_default());
        Some(Contention {
            total,
            gaps,
            count: count.trim().to_string(),
            exact,
        })
    }

    fn redlock_env(&self, mut cmd: Command) -> Command {
        cmd.env("REDLOCK", &*REDLOCK)
            .env("REDLOCK_SERVERS", &self.urls)
            .env("REDLOCK_TIMEOUT", TIMEOUT)
            .stdin(Stdio::null());
        cmd
    }

    /// d. 2 of 5 servers stopped: acquire should cost one timeout, not more.
    fn part_d(&mut self, report: &mut Report, servers: &[Redis], runs: usize) {
        let healthy = self.timed_acquires("d-healthy", runs);
        for server in &servers[..2] {
            server.stop();
        }
        let stopped = self.timed_acquires("d-stopped", runs);
        for server in &servers[..2] {
            server.resume();
        }
        report.section(&format!(
            "d. acquire with 2 of 5 servers stopped (SIGSTOP), --timeout {TIMEOUT}"
        ));
        report.row("all healthy", &healthy, None, "");
        report.row(
            "2 of 5 stopped",
            &stopped,
            None,
            "goal ≤ timeout + 10 ms = 210 ms",
        );
    }

    fn timed_acquires(&mut self, name: &str, runs: usize) -> Vec<Duration> {
        let mut times = Vec::new();
        for i in 0..runs {
            // A fresh name each time: the stopped servers take the queued SETs when resumed.
            let lock = format!("{name}-{i}");
            let started = Instant::now();
            let ok = self
                .redlock()
                .args(["acquire", &lock, "--ttl", "5s"])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            times.push(started.elapsed());
            if !ok {
                self.broken.push(format!("d ({name}): acquire {i} failed"));
                break;
            }
        }
        times
    }

    /// e. peak resident memory.
    fn part_e(&mut self, report: &mut Report, exec: bool) {
        report.section("e. peak resident memory (ru_maxrss)");
        let acquire = peak_rss(
            self.redlock()
                .args(["acquire", "e-acquire"])
                .stdout(Stdio::null()),
        );
        let waiting = {
            // A waiter with live subscriptions: holder first, then a waiter that gives up.
            let _ = self
                .redlock()
                .args(["acquire", "e-wait"])
                .stdout(Stdio::null())
                .status();
            peak_rss(
                self.redlock()
                    .args(["acquire", "e-wait", "--wait", "1s"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null()),
            )
        };
        let flock = peak_rss(
            Command::new("flock")
                .arg(self.dir.join("e.lock"))
                .arg("true"),
        );
        report.memory("flock FILE true", flock, "");
        report.memory("redlock acquire", acquire, "");
        report.memory("redlock acquire --wait 1s (busy)", waiting, "");
        if exec {
            let sleep = peak_rss(self.redlock().args(["exec", "e-exec", "--", "sleep", "1"]));
            report.memory("redlock exec L -- sleep 1", sleep, "goal ≤ 10 MiB");
        } else {
            report.skip("redlock exec L -- sleep 1", "skipped: exec not available");
        }
    }
}

impl Bench {
    /// f. a crowd: W processes each looping `exec --wait` over one lock, `sections` in all,
    /// beside flock with the same W.
    fn part_f(
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

    fn crowd(
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
        crowd.per_section = (name != "flock").then(|| commands as f64 / sections as f64);
        crowd.reads =
            (name != "flock").then(|| reads as f64 / sections as f64 / servers.len() as f64);
        crowd
    }

    /// g. a stampede: many one-shot acquires of a free lock at once, then as many waiters.
    fn part_g(&mut self, report: &mut Report, contenders: usize) {
        report.section(&format!(
            "g. {contenders} simultaneous acquires of a free lock"
        ));
        let children: Vec<Child> = (0..contenders)
            .map(|_| {
                self.redlock()
                    .args(["acquire", "g-storm", "-v", "--ttl", "60s"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("spawn redlock")
            })
            .collect();
        let (mut winners, mut rounds) = (0, 0);
        for child in children {
            let Ok(out) = child.wait_with_output() else {
                continue;
            };
            winners += usize::from(out.status.success());
            let text = String::from_utf8_lossy(&out.stderr);
            rounds = rounds.max(text.matches("acquire redlock:g-storm").count());
        }
        report.note(&format!(
            "one-shot: {winners} winner(s), at most {rounds} round(s) per contender (goal: exactly 1, ≤ 3)"
        ));
        let started = Instant::now();
        let children: Vec<Child> = (0..contenders)
            .map(|_| {
                self.redlock()
                    .args(["exec", "g-wait", "--wait", "120s", "--", "true"])
                    .spawn()
                    .expect("spawn redlock")
            })
            .collect();
        let served = children
            .into_iter()
            .filter_map(|mut c| c.wait().ok())
            .filter(|s| s.success())
            .count();
        if served != contenders {
            self.broken.push(format!(
                "g: {served} of {contenders} waiting execs were served"
            ));
        }
        report.note(&format!(
            "with --wait: {served} of {contenders} served in turn, in {}",
            ms(started.elapsed())
        ));
    }
}

/// What a crowd run showed.
#[derive(Default)]
struct Crowd {
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

/// The median of a few ratios.
fn median_ratio(ratios: &[f64]) -> f64 {
    let mut sorted = ratios.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

struct Contention {
    total: Duration,
    gaps: Vec<Duration>,
    count: String,
    exact: bool,
}

/// From the entry/exit log, the time from each exit to the next entry.
fn handover_gaps(log: &str) -> Vec<Duration> {
    let mut gaps = Vec::new();
    let mut last_exit: Option<f64> = None;
    for line in log.lines() {
        let Some((kind, at)) = line.split_once(' ') else {
            continue;
        };
        let Ok(at) = at.trim().parse::<f64>() else {
            continue;
        };
        match kind {
            "E" => {
                if let Some(exit) = last_exit.take() {
                    gaps.push(Duration::from_secs_f64((at - exit).max(0.0)));
                }
            }
            "X" => last_exit = Some(at),
            _ => {}
        }
    }
    gaps
}

/// Runs `run` `runs` times (after one warm-up) and returns each wall time.
fn sample(runs: usize, mut run: impl FnMut() -> std::io::Result<()>) -> Vec<Duration> {
    let _ = run();
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            run().expect("run benchmark command");
            started.elapsed()
        })
        .collect()
}

fn doubled(times: &[Duration]) -> Vec<Duration> {
    times.iter().map(|t| *t * 2).collect()
}

fn percentile(times: &[Duration], p: f64) -> Duration {
    if times.is_empty() {
        return Duration::ZERO;
    }
    let mut sorted = times.to_vec();
    sorted.sort();
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index]
}

pub(crate) fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// Peak RSS of one run of `cmd`, in KiB, from wait4's rusage.
fn peak_rss(cmd: &mut Command) -> Option<u64> {
    let child = cmd.spawn().ok()?;
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 reaps our own child and writes into `status` and `usage`, which we own.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    (pid > 0).then_some(usage.ru_maxrss as u64)
}

#[derive(Default)]
struct Report {
    text: String,
}

impl Report {
    fn section(&mut self, title: &str) {
        let _ = writeln!(self.text, "\n{title}");
    }

    fn row(&mut self, name: &str, times: &[Duration], baseline: Option<&[Duration]>, goal: &str) {
        let median = percentile(times, 0.5);
        let mut line = format!(
            "  {name:<34} {:>10}  [{} – {}]",
            ms(median),
            ms(percentile(times, 0.1)),
            ms(percentile(times, 0.9))
        );
        if let Some(baseline) = baseline {
            let base = percentile(baseline, 0.5);
            let _ = write!(
                line,
                "  baseline {:>9}  ratio {:.2}×",
                ms(base),
                median.as_secs_f64() / base.as_secs_f64().max(f64::EPSILON)
            );
        }
        if !goal.is_empty() {
            let _ = write!(line, "  ({goal})");
        }
        let _ = writeln!(self.text, "{line}");
    }

    fn contention(&mut self, name: &str, c: &Contention, baseline: Option<&Contention>) {
        let mut line = format!(
            "  {name:<34} total {:>10}  gap median {:>9} p99 {:>9}  counter {} ({})",
            ms(c.total),
            ms(percentile(&c.gaps, 0.5)),
            ms(percentile(&c.gaps, 0.99)),
            c.count,
            if c.exact { "exact" } else { "WRONG" }
        );
        if let Some(base) = baseline {
            let _ = write!(
                line,
                "  total ratio {:.2}×",
                c.total.as_secs_f64() / base.total.as_secs_f64().max(f64::EPSILON)
            );
        }
        let _ = writeln!(self.text, "{line}");
    }

    fn crowd(&mut self, name: &str, c: &Crowd, baseline: Option<&Crowd>) {
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

    fn memory(&mut self, name: &str, kib: Option<u64>, goal: &str) {
        let value = kib.map_or("unknown".to_string(), |k| {
            format!("{:.1} MiB", k as f64 / 1024.0)
        });
        let _ = writeln!(self.text, "  {name:<34} {value:>10}  {goal}");
    }

    fn skip(&mut self, name: &str, why: &str) {
        let _ = writeln!(self.text, "  {name:<34} {why}");
    }

    fn note(&mut self, text: &str) {
        let _ = writeln!(self.text, "  {text}");
    }
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(tool))
            .find(|p| p.is_file())
    })
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
