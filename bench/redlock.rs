//! `cargo bench` (or `bench/run`): what redlock costs next to flock and redis-cli, measured as
//! whole processes against 5 redis-server processes this program starts on free loopback ports.
//!
//! It reports; it does not gate. It exits non-zero only if something broke: a lost counter
//! increment, or a redlock command that failed where it should have succeeded.
//! `--smoke` runs a few iterations of everything, to check that the benchmark still works;
//! `--crowd` runs only the crowd of waiters and the stampede; `--latch` only the latch;
//! `--cluster` only a Redis Cluster as a server; `--floor` only the floor (part l) and the crowd;
//! `--history` only what recording a run costs (part m); `--distance` only servers at a
//! distance (part n); `--handover` only the hand-over and the order of the queue (part o);
//! `--stopped` only a stopped minority (part d: acquire, release and exec with 2 of 5 stopped,
//! a crowd with 1 of 5 stopped); `--listing` only `status` among 1,000,000 other keys (part p).
//!
//! This file is the runner: the flags, which parts run, and the verdict. What every part runs
//! against is in `harness`, what is printed in `report`, and each part (a. to p.) in a room of its
//! own, named for what it measures.

use harness::{Bench, REDLOCK, SERVERS};
use report::Report;
use std::path::PathBuf;

// The integration tests' redis-server launcher; the benchmark uses only part of it.
#[allow(dead_code)]
#[path = "../tests/it/support/redis_server.rs"]
mod redis_server;
// The integration tests' fault proxy: parts n and o put every server at a distance.
#[allow(dead_code)]
#[path = "../tests/it/support/proxy.rs"]
mod proxy;

mod harness;
mod report;

mod cluster;
mod contention;
mod crowd;
mod distance;
mod exec;
mod floor;
mod grants;
mod handover;
mod history;
mod latch;
mod listing;
mod memory;
mod mixed;
mod oneshot;
mod stampede;
mod stopped;

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
    // `--distance`: only servers at a distance (part n).
    let distance_only = std::env::args().any(|a| a == "--distance");
    // `--history`: only what recording a run costs (part m).
    let history_only = std::env::args().any(|a| a == "--history");
    // `--handover`: only the hand-over gap and the order of the queue (part o).
    let handover_only = std::env::args().any(|a| a == "--handover");
    // `--stopped`: only a stopped minority (part d): acquire, release and exec with 2 of 5
    // stopped, and a crowd with 1 of 5 stopped.
    let stopped_only = std::env::args().any(|a| a == "--stopped");
    // `--listing`: only a listing on a server of 1,000,000 other keys (part p).
    let listing_only = std::env::args().any(|a| a == "--listing");
    let runs = if smoke { 10 } else { 300 };
    let (workers, sections) = if smoke { (8, 3) } else { (8, 25) };
    for tool in ["redis-server", "redis-cli", "flock", "bash"] {
        if which(tool).is_none() {
            eprintln!("bench: {tool} is not on PATH; install it (Debian/Ubuntu: apt-get install redis-server util-linux bash)");
            std::process::exit(2);
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut bench, servers) = Bench::start(dir.path().to_path_buf());
    let mut report = Report::default();
    println!(
        "redlock benchmark: {SERVERS} local redis-server, {} cpus, {} runs per figure{}",
        cpus(),
        runs,
        if smoke { " (smoke)" } else { "" }
    );
    println!("binary: {}", *REDLOCK);

    let exec = bench.exec_available()
        && !latch_only
        && !cluster_only
        && !distance_only
        && !history_only
        && !handover_only
        && !stopped_only
        && !listing_only;
    let handovers = if smoke { 3 } else { 20 };
    let stopped_crowds: (&[usize], usize) = if smoke { (&[4], 16) } else { (&[8, 32], 160) };
    let (others, listings) = if smoke { (200_000, 3) } else { (1_000_000, 20) };
    if listing_only {
        bench.part_p(&mut report, &servers, others, listings);
    } else if stopped_only {
        bench.part_d(&mut report, &servers, runs.min(50), stopped_crowds);
    } else if distance_only {
        bench.part_n(&mut report, if smoke { 2 } else { 20 });
    } else if history_only {
        bench.part_m(&mut report, &servers, runs.min(100));
    } else if handover_only {
        bench.part_o(&mut report, &servers, handovers);
        bench.part_p(&mut report, &servers, others, listings);
    } else if latch_only {
        bench.part_i(&mut report, &servers, runs.min(100));
    } else if cluster_only {
        bench.part_k(&mut report, &servers, runs.min(100));
    } else if floor_only {
        bench.part_l(&mut report, runs.min(100), sections);
    } else if !crowd_only {
        bench.part_a(&mut report, runs, servers[0].port);
        bench.part_b(&mut report, runs, exec);
        bench.part_c(&mut report, workers, sections, exec);
        bench.part_d(&mut report, &servers, runs.min(50), stopped_crowds);
        bench.part_e(&mut report, exec);
        bench.part_h(&mut report, runs);
        bench.part_i(&mut report, &servers, runs.min(100));
        bench.part_k(&mut report, &servers, runs.min(100));
        bench.part_l(&mut report, runs.min(100), sections);
        bench.part_m(&mut report, &servers, runs.min(100));
        bench.part_n(&mut report, if smoke { 2 } else { 20 });
        bench.part_o(&mut report, &servers, handovers);
        bench.part_p(&mut report, &servers, others, listings);
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
