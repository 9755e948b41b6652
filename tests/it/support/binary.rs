//! The binary under test and what every run of it shares, whichever harness runs it (`one_shot`
//! or `process`): its path, an environment without the caller's REDLOCK_*, the deadline a run's
//! flags give it, and reading what it printed.
//!
//! Deadlines only catch hangs. A run's deadline is derived from the flags it was given (its
//! `--wait`, `--timeout`, `--max-runtime`…), plus `SLACK` for a loaded machine; a test that
//! waits for a background process says how long it may take, from its own TTL or timeout.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{CommandArgs, CommandEnvs, Output};
use std::time::Duration;

/// What a loaded machine may add to a process's run beyond what its flags allow for: start-up,
/// scheduling, connecting. Deadlines only: no time bound a test asserts uses it.
pub const SLACK: Duration = Duration::from_secs(30);

/// No test runs one redlock longer than this, whatever its flags say (`--wait 30d` in a
/// usage-error test is refused at once).
const LONGEST: Duration = Duration::from_secs(300);

/// The per-server timeout redlock uses when neither `--timeout` nor `REDLOCK_TIMEOUT` is given.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(200);

/// The path of the built binary, for scripts that run it themselves.
pub fn redlock_path() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_redlock"))
}

/// `$PATH` with the built binary's directory first, for scripts that run `redlock` by name.
pub fn path_with_redlock() -> String {
    let dir = redlock_path().parent().unwrap().display().to_string();
    format!("{dir}:{}", std::env::var("PATH").unwrap_or_default())
}

/// The binary under test with no REDLOCK_* from the caller's environment: what a test sets is
/// all it is configured with.
pub fn redlock_command() -> std::process::Command {
    let mut command = std::process::Command::new(redlock_path());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("REDLOCK_") {
            command.env_remove(name);
        }
    }
    command
}

/// What a run with these arguments and environment may take: its `--wait`, its
/// `--max-runtime` and the `--kill-after` that follows it, and a few rounds of its `--timeout`
/// (acquisition, fence write-back, clean-up, release), plus `SLACK`.
pub fn deadline(args: CommandArgs, envs: CommandEnvs) -> Duration {
    let flags = Flags::read(args, envs);
    let wait = flags.duration(&["--wait", "-w"], "REDLOCK_WAIT");
    let timeout = flags
        .duration(&["--timeout"], "REDLOCK_TIMEOUT")
        .unwrap_or(DEFAULT_TIMEOUT);
    let max_runtime = flags.duration(&["--max-runtime"], "REDLOCK_MAX_RUNTIME");
    let kill_after = max_runtime.and(flags.duration(&["--kill-after"], "REDLOCK_KILL_AFTER"));
    let kill_after = kill_after.or(max_runtime.map(|_| Duration::from_secs(5)));
    let derived = SLACK
        + wait.unwrap_or_default()
        + max_runtime.unwrap_or_default()
        + kill_after.unwrap_or_default()
        + timeout * 4;
    derived.min(LONGEST)
}

/// A run's arguments before any `--` (the command's own are not redlock's), and the
/// environment it was given.
struct Flags {
    args: Vec<String>,
    envs: Vec<(String, Option<String>)>,
}

impl Flags {
    fn read(args: CommandArgs, envs: CommandEnvs) -> Flags {
        let text = |s: &OsStr| s.to_string_lossy().into_owned();
        Flags {
            args: args.map(text).take_while(|a| a != "--").collect(),
            envs: envs
                .map(|(name, value)| (text(name), value.map(text)))
                .collect(),
        }
    }

    /// The duration a flag gives, or else the environment variable.
    fn duration(&self, flags: &[&str], env: &str) -> Option<Duration> {
        let args = &self.args;
        let from_args = args.iter().enumerate().rev().find_map(|(i, arg)| {
            flags.iter().find_map(|flag| {
                if arg == flag {
                    args.get(i + 1).cloned()
                } else {
                    arg.strip_prefix(&format!("{flag}=")).map(str::to_string)
                }
            })
        });
        let from_env = || {
            self.envs
                .iter()
                .find(|(name, _)| name == env)
                .and_then(|(_, value)| value.clone())
        };
        humantime::parse_duration(&from_args.or_else(from_env)?).ok()
    }
}

pub fn stdout_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

pub fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).trim().to_string()
}

/// One JSON value per line of `text` (the `--log-format json` log).
pub fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

/// The JSON a successful run printed on stdout.
pub fn json(output: &Output) -> serde_json::Value {
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(output));
    document(output)
}

/// The JSON document a run printed on stdout, whatever its exit status (a busy `latch wait
/// --json` prints one too).
pub fn document(output: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout_of(output))
        .unwrap_or_else(|e| panic!("{e}: {:?} / {}", stdout_of(output), stderr_of(output)))
}
