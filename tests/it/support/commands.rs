//! The commands tests run under `redlock exec`: started and returned once they run, and the
//! files and processes they leave behind to look at.

use super::cluster::Cluster;
use super::process::Running;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tempfile::TempDir;

/// The `--ttl` of `exec_long_command`.
pub const LONG_COMMAND_TTL: Duration = Duration::from_secs(3);

/// How long `hung_command` runs unless it is stopped.
pub const HUNG_FOR: Duration = Duration::from_secs(30);

/// A file's contents, trimmed; empty if it does not exist (yet).
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// True while a process with `pid` exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

/// A command that runs `HUNG_FOR` with a grandchild (a `sleep`) whose pid goes to `dir/pid`;
/// SIGTERM makes it write `term` to `dir/term`, kill the grandchild and exit 0.
pub fn hung_command(dir: &Path) -> String {
    format!(
        "trap 'echo term > {d}/term; kill $pid 2>/dev/null; exit 0' TERM; sleep {s} & pid=$!; echo $pid > {d}/pid; wait",
        d = dir.display(),
        s = HUNG_FOR.as_secs()
    )
}

/// A command that writes its pid to `started`, then runs until `done` exists and says
/// `finished`.
pub fn until_file(started: &Path, done: &Path) -> String {
    format!(
        "echo $$ > {s}; while [ ! -e {d} ]; do sleep 0.05; done; echo finished",
        s = started.display(),
        d = done.display()
    )
}

/// `redlock ARGS -- sh -c SCRIPT` with `$DIR` a fresh directory, returned once SCRIPT has run
/// `touch "$DIR/ready"`.
pub fn exec_until_ready(cluster: &Cluster, args: &[&str], script: &str) -> (Running, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let child = cluster
        .redlock()
        .env("DIR", dir.path())
        .args(args)
        .args(["--", "sh", "-c", script])
        .spawn_until("the command to start", || ready.exists());
    (child, dir)
}

/// `redlock exec job --ttl LONG_COMMAND_TTL FLAGS -- sh -c <hung_command>` in `dir`, once the
/// command runs; with the file its TERM trap writes to.
pub fn exec_long_command(cluster: &Cluster, dir: &Path, flags: &[&str]) -> (Running, PathBuf) {
    let script = hung_command(dir);
    let ttl = format!("{}s", LONG_COMMAND_TTL.as_secs());
    let grandchild = dir.join("pid");
    let child = cluster
        .redlock()
        .args(["exec", "job", "--ttl", &ttl])
        .args(flags)
        .args(["--", "sh", "-c", &script])
        .spawn_until("the command to start", || !read(&grandchild).is_empty());
    (child, dir.join("term"))
}
