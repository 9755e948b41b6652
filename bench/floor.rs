//! l. The floor: what one process costs, next to flock in the same run, at 1, 3 and 5 servers.
//! Each block interleaves the commands it compares (A B C A B C …), so a loaded moment costs
//! all of them alike, and is run three times: the note gives the median ratio and the spread.
//! With `REDLOCK_BASELINE=/path/to/an/older/redlock`, that binary runs in the same interleave,
//! for a before-and-after of one change. bench/run also runs builds without one of the shipped
//! build's optimisations (`REDLOCK_WITHOUT`) in the one-process block, for what each saves.

use super::harness::{flock_true, interleave, Bench, REDLOCK};
use super::report::{ms, percentile, Report};
use std::process::Command;
use std::time::Duration;

/// How many times each block is run: the note gives the median and the spread.
const REPEATS: usize = 3;

impl Bench {
    pub(super) fn part_l(&mut self, report: &mut Report, runs: usize, sections: usize) {
        report.section("l. the floor: exec at 1, 3 and 5 servers; contention at 3 and 5");
        let baseline = std::env::var("REDLOCK_BASELINE").ok();
        let lockfile = self.dir.join("l.lock");
        let urls: Vec<String> = self.urls.split(',').map(str::to_string).collect();
        let on = |n: usize| urls[..n].join(",");
        let mut binaries = vec![("redlock", REDLOCK.clone())];
        if let Some(old) = &baseline {
            binaries.push(("baseline", old.clone()));
        }
        // Builds of this one without one of its optimisations (bench/run makes them with
        // Cargo.toml's features), as `label=path,…`: they run in the one-process block.
        let without: Vec<(String, String)> = std::env::var("REDLOCK_WITHOUT")
            .unwrap_or_default()
            .split(',')
            .filter_map(|build| build.split_once('='))
            .map(|(label, path)| (label.to_string(), path.to_string()))
            .collect();
        let one_process: Vec<(String, String)> = binaries
            .iter()
            .map(|(label, binary)| (label.to_string(), binary.clone()))
            .chain(without.iter().cloned())
            .collect();
        // Process start and argument parsing, and a status of one lock on 3 servers.
        let mut rows: Vec<(String, Vec<f64>)> = Vec::new();
        let mut paired: Vec<(String, Vec<f64>, Vec<f64>)> = Vec::new();
        for _ in 0..REPEATS {
            let mut commands: Vec<(String, Command)> =
                vec![("flock FILE true".into(), flock_true(&lockfile))];
            commands.push(("true (a process start)".into(), Command::new("true")));
            for (label, binary) in &one_process {
                commands.push((format!("{label} --version"), {
                    let mut cmd = Command::new(binary);
                    cmd.arg("--version");
                    cmd
                }));
                for n in [1, 3, 5] {
                    commands.push((format!("{label} exec L -- true, {n} servers"), {
                        let mut cmd = Command::new(binary);
                        cmd.env("REDLOCK_SERVERS", on(n))
                            .args(["exec", "l", "--", "true"]);
                        cmd
                    }));
                }
                commands.push((format!("{label} status L, 3 servers, held"), {
                    let mut cmd = Command::new(binary);
                    cmd.env("REDLOCK_SERVERS", on(3)).args(["status", "held"]);
                    cmd
                }));
                commands.push((format!("{label} acquire, 3 servers (and release)"), {
                    let mut cmd = Command::new("sh");
                    cmd.env("REDLOCK_SERVERS", on(3)).env("R", binary).args([
                        "-c",
                        "t=$(\"$R\" acquire a) && \"$R\" release a --token \"$t\"",
                    ]);
                    cmd
                }));
            }
            let held = self
                .redlock()
                .env("REDLOCK_SERVERS", on(3))
                .args(["acquire", "held", "--ttl", "10m"])
                .output();
            let (times, cpus) = interleave(&mut commands, runs);
            if let Ok(held) = held {
                let token = String::from_utf8_lossy(&held.stdout).trim().to_string();
                let _ = self
                    .redlock()
                    .env("REDLOCK_SERVERS", on(3))
                    .args(["release", "held", "--token", &token])
                    .output();
            }
            let flock = percentile(&times[0], 0.5).as_secs_f64();
            for ((label, _), sample) in commands.iter().zip(&times) {
                let ratio = percentile(sample, 0.5).as_secs_f64() / flock.max(f64::EPSILON);
                match rows.iter_mut().find(|(name, _)| name == label) {
                    Some((_, ratios)) => ratios.push(ratio),
                    None => rows.push((label.clone(), vec![ratio])),
                }
                if label.starts_with("flock") {
                    report.note(&format!("flock FILE true: {}", ms(percentile(sample, 0.5))));
                }
            }
            // Each build without an optimisation against redlock run just before it, round by
            // round, so that a loaded moment costs both alike.
            for (label, _) in &without {
                for (ours, name) in commands.iter().enumerate() {
                    let Some(what) = name.0.strip_prefix("redlock ") else {
                        continue;
                    };
                    let theirs = format!("{label} {what}");
                    let Some(at) = commands.iter().position(|(name, _)| *name == theirs) else {
                        continue;
                    };
                    let ratios = |samples: &[Vec<Duration>]| -> Vec<f64> {
                        let pairs = samples[ours].iter().zip(&samples[at]);
                        pairs
                            .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
                            .collect()
                    };
                    let (wall, cpu) = (ratios(&times), ratios(&cpus));
                    match paired.iter_mut().find(|(name, ..)| *name == theirs) {
                        Some((_, walls, cpus)) => {
                            walls.extend(wall);
                            cpus.extend(cpu);
                        }
                        None => paired.push((theirs, wall, cpu)),
                    }
                }
            }
        }
        for (label, ratios) in &rows {
            report.note(&format!(
                "{label:<44} {}× flock (runs: {})",
                format_args!("{:.2}", median_ratio(ratios)),
                spread(ratios)
            ));
        }
        report.note("goals: exec ≤ 1.4× flock at 3 servers, ≤ 1.5× at 5");
        // What each optimisation saves: the median of redlock's time over that build's.
        for (label, _) in &without {
            report.note(&format!("redlock / {label}, paired round by round:"));
            for (name, wall, cpu) in &paired {
                if let Some(what) = name.strip_prefix(&format!("{label} ")) {
                    report.note(&format!(
                        "  {what:<40} {:.2}× wall, {:.2}× CPU",
                        median_ratio(wall),
                        median_ratio(cpu)
                    ));
                }
            }
        }

        // 8 processes × `sections` contended sections, at 3 and 5 servers, next to flock.
        let all = self.urls.clone();
        let mut contended: Vec<(String, Vec<f64>)> = Vec::new();
        for _ in 0..REPEATS {
            let Some(flock) = self.contend("l-flock", 8, sections, |lockfile| {
                format!("flock -w 60 {lockfile} bash -c \"$SECTION\"")
            }) else {
                continue;
            };
            for n in [3, 5] {
                for (label, binary) in &binaries {
                    self.urls = on(n);
                    let name = format!("l-{label}-{n}");
                    let step = format!(
                        "\"{binary}\" exec --wait 60s c{n} -- bash -c \"$SECTION\" || exit 1"
                    );
                    let run = self.contend(&name, 8, sections, |_| step.clone());
                    self.urls = all.clone();
                    if let Some(run) = run {
                        let ratio = run.total.as_secs_f64() / flock.total.as_secs_f64();
                        let key = format!("{label} exec, 8 × {sections} contended, {n} servers");
                        match contended.iter_mut().find(|(k, _)| *k == key) {
                            Some((_, ratios)) => ratios.push(ratio),
                            None => contended.push((key, vec![ratio])),
                        }
                    }
                }
            }
        }
        for (label, ratios) in &contended {
            report.note(&format!(
                "{label:<44} {:.2}× flock (runs: {})",
                median_ratio(ratios),
                spread(ratios)
            ));
        }
        report.note("goals: contended ≤ 1.4× flock at 3 servers, ≤ 1.8× at 5");
    }
}

fn spread(ratios: &[f64]) -> String {
    ratios
        .iter()
        .map(|r| format!("{r:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The median of a few ratios.
fn median_ratio(ratios: &[f64]) -> f64 {
    let mut sorted = ratios.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}
