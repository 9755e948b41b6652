//! The command's process: spawned in its own process group so that a signal reaches the whole
//! tree (`sh -c 'a | b'` included), given the terminal when we had it, and tied to our life so
//! that it never runs on unprotected after redlock is SIGKILLed.
//!
//! Two mechanisms cover redlock's sudden death. The command itself gets `PR_SET_PDEATHSIG`, which
//! the kernel delivers when its parent dies. Its own children do not, so a small guardian process,
//! forked from us, waits for our death the same way and then signals the whole group: SIGTERM,
//! then SIGKILL after the grace period. On a normal exit we kill the guardian first.
//!
//! The guardian is forked for every command, however short. Forking it only once the command had
//! run for a short tick would save a fork for `exec NAME -- true`, but nothing would cover a
//! SIGKILL of redlock inside that tick: the command's PDEATHSIG reaches the command alone, and a
//! child it forked in its first microseconds (`sh -c 'job & …'`, a daemon's first fork) would
//! run on, orphaned, after the lock expires. No other mechanism reaches the group when we die
//! (the parent-death signal is not inherited across fork, and a subreaper must itself be alive),
//! so the fork stays. It stays a plain fork, too: a `CLONE_VM` guardian would share our memory
//! (libc's errno among it) while it runs, and `CLONE_VFORK` would stop us until it exits, which a
//! guardian never does until we die.

use crate::signals;
use nix::sys::signal::{kill, killpg, SigSet, Signal};
use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::{getpgrp, tcgetpgrp, tcsetpgrp, Pid};
use std::io::{self, IsTerminal};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::Duration;

pub(crate) struct Supervised {
    child: Child,
    /// The process group of the command: its pid.
    pgid: libc::pid_t,
    guardian: Option<Pid>,
    /// Our process group, when we handed the terminal to the command and must take it back.
    terminal_owner: Option<Pid>,
}

/// How the command could not be started, in the shell's terms.
pub(crate) enum SpawnError {
    NotFound(io::Error),
    NotExecutable(io::Error),
    Other(io::Error),
}

impl Supervised {
    /// Starts `argv` with `env` added (or, for a `None` value, removed). Must be called from the
    /// main thread: the kernel sends the parent-death signal when the *thread* that forked exits.
    pub(crate) fn spawn(
        argv: &[String],
        env: &[(&str, Option<&str>)],
        grace: Duration,
    ) -> Result<Supervised, SpawnError> {
        let parent = std::process::id() as libc::pid_t;
        let take_terminal = foreground_terminal();
        let mut command = Command::new(&argv[0]);
        command.args(&argv[1..]);
        for (name, value) in env {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        command.process_group(0);
        // SAFETY: the closure runs between fork and exec in a copy of a multi-threaded process, so
        // it makes only async-signal-safe calls (raw syscalls, no allocation, no locks), and it
        // touches only values it owns by copy (`parent`, `take_terminal`).
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // We may have died between fork and prctl: then nobody would signal us.
                if libc::getppid() != parent {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
                if take_terminal {
                    // Become the foreground group ourselves too, before exec, so that a command
                    // reading the terminal at once is never stopped by SIGTTIN. We are still in the
                    // background here, so SIGTTOU must be blocked while we ask.
                    let mut block: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut block);
                    libc::sigaddset(&mut block, libc::SIGTTOU);
                    libc::sigprocmask(libc::SIG_BLOCK, &block, std::ptr::null_mut());
                    libc::tcsetpgrp(libc::STDIN_FILENO, libc::getpid());
                    // Ctrl-Z would stop the command in a group no shell manages, holding the
                    // terminal and the lock with nobody able to resume it: ignore it (the
                    // disposition survives exec; programs that handle it themselves still can).
                    libc::signal(libc::SIGTSTP, libc::SIG_IGN);
                }
                // Our signal mask (the signals `exec` reads from its signalfd) survives exec.
                signals::unblock_all()
            });
        }
        let child = command.spawn().map_err(|err| match err.raw_os_error() {
            Some(libc::ENOENT) => SpawnError::NotFound(err),
            Some(libc::EACCES) | Some(libc::ENOEXEC) | Some(libc::EISDIR) | Some(libc::EPERM) => {
                SpawnError::NotExecutable(err)
            }
            _ => SpawnError::Other(err),
        })?;
        let pgid = child.id() as libc::pid_t;
        let terminal_owner = if take_terminal {
            let ours = getpgrp();
            with_sigttou_blocked(|| {
                let _ = tcsetpgrp(io::stdin(), Pid::from_raw(pgid));
            });
            Some(ours)
        } else {
            None
        };
        let guardian = spawn_guardian(pgid, grace).ok();
        Ok(Supervised {
            child,
            pgid,
            guardian,
            terminal_owner,
        })
    }

    pub(crate) fn pid(&self) -> libc::pid_t {
        self.pgid
    }

    /// Sends `signal` to the command's whole process group. The group's leader is our unreaped
    /// child, so its pgid cannot have been reused.
    pub(crate) fn signal_group(&self, signal: libc::c_int) {
        if let Ok(signal) = Signal::try_from(signal) {
            let _ = killpg(Pid::from_raw(self.pgid), signal);
        }
    }

    /// Reaps the command (it must have exited: see `has_exited`), stops what it left in its
    /// group, gives the terminal back and dismisses the guardian.
    pub(crate) fn finish(mut self) -> io::Result<ExitStatus> {
        // Anything the command left running in its group would run on without the lock.
        self.signal_group(libc::SIGTERM);
        let status = self.child.wait();
        self.dismiss();
        status
    }

    fn dismiss(&mut self) {
        if let Some(owner) = self.terminal_owner.take() {
            with_sigttou_blocked(|| {
                let _ = tcsetpgrp(io::stdin(), owner);
            });
        }
        if let Some(guardian) = self.guardian.take() {
            // The guardian is our child: kill and reap it.
            let _ = kill(guardian, Signal::SIGKILL);
            let _ = waitpid(guardian, None);
        }
    }

    /// True once the command has exited (or cannot be waited for), without reaping it, so that
    /// its pid (and process group id) stay reserved until `finish`.
    pub(crate) fn has_exited(&self) -> bool {
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        !matches!(
            waitid(Id::Pid(Pid::from_raw(self.pgid)), flags),
            Ok(WaitStatus::StillAlive) | Err(nix::errno::Errno::EINTR)
        )
    }
}

/// True when stdin is a terminal whose foreground group is ours: then the command should own
/// the terminal while it runs (reads, Ctrl-C and Ctrl-\ go straight to it, once).
fn foreground_terminal() -> bool {
    io::stdin().is_terminal() && tcgetpgrp(io::stdin()) == Ok(getpgrp())
}

fn with_sigttou_blocked(f: impl FnOnce()) {
    let mut block = SigSet::empty();
    block.add(Signal::SIGTTOU);
    let old = block.thread_swap_mask(nix::sys::signal::SigmaskHow::SIG_BLOCK);
    f();
    if let Ok(old) = old {
        let _ = old.thread_set_mask();
    }
}

/// Forks a process that does nothing until we die, then stops the command's group.
fn spawn_guardian(pgid: libc::pid_t, grace: Duration) -> io::Result<Pid> {
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
    // async-signal-safe syscalls on values prepared above (no allocation, no locks, no unwinding)
    // and leaves with _exit; nix's fork would not make that any safer.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        // SAFETY: as above; `info` is ours to write and the sets were initialised before fork.
        0 => unsafe {
            libc::sigprocmask(libc::SIG_SETMASK, everything.as_ref(), std::ptr::null_mut());
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGUSR2);
            if libc::getppid() == parent {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                while libc::sigwaitinfo(wait_for.as_ref(), &mut info) < 0 {}
            }
            // Our parent, redlock, is gone: the lock is no longer renewed.
            libc::kill(-pgid, libc::SIGTERM);
            libc::kill(-pgid, libc::SIGCONT);
            for _ in 0..steps {
                libc::nanosleep(&step, std::ptr::null_mut());
                if libc::kill(-pgid, 0) != 0 {
                    libc::_exit(0);
                }
            }
            libc::kill(-pgid, libc::SIGKILL);
            libc::_exit(0)
        },
        pid => Ok(Pid::from_raw(pid)),
    }
}
