//! The README's "Three servers on this machine" block, pasted as a newcomer would: run by `sh`
//! as written, against the built binary and the server under test (`REDLOCK_TEST_SERVER`), its
//! output compared with the one the README shows. So the block cannot rot, and the output the
//! README shows is the real one.

use crate::support::markdown::doc;
use crate::support::*;
use std::path::Path;
use std::time::Duration;

const SECTION: &str = "\n## Three servers on this machine\n";

/// The first block fenced as ```LANGUAGE in `text`, and the text after it.
fn fenced<'a>(text: &'a str, language: &str) -> (&'a str, &'a str) {
    let start = format!("```{language}\n");
    let (_, block) = text
        .split_once(&start)
        .unwrap_or_else(|| panic!("no ```{language} block in:\n{text}"));
    block
        .split_once("\n```")
        .unwrap_or_else(|| panic!("an unclosed ```{language} block"))
}

/// `text` with each server's directory left out (`unix:///tmp/tmp.x/1.sock` is
/// `unix://…/1.sock`): `mktemp -d` names a new one every run.
fn without_directories(text: &str) -> String {
    let mut parts = text.split("unix://");
    let mut out = parts.next().unwrap_or_default().to_string();
    for part in parts {
        let end = part
            .find([' ', ':', ';', ')', ',', '\n'])
            .unwrap_or(part.len());
        let (path, rest) = part.split_at(end);
        let file = path.rsplit('/').next().unwrap_or_default();
        out.push_str(&format!("unix://…/{file}{rest}"));
    }
    out
}

/// Kills, on drop, every server the block left running under `dir`: those whose pidfile is
/// there and whose command line names `dir` (a block that failed halfway leaves them behind,
/// daemonized and out of the harness's reach).
struct Leftovers<'a> {
    dir: &'a Path,
}

impl Drop for Leftovers<'_> {
    fn drop(&mut self) {
        let mut dirs = vec![self.dir.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "pid") {
                    continue;
                }
                let pid = std::fs::read_to_string(&path).unwrap_or_default();
                let Ok(pid) = pid.trim().parse::<i32>() else {
                    continue;
                };
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let ours = String::from_utf8_lossy(&cmdline).contains(&*self.dir.to_string_lossy());
                if ours {
                    signal(pid, libc::SIGKILL);
                }
            }
        }
    }
}

#[test]
fn the_readmes_three_server_block_runs_and_prints_what_the_readme_shows() {
    let readme = doc("README.md");
    let (_, section) = readme
        .split_once(SECTION)
        .expect("README.md has a section Three servers on this machine");
    let section = section.split("\n## ").next().unwrap_or_default();
    let (block, after) = fenced(section, "sh");
    let (shown, _) = fenced(after, "text");

    let scratch = tempfile::tempdir().unwrap();
    // `mktemp -d` makes the servers' directory in TMPDIR, here one of the test's own.
    let tmp = scratch.path().join("tmp");
    let bin = scratch.path().join("bin");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    let _leftovers = Leftovers { dir: &tmp };
    // `redis-server` in the block is the server under test.
    let server = redis_server();
    if server.components().count() > 1 {
        std::os::unix::fs::symlink(server, bin.join("redis-server")).unwrap();
    }
    // Its stderr in the same stream as its stdout, in the order a terminal shows them.
    let script = scratch.path().join("block.sh");
    std::fs::write(&script, format!("exec 2>&1\n{block}\n")).unwrap();

    let mut shell = std::process::Command::new("sh");
    shell.arg(&script).current_dir(scratch.path());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("REDLOCK_") {
            shell.env_remove(name);
        }
    }
    shell
        .env("TMPDIR", &tmp)
        .env("PATH", format!("{}:{}", bin.display(), path_with_redlock()));
    // Three servers started and stopped, three runs of at most a few --timeouts each.
    let output = Cmd::new(shell)
        .deadline(Duration::from_secs(60) + SLACK)
        .assert()
        .code(0);

    let printed = stdout_of(&output);
    assert_eq!(
        without_directories(&printed),
        without_directories(shown.trim()),
        "the block printed:\n{printed}"
    );
    // It cleaned up after itself: the servers' directory is gone.
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn directories_are_left_out_of_socket_urls() {
    assert_eq!(
        without_directories("(unix:///tmp/tmp.ab/1.sock: refused; unix:///x/2.sock: refused)"),
        "(unix://…/1.sock: refused; unix://…/2.sock: refused)"
    );
}
