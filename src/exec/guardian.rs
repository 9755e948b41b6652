//! The guardian: a small process, forked from us before the command starts, that does nothing
//! until we die and then stops the command's whole process group. A waiting `exec` forks it
//! before it waits, so that the hand-over of a busy lock does not wait for the fork. It is what keeps the command
//! from running on unprotected after redlock is SIGKILLed (or OOM-killed): nothing of ours renews
//! the lock then, and it expires by its TTL.
//!
//! The guardian leads the process group the command is started in, so it covers the command from
//! its first instruction, its children included, with no window: the group exists (we put the
//! guardian in it, named by its pid, right after the fork) before the command does, and the
//! command joins it in the same spawn that starts it (`posix_spawn` with
//! `POSIX_SPAWN_SETPGROUP`). Once the command runs, we move the guardian out of the group
//! (`leave_group`), so the group is the command's tree alone: signals forwarded to it reach only
//! the command, and the guardian can tell when it is empty. The group's id stays reserved, since
//! it is the pid of our unreaped child (the guardian), until we reap the guardian after the
//! command.
//!
//! It learns of our death by the kernel's parent-death signal (SIGUSR2, set before it checks that
//! we are still its parent, so a death in between is not missed), then sends SIGTERM and SIGCONT
//! to the group and SIGKILL after the grace period.
//!
//! A plain fork, not a `CLONE_VM` one: a guardian sharing our memory would also share our fate
//! when the OOM killer picks us (it kills every process using the victim's memory), which is one
//! of the deaths it is there for.

use nix::sys::signal::{kill, SigSet, Signal};
use nix::sys::wait::waitpid;
use nix::unistd::{getpgrp, setpgid, Pid};
use std::io;
use std::time::Duration;

pub(super) struct Guardian {
    pid: Pid,
}

impl Guardian {
    /// Forks the guardian, leading a new process group (its pid), which the command must join.
    pub(super) fn start(grace: Duration) -> io::Result<Guardian> {
        let parent = std::process::id() as libc::pid_t;
        // Prepared before fork: the child may only make async-signal-safe calls.
        let mut wait_for = SigSet::empty();
        wait_for.add(Signal::SIGUSR2);
        let everything = SigSet::all();
        // The grace period in steps, so that the guardian leaves as soon as the group is gone.
        const STEP_MS: u128 = 20;
        let steps = grace.as_millis().div_ceil(STEP_MS).max(1);
        let step = libc::timespec {
            tv_sec: 0,
            tv_nsec: (STEP_MS * 1_000_000) as libc::c_long,
        };
        // SAFETY: after fork the child is a copy of a multi-threaded process, so it runs only raw
        // async-signal-safe syscalls on values prepared above (no allocation, no locks, no
        // unwinding) and leaves with _exit; nix's fork would not make that any safer.
        match unsafe { libc::fork() } {
            -1 => Err(io::Error::last_os_error()),
            // SAFETY: as above; `info` is ours to write and the sets were initialised before fork.
            0 => unsafe {
                // Every signal blocked: those forwarded to the command's group (while we are in
                // it) and a terminal's Ctrl-Z must not stop or kill the guardian.
                libc::sigprocmask(libc::SIG_SETMASK, everything.as_ref(), std::ptr::null_mut());
                // None of our descriptors: a socket our signal watcher waits to see closed, a
                // server connection, a pipe someone reads to its end must not stay open for as
                // long as the guardian lives. (Linux 5.9 and later close them in one call.)
                if libc::syscall(libc::SYS_close_range, 0, libc::c_uint::MAX, 0) != 0 {
                    for fd in 0..1024 {
                        libc::close(fd);
                    }
                }
                // The group named by our pid, which the parent puts us in (below). We must not
                // do it ourselves: the parent moves us out again once the command runs, and a
                // guardian scheduled late would undo that and stay in the command's group.
                let group = libc::getpid();
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGUSR2);
                if libc::getppid() == parent {
                    let mut info: libc::siginfo_t = std::mem::zeroed();
                    while libc::sigwaitinfo(wait_for.as_ref(), &mut info) < 0 {}
                }
                // Our parent, redlock, is gone: the lock is no longer renewed.
                libc::kill(-group, libc::SIGTERM);
                libc::kill(-group, libc::SIGCONT);
                for _ in 0..steps {
                    libc::nanosleep(&step, std::ptr::null_mut());
                    // Gone when nothing is left in it (we may still be in it ourselves if
                    // redlock died before moving us out: then the whole grace is waited).
                    if libc::kill(-group, 0) != 0 {
                        libc::_exit(0);
                    }
                }
                libc::kill(-group, libc::SIGKILL);
                libc::_exit(0)
            },
            pid => {
                let guardian = Guardian {
                    pid: Pid::from_raw(pid),
                };
                // Done here, before the command is spawned into the group, and only here: the
                // group exists from now on, whenever the guardian itself gets to run. (Dropping
                // the guardian on failure kills and reaps it.)
                setpgid(guardian.pid, guardian.pid)?;
                Ok(guardian)
            }
        }
    }

    /// The process group the command must join: the guardian's pid.
    pub(super) fn group(&self) -> libc::pid_t {
        self.pid.as_raw()
    }

    /// Moves the guardian back into our process group, once the command has joined its group.
    pub(super) fn leave_group(&self) {
        let _ = setpgid(self.pid, getpgrp());
    }

    /// Kills the guardian: we are alive, so it is still waiting, and a pending SIGKILL lets it
    /// run no further instruction. It is reaped when the returned value is dropped, so that it
    /// can die while we release the lock rather than while we wait for it.
    pub(super) fn dismiss(self) -> Dismissed {
        let pid = self.pid;
        // Its own drop would reap it at once.
        std::mem::forget(self);
        let _ = kill(pid, Signal::SIGKILL);
        Dismissed(pid)
    }
}

/// A guardian no command joined (the lock was not granted, or the command could not start) is
/// killed and reaped.
impl Drop for Guardian {
    fn drop(&mut self) {
        let _ = kill(self.pid, Signal::SIGKILL);
        let _ = waitpid(self.pid, None);
    }
}

/// A killed guardian, reaped when dropped. Until then its pid, the command's group id, stays
/// reserved.
#[must_use = "dropping it waits for the guardian to die"]
pub(crate) struct Dismissed(Pid);

impl Drop for Dismissed {
    fn drop(&mut self) {
        let _ = waitpid(self.0, None);
    }
}
