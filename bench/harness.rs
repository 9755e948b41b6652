//! What every part runs against: the redis-server processes this program starts, the binary
//! measured and a command aimed at the servers, a scratch directory, the list of what broke, and
//! the timing of a command run again and again.

use super::redis_server::Redis;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// The binary measured: `REDLOCK_BIN` (bench/run sets it to the static release build that ships,
/// unless its caller names one), else the one cargo built for this bench.
pub(super) static REDLOCK: LazyLock<String> = LazyLock::new(|| {
    std::env::var("REDLOCK_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_redlock").to_string())
});
pub(super) const SERVERS: usize = 5;
pub(super) const TIMEOUT: &str = "200ms";

pub(super) struct Bench {
    pub(super) urls: String,
    pub(super) dir: PathBuf,
    pub(super) broken: Vec<String>,
}

impl Bench {
    /// Starts `SERVERS` redis-server processes on free loopback ports, and a bench aimed at all of
    /// them that works in `dir`.
    pub(super) fn start(dir: PathBuf) -> (Bench, Vec<Redis>) {
        let servers: Vec<Redis> = (0..SERVERS).map(|_| Redis::start()).collect();
        let urls = servers
            .iter()
            .map(|s| format!("redis://127.0.0.1:{}", s.port))
            .collect::<Vec<_>>()
            .join(",");
        let bench = Bench {
            urls,
            dir,
            broken: Vec::new(),
        };
        (bench, servers)
    }

    pub(super) fn redlock(&self) -> Command {
        self.redlock_of(&REDLOCK)
    }

    /// `binary` (another build of redlock, say) aimed at the servers, like `redlock`.
    pub(super) fn redlock_of(&self, binary: &str) -> Command {
        let mut cmd = Command::new(binary);
        cmd.env("REDLOCK_SERVERS", &self.urls)
            .env("REDLOCK_TIMEOUT", TIMEOUT)
            .env_remove("REDLOCK_WAIT")
            .stdin(Stdio::null());
        cmd
    }

    pub(super) fn redlock_env(&self, mut cmd: Command) -> Command {
        cmd.env("REDLOCK", &*REDLOCK)
            .env("REDLOCK_SERVERS", &self.urls)
            .env("REDLOCK_TIMEOUT", TIMEOUT)
            .stdin(Stdio::null());
        cmd
    }

    /// Whether this build has `redlock exec` (it may predate it).
    pub(super) fn exec_available(&self) -> bool {
        self.redlock()
            .args(["exec", "probe", "--", "true"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

/// `flock FILE true`: the baseline most parts measure redlock against.
pub(super) fn flock_true(lockfile: &Path) -> Command {
    let mut flock = Command::new("flock");
    flock.arg(lockfile).arg("true");
    flock
}

/// Runs `run` `runs` times (after one warm-up) and returns each wall time.
pub(super) fn sample(runs: usize, mut run: impl FnMut() -> std::io::Result<()>) -> Vec<Duration> {
    let _ = run();
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            run().expect("run benchmark command");
            started.elapsed()
        })
        .collect()
}

// The tests' own `wait_for`, for the test launchers the benchmark includes.
#[path = "../tests/it/support/wait.rs"]
mod wait;
pub(super) use wait::wait_for;

/// Runs each command `runs` times, one of each in turn (so a loaded moment costs all of them
/// alike), and returns each one's wall times and CPU times (its own and its children's, user and
/// system: less moved by a loaded machine). The first round warms the caches and is not counted.
pub(super) fn interleave(
    commands: &mut [(String, Command)],
    runs: usize,
) -> (Vec<Vec<Duration>>, Vec<Vec<Duration>>) {
    let mut walls = vec![Vec::with_capacity(runs); commands.len()];
    let mut cpus = vec![Vec::with_capacity(runs); commands.len()];
    for round in 0..=runs {
        for (index, (_, command)) in commands.iter_mut().enumerate() {
            let started = Instant::now();
            let usage = rusage(
                command
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null()),
            );
            if let (true, Some(usage)) = (round > 0, usage) {
                walls[index].push(started.elapsed());
                cpus[index].push(seconds(usage.ru_utime) + seconds(usage.ru_stime));
            }
        }
    }
    (walls, cpus)
}

fn seconds(time: libc::timeval) -> Duration {
    Duration::from_secs(time.tv_sec as u64) + Duration::from_micros(time.tv_usec as u64)
}

/// Runs `cmd` to its end and returns what it used (wait4's rusage: the command and the children
/// it waited for).
pub(super) fn rusage(cmd: &mut Command) -> Option<libc::rusage> {
    let child = cmd.spawn().ok()?;
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 reaps our own child and writes into `status` and `usage`, which we own.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    (pid > 0).then_some(usage)
}
