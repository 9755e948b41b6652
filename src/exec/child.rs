//! The command's process: spawned into a process group of its own so that a signal reaches the
//! whole tree (`sh -c 'a | b'` included), given the terminal when we had it, and tied to the
//! lock so that it never runs on unprotected, whatever happens to redlock: the group is named by
//! a guardian, forked first, which holds the lock's deadline and stops the group if we die or
//! stop renewing (guardian.rs).
//!
//! The command is started by `posix_spawnp`, which borrows our memory until the command's exec
//! (a vfork) instead of copying our page tables as a fork does: everything the command needs set
//! is set by the spawn itself (its group, an empty signal mask, SIGPIPE's default action) or
//! inherited from us (the terminal, handed to its group before it starts; Ctrl-Z ignored), so no
//! code of ours has to run between fork and exec.

use super::guardian::{Dismissed, Guardian};
use crate::clock::BootInstant;
use nix::errno::Errno;
use nix::spawn::{posix_spawnp, PosixSpawnAttr, PosixSpawnFileActions, PosixSpawnFlags};
use nix::sys::signal::{killpg, signal, SigHandler, SigSet, Signal};
use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::{getpgrp, tcgetpgrp, tcsetpgrp, Pid};
use std::ffi::CString;
use std::io::{self, IsTerminal};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

pub(crate) struct Supervised {
    /// The command's pid.
    pid: libc::pid_t,
    /// The command's process group: the guardian's pid.
    pgid: libc::pid_t,
    guardian: Guardian,
    /// Our process group, when we handed the terminal to the command and must take it back.
    terminal_owner: Option<Pid>,
}

/// How the command could not be started, in the shell's terms.
pub(crate) enum SpawnError {
    NotFound(io::Error),
    NotExecutable(io::Error),
    Other(io::Error),
}

impl SpawnError {
    fn of(err: io::Error) -> SpawnError {
        match err.raw_os_error() {
            Some(libc::ENOENT) => SpawnError::NotFound(err),
            Some(libc::EACCES) | Some(libc::ENOEXEC) | Some(libc::EISDIR) | Some(libc::EPERM) => {
                SpawnError::NotExecutable(err)
            }
            _ => SpawnError::Other(err),
        }
    }
}

impl Supervised {
    /// Starts `argv` with `env` added (or, for a `None` value, removed) in the process group
    /// `guardian` leads, once the guardian knows the lock's `deadline` (a guardian that cannot
    /// be told is gone, and the command does not start).
    pub(crate) fn spawn(
        argv: &[String],
        env: &[(&str, Option<&str>)],
        guardian: Guardian,
        deadline: BootInstant,
    ) -> Result<Supervised, SpawnError> {
        guardian.deadline(deadline).map_err(|err| {
            SpawnError::Other(io::Error::new(
                err.kind(),
                format!("the guardian process is gone: {err}"),
            ))
        })?;
        let take_terminal = foreground_terminal();
        let pgid = guardian.group();
        let terminal_owner = take_terminal.then(|| {
            // The group gets the terminal before the command is in it, so a command reading the
            // terminal at once is never stopped by SIGTTIN.
            let ours = getpgrp();
            with_sigttou_blocked(|| {
                let _ = tcsetpgrp(io::stdin(), Pid::from_raw(pgid));
            });
            // Ctrl-Z would stop the command in a group no shell manages, holding the terminal
            // and the lock with nobody able to resume it: ignored, which the command inherits
            // (programs that handle it themselves still can). We no longer have the terminal.
            // SAFETY: ignoring a signal installs no handler, so no code of ours runs in one.
            let _ = unsafe { signal(Signal::SIGTSTP, SigHandler::SigIgn) };
            ours
        });
        let spawned = start(argv, env, Pid::from_raw(pgid));
        match spawned {
            Ok(pid) => {
                guardian.running();
                Ok(Supervised {
                    pid: pid.as_raw(),
                    pgid,
                    guardian,
                    terminal_owner,
                })
            }
            Err(err) => {
                give_back(terminal_owner);
                drop(guardian.dismiss());
                Err(SpawnError::of(err))
            }
        }
    }

    pub(crate) fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Tells the guardian the lock's new deadline, after a renewal.
    pub(crate) fn renewed(&self, deadline: BootInstant) {
        let _ = self.guardian.deadline(deadline);
    }

    /// Tells the guardian we are stopping the command, with SIGKILL at `kill_at`: it then sends
    /// no SIGTERM of its own.
    pub(crate) fn stopping(&self, kill_at: BootInstant) {
        self.guardian.stopping(kill_at);
    }

    /// Sends `signal` to the command's whole process group. Its id is the pid of our unreaped
    /// child, the guardian, so it cannot have been reused.
    pub(crate) fn signal_group(&self, signal: libc::c_int) {
        if let Ok(signal) = Signal::try_from(signal) {
            let _ = killpg(Pid::from_raw(self.pgid), signal);
        }
    }

    /// Reaps the command (it must have exited: see `has_exited`), stops what it left in its
    /// group, gives the terminal back and dismisses the guardian, which is reaped when the
    /// second value is dropped.
    pub(crate) fn finish(self) -> (io::Result<ExitStatus>, Dismissed) {
        // Anything the command left running in its group would run on without the lock.
        self.signal_group(libc::SIGTERM);
        let status = reap(self.pid);
        give_back(self.terminal_owner);
        (status, self.guardian.dismiss())
    }

    /// True once the command has exited (or cannot be waited for), without reaping it, so that
    /// its pid (and process group id) stay reserved until `finish`.
    pub(crate) fn has_exited(&self) -> bool {
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        !matches!(
            waitid(Id::Pid(Pid::from_raw(self.pid)), flags),
            Ok(WaitStatus::StillAlive) | Err(nix::errno::Errno::EINTR)
        )
    }
}

/// True when stdin is a terminal whose foreground group is ours: then the command should own
/// the terminal while it runs (reads, Ctrl-C and Ctrl-\ go straight to it, once).
fn foreground_terminal() -> bool {
    io::stdin().is_terminal() && tcgetpgrp(io::stdin()) == Ok(getpgrp())
}

/// Starts `argv` in process group `group`, found on PATH as a shell would, with `env` changed
/// in our environment (a `None` value removes the variable). The spawn gives the command an
/// empty signal mask (ours blocks the signals `exec` reads from its signalfd, and a mask survives
/// exec) and SIGPIPE's default action (Rust ignores it in its own process); every other action
/// is ours, SIGTSTP's ignoring included.
fn start(argv: &[String], env: &[(&str, Option<&str>)], group: Pid) -> io::Result<Pid> {
    let c_string = |bytes: Vec<u8>| {
        CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
    };
    let args = argv
        .iter()
        .map(|arg| c_string(arg.clone().into_bytes()))
        .collect::<io::Result<Vec<_>>>()?;
    let mut vars: Vec<CString> = Vec::new();
    for (name, value) in std::env::vars_os() {
        if env
            .iter()
            .any(|(changed, _)| name.as_bytes() == changed.as_bytes())
        {
            continue;
        }
        let mut var = name.into_vec();
        var.push(b'=');
        var.extend_from_slice(value.as_bytes());
        vars.push(c_string(var)?);
    }
    for (name, value) in env {
        if let Some(value) = value {
            vars.push(c_string(format!("{name}={value}").into_bytes())?);
        }
    }
    let mut attributes = PosixSpawnAttr::init()?;
    attributes.set_pgroup(group)?;
    attributes.set_sigmask(&SigSet::empty())?;
    let mut sigpipe = SigSet::empty();
    sigpipe.add(Signal::SIGPIPE);
    attributes.set_sigdefault(&sigpipe)?;
    attributes.set_flags(
        PosixSpawnFlags::POSIX_SPAWN_SETPGROUP
            | PosixSpawnFlags::POSIX_SPAWN_SETSIGMASK
            | PosixSpawnFlags::POSIX_SPAWN_SETSIGDEF,
    )?;
    let actions = PosixSpawnFileActions::init()?;
    Ok(posix_spawnp(&args[0], &actions, &attributes, &args, &vars)?)
}

/// Waits for the command (which has exited) and returns its status.
fn reap(pid: libc::pid_t) -> io::Result<ExitStatus> {
    loop {
        match waitpid(Pid::from_raw(pid), None) {
            Ok(WaitStatus::Exited(_, code)) => return Ok(ExitStatus::from_raw((code & 0xff) << 8)),
            Ok(WaitStatus::Signaled(_, signal, core)) => {
                let core = if core { 0x80 } else { 0 };
                return Ok(ExitStatus::from_raw(signal as i32 | core));
            }
            Ok(_) | Err(Errno::EINTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
}

/// Takes the terminal back for `owner`, our process group, if we handed it to the command.
fn give_back(owner: Option<Pid>) {
    if let Some(owner) = owner {
        with_sigttou_blocked(|| {
            let _ = tcsetpgrp(io::stdin(), owner);
        });
    }
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
