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
