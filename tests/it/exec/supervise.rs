//! `redlock exec` supervises its command from one loop on its main thread: what that costs the
//! machine, and what it relies on from the kernel.
//!
//! The threads of the redlock process are counted in /proc/<pid>/task (redlock is the command's
//! parent). Exec itself adds none (signals, the command's exit and renewals all come to that
//! loop), so with one server, whose rounds the engine runs on the calling thread, redlock is a
//! single thread.

use crate::support::*;
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

const TTL: Duration = Duration::from_millis(1500);

fn threads_of(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |tasks| tasks.count())
}

#[test]
fn exec_runs_its_command_on_one_thread_through_renewals() {
    let ttl = format!("{}ms", TTL.as_millis());
    // A wait starts a thread to be woken by signals; it must be gone once the lock is granted.
    for wait in [&[][..], &["--wait", "5s"][..]] {
        let cluster = Cluster::start(1);
        let mut args = vec!["exec", "job", "--ttl", &ttl, "--timeout", "100ms"];
        args.extend_from_slice(wait);
        let script = r#"echo $PPID > "$DIR/parent"; touch "$DIR/ready"; while [ ! -e "$DIR/done" ]; do sleep 0.05; done"#;
        let (child, dir) = exec_until_ready(&cluster, &args, script);
        let redlock: i32 = read(&dir.path().join("parent")).parse().unwrap();
        assert_eq!(
            redlock,
            child.id() as i32,
            "the command's parent is not redlock"
        );
        // The acquisition's worker may still be on its way out.
        wait_for(
            "redlock to run on one thread",
            Duration::from_secs(2),
            || threads_of(redlock) == 1,
        );
        // Renewed every TTL/3: this spans a few renewals.
        let watched = Instant::now();
        while watched.elapsed() < TTL {
            assert_eq!(
                threads_of(redlock),
                1,
                "{wait:?}, after {:?}",
                watched.elapsed()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        std::fs::write(dir.path().join("done"), "").unwrap();
        let output = child.finish(SLACK);
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
        assert_eq!(cluster.values(KEY), vec![None]);
    }
}

#[test]
fn exec_sees_its_command_exit_when_started_with_sigchld_ignored() {
    // An ignored SIGCHLD survives exec: the kernel would reap the command itself, and neither
    // say that it exited nor let redlock learn its status.
    let cluster = Cluster::start(1);
    let mut command = std::process::Command::new(redlock_path());
    // SAFETY: between fork and exec only `signal`, which is async-signal-safe, is called.
    unsafe {
        command.pre_exec(|| match libc::signal(libc::SIGCHLD, libc::SIG_IGN) {
            libc::SIG_ERR => Err(std::io::Error::last_os_error()),
            _ => Ok(()),
        });
    }
    let output = Cmd::new(command)
        .env("REDLOCK_SERVERS", cluster.urls())
        .env("REDLOCK_TIMEOUT", TEST_TIMEOUT)
        .args(["exec", "job", "--", "sh", "-c", "exit 3"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr_of(&output));
    assert_eq!(cluster.values(KEY), vec![None]);
}

/// The fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, …
fn stat_of(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = stat.rsplit_once(") ")?.1;
    Some(after_name.split_whitespace().map(str::to_string).collect())
}

#[test]
fn exec_starts_its_command_unmasked_in_a_group_of_its_tree_alone() {
    // The command is spawned into a process group led by the guardian, which then moves out to
    // a group of its own (neither redlock's nor the command's, so that a signal to either misses
    // it): signals forwarded to the group must reach the command's tree and nothing else. The
    // spawn must also undo what redlock's own process has: the signals blocked for its
    // signalfd, and Rust's ignored SIGPIPE.
    let cluster = Cluster::start(1);
    // The shell uses builtins only, but for the one background sleep: a shell blocks every
    // signal around each fork it makes, so a child reading /proc/$$ could see that passing mask
    // rather than redlock's, and a child such as `touch` could still be in the group (exiting)
    // when the test lists it.
    let script = r#"while read -r line; do case $line in Sig[BI]*) echo "$line";; esac; done < /proc/$$/status > "$DIR/signals"; sleep 30 & echo $! > "$DIR/sleep"; echo $$ > "$DIR/shell"; : > "$DIR/ready"; wait"#;
    let (child, dir) = exec_until_ready(&cluster, &["exec", "job"], script);
    let shell: i32 = read(&dir.path().join("shell")).parse().unwrap();
    let sleep: i32 = read(&dir.path().join("sleep")).parse().unwrap();
    let group = stat_of(shell).expect("the shell runs")[2].clone();
    let members = || {
        let mut members: Vec<i32> = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
            .filter(|&pid| stat_of(pid).is_some_and(|stat| stat[2] == group))
            .collect();
        members.sort();
        members
    };
    let mut expected = vec![shell, sleep];
    expected.sort();
    // The guardian leads the group until it is told the command runs, right after the spawn
    // returns: the command may already be running (and this test reading) a moment before.
    wait_for("the guardian to leave the command's group", SLACK, || {
        members() == expected
    });
    assert_eq!(members(), expected, "process group {group}");
    assert_ne!(
        group,
        child.id().to_string(),
        "the command is in redlock's own group"
    );
    let redlock = child.id().to_string();
    let guardian = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != shell)
        .find(|&pid| stat_of(pid).is_some_and(|stat| stat[1] == redlock))
        .expect("the guardian");
    let guardians_group = stat_of(guardian).unwrap()[2].clone();
    assert!(
        guardians_group != redlock && guardians_group != group,
        "the guardian is in group {guardians_group}: redlock's is {redlock}, the command's {group}"
    );
    let signals = read(&dir.path().join("signals"));
    assert!(
        signals.contains("SigBlk:\t0000000000000000"),
        "the command starts with signals blocked: {signals}"
    );
    let ignored = signals
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:\t"))
        .map(|mask| u64::from_str_radix(mask.trim(), 16).unwrap())
        .unwrap();
    assert_eq!(
        ignored & (1 << (libc::SIGPIPE - 1)),
        0,
        "SIGPIPE is ignored"
    );
    // The group, not just the shell, is what a signal to redlock reaches.
    signal(child.id() as i32, libc::SIGTERM);
    let output = child.finish(SLACK);
    assert_eq!(output.status.code(), Some(143), "{}", stderr_of(&output));
    wait_for("the background sleep to die", SLACK, || !alive(sleep));
}

/// Processes whose command line has `needle` among its arguments.
fn processes_with_argument(needle: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                cmdline
                    .split(|&b| b == 0)
                    .any(|arg| arg == needle.as_bytes())
            })
        })
        .collect()
}

#[test]
fn a_waiting_exec_that_gives_up_leaves_no_guardian_behind() {
    // A waiting exec forks its guardian (a copy of itself, same command line) before it waits;
    // when the wait ends without the lock, the guardian must go with it. The lock's name is
    // this test's alone, so that other tests' processes are not counted.
    let name = format!("guardian-check-{}", std::process::id());
    let cluster = Cluster::start(1);
    let _holder = cluster.acquire_token(&name, &["--ttl", "60s"]);
    let mut exec = cluster.redlock();
    exec.args(["exec", &name, "--wait", "300ms", "--", "true"]);
    let waiting = exec.spawn();
    let pid = waiting.id() as i32;
    wait_for("the guardian to be forked", SLACK, || {
        processes_with_argument(&name).iter().any(|&p| p != pid)
    });
    let output = waiting.finish(SLACK);
    assert_eq!(output.status.code(), Some(75), "{}", stderr_of(&output));
    assert_eq!(processes_with_argument(&name), Vec::<i32>::new());
}

#[test]
fn the_guardian_keeps_none_of_redlocks_descriptors_open() {
    // A guardian that held a copy of redlock's sockets would keep a server connection (or the
    // socket that stops redlock's signal watcher) open for as long as it lives; one that held
    // redlock's end of their own socket would never see it close when redlock dies. It keeps
    // its own end of that socket and its timer, nothing else.
    let cluster = Cluster::start(1);
    let script = r#"echo $$ > "$DIR/shell"; touch "$DIR/ready"; while [ ! -e "$DIR/done" ]; do sleep 0.05; done"#;
    let (child, dir) = exec_until_ready(&cluster, &["exec", "job"], script);
    let shell: i32 = read(&dir.path().join("shell")).parse().unwrap();
    let redlock = child.id() as i32;
    let guardians: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&pid| {
            pid != shell && stat_of(pid).is_some_and(|stat| stat[1] == redlock.to_string())
        })
        .collect();
    assert_eq!(
        guardians.len(),
        1,
        "redlock's children other than the command"
    );
    // The guardian drops what it inherited and makes its timer after the fork, while the
    // command may already be running: what it holds is awaited, and what it held last is shown
    // if it never comes down to its own two.
    let guardian = guardians[0];
    let descriptors = || -> Vec<String> {
        let mut open: Vec<String> = std::fs::read_dir(format!("/proc/{guardian}/fd"))
            .map(|entries| {
                entries
                    .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
                    // `socket:[123]` -> `socket`
                    .map(|target| {
                        target
                            .display()
                            .to_string()
                            .split(':')
                            .next()
                            .unwrap_or_default()
                            .to_string()
                    })
                    .collect()
            })
            .unwrap_or_default();
        open.sort();
        open
    };
    let mut open = descriptors();
    let deadline = Instant::now() + SLACK;
    while open != ["anon_inode", "socket"] && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        open = descriptors();
    }
    assert_eq!(
        open,
        ["anon_inode", "socket"],
        "descriptors the guardian holds"
    );
    std::fs::write(dir.path().join("done"), "").unwrap();
    let output = child.finish(SLACK);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
}
