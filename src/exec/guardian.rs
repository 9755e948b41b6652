//! The guardian: a small process, forked from us before the command starts, that holds the
//! lock's deadline where nothing that happens to redlock's own process or process group can
//! reach it, and stops the command's whole process group when we can no longer be trusted to:
//! at once when we die (SIGKILL, OOM, a supervisor's group kill), and before the last confirmed
//! validity runs out when we stop renewing (SIGSTOP of our pid or our group, a debugger,
//! starvation). Then nothing of ours could stop the command, and another host may take the lock
//! once it expires.
//!
//! What it knows, and how. We tell it over a socket pair, one fixed-size message each
//! (`SOCK_SEQPACKET`, so a message is never split), with no round trip: the deadline (the end of
//! the last confirmed validity, as an absolute time on the boot-time clock, which is
//! system-wide and counts through a suspend: clock.rs) before the command is started and after
//! each renewal; that the command now runs; that we are stopping the command ourselves (a lost
//! lock, `--max-runtime`), with the time of the SIGKILL we will send; and that the run is over.
//! It learns of our death when its end of the socket reads end-of-file without that last
//! message: the kernel closes our end when our process dies, however it dies, and nobody else
//! holds it (it is close-on-exec, and we fork nothing else).
//!
//! What it does, on its own, with a timer on the boot-time clock: SIGTERM and SIGCONT to the
//! command's group when we die, or `grace` before the deadline when no renewal moved it, then
//! SIGKILL after `grace`, and never later than the deadline: the policy the supervise loop
//! applies while we are alive (supervise.rs), so the command has stopped before the validity
//! ends. A stop, once started, is not called off. When we are stopping the command ourselves it
//! sends no SIGTERM of its own (a second one tells many programs to skip their clean-up), only
//! the SIGKILL, by our time or the deadline. It goes as soon as the group is empty, or when we
//! say the run is over.
//!
//! Why our death or pause cannot take it along:
//! - It is a separate process, not a thread, so a SIGSTOP or SIGKILL of our pid does not reach
//!   it; and a plain fork, not a `CLONE_VM` one, so the OOM killer, which kills every process
//!   using the victim's memory, does not take it with us.
//! - It is never in our process group (but for the instant between the fork and the
//!   `setpgid`s that follow it on both sides), so a signal to our group (`kill -- -PGID`,
//!   `timeout`, a CI runner's cancel) misses it.
//! - It is not in the command's group while the command runs: a signal to that group (ours,
//!   forwarded, or anyone's) misses it too. It leads the command's group until the command has
//!   joined it, then moves to a group of its own.
//! - It blocks every signal it can (SIGKILL and SIGSTOP cannot be), so a terminal's Ctrl-Z or a
//!   stray SIGTERM does not stop it.
//!
//! Why the command has stopped before another holder can start: the deadline is the end of the
//! last validity a quorum confirmed, measured from the start of that round less the clock drift
//! allowance, so a majority of the servers keep our key at least until then, and nobody can be
//! granted the lock before it. The guardian's SIGKILL goes out by that deadline on the same
//! suspend-aware clock, whatever became of us (a pause of ours moves nothing: only a renewal we
//! confirmed, and then told it of, moves the deadline on). While we are alive and well we act
//! first: we give up renewing a round and a grace before the deadline (renew.rs), so the
//! guardian's moment, a grace before it, is reached only when we were paused or starved.
//!
//! The groups, and why an id we signal is never someone else's: the command's group is named by
//! the guardian's pid (the group exists, with the guardian in it, from right after the fork,
//! before the command does, and the command joins it in the same spawn that starts it: no
//! window). That id stays reserved for as long as the guardian lives (and, while we live, until
//! we reap it), so every SIGTERM or SIGKILL it or we send to the group reaches the command's
//! tree and nothing else. A process can only make a group of its own pid, and the guardian's is
//! taken by the command's group, so its own group is led by an anchor: a child that makes its
//! own group and exits at once, which the guardian keeps unreaped (a zombie holds its group id
//! and keeps the group in being) and reaps when it leaves, so no zombie outlives a run.
//!
//! The fork happens in a multi-threaded process: the child runs only raw async-signal-safe
//! system calls on values prepared before the fork (no allocation, no locks, no unwinding) and
//! leaves with `_exit`.
//!
//! What it does not cover: a pause or kill of the guardian itself (its own pid), of the whole
//! host (a VM paused, a machine suspended with its clocks), or a kill of the command's group that
//! leaves children it moved to other groups: there, fencing is the answer (docs/guarantees.md).

use crate::clock::BootInstant;
use nix::sys::signal::{kill, SigSet, Signal};
use nix::sys::wait::waitpid;
use nix::unistd::{setpgid, Pid};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

mod watch;

/// A message to the guardian: the lock's deadline (the end of the last confirmed validity).
const DEADLINE: u64 = 1;
/// The command is in the group: the guardian leaves it.
const RUNNING: u64 = 2;
/// We are stopping the command ourselves, with SIGKILL at the time given.
const STOPPING: u64 = 3;
/// The run is over: the guardian goes.
const DONE: u64 = 4;

pub(super) struct Guardian {
    pid: Pid,
    /// Our end of the socket pair; its end-of-file is what tells the guardian we died.
    /// (`None` once dismissed.)
    channel: Option<OwnedFd>,
}

impl Guardian {
    /// Forks the guardian, leading a new process group (its pid), which the command must join.
    /// `grace` is how long a command it stops gets between SIGTERM and SIGKILL.
    pub(super) fn start(grace: Duration) -> io::Result<Guardian> {
        let mut fds = [-1; 2];
        let flags = libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC;
        // SAFETY: socketpair writes two new descriptors into `fds`, which has room for them.
        if unsafe { libc::socketpair(libc::AF_UNIX, flags, 0, fds.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just made, and nothing else owns them.
        let (ours, theirs) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // Prepared before fork: the child may only make async-signal-safe calls.
        let everything = SigSet::all();
        let grace_ns = u64::try_from(grace.as_nanos()).unwrap_or(u64::MAX);
        let channel = theirs.as_raw_fd();
        // SAFETY: after fork the child is a copy of a multi-threaded process, so it runs only raw
        // async-signal-safe syscalls on values prepared above (no allocation, no locks, no
        // unwinding) and leaves with _exit; nix's fork would not make that any safer.
        match unsafe { libc::fork() } {
            -1 => Err(io::Error::last_os_error()),
            // SAFETY: as above; the descriptor and the set were made before the fork.
            0 => unsafe { watch::guard(channel, everything.as_ref(), grace_ns) },
            pid => {
                drop(theirs);
                let guardian = Guardian {
                    pid: Pid::from_raw(pid),
                    channel: Some(ours),
                };
                // Here, before the command is spawned into the group, as well as in the
                // guardian: the group exists from now on, whenever the guardian itself gets to
                // run. (Dropping the guardian on failure dismisses and reaps it.)
                setpgid(guardian.pid, guardian.pid)?;
                Ok(guardian)
            }
        }
    }

    /// The process group the command must join: the guardian's pid.
    pub(super) fn group(&self) -> libc::pid_t {
        self.pid.as_raw()
    }

    /// Tells the guardian the lock's deadline: before the command starts (an error then means
    /// the guardian is gone, and the command must not start), and after each renewal.
    pub(super) fn deadline(&self, at: BootInstant) -> io::Result<()> {
        self.send(DEADLINE, at)
    }

    /// Tells the guardian the command has joined its group, which it then leaves.
    pub(super) fn running(&self) {
        let _ = self.send(RUNNING, BootInstant::now());
    }

    /// Tells the guardian we are stopping the command, with SIGKILL at `kill_at`.
    pub(super) fn stopping(&self, kill_at: BootInstant) {
        let _ = self.send(STOPPING, kill_at);
    }

    /// Never blocks: a guardian that does not read (stopped by hand) must not stop us, and
    /// at 16 bytes a message, its socket's buffer holds thousands of renewals.
    fn send(&self, tag: u64, at: BootInstant) -> io::Result<()> {
        let ns = u64::try_from(at.since_boot().as_nanos()).unwrap_or(u64::MAX);
        let mut message = [0u8; 16];
        message[..8].copy_from_slice(&tag.to_ne_bytes());
        message[8..].copy_from_slice(&ns.to_ne_bytes());
        let Some(channel) = &self.channel else {
            return Err(io::Error::from(io::ErrorKind::NotConnected));
        };
        let flags = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL;
        // SAFETY: `message` is 16 readable bytes, and the descriptor is ours and open.
        let sent = unsafe {
            libc::send(
                channel.as_raw_fd(),
                message.as_ptr().cast(),
                message.len(),
                flags,
            )
        };
        match sent {
            16 => Ok(()),
            -1 => Err(io::Error::last_os_error()),
            _ => Err(io::Error::from(io::ErrorKind::WriteZero)),
        }
    }

    /// Tells the guardian the run is over: it reaps its anchor and exits. It is reaped when the
    /// returned value is dropped, so that it can go while we release the lock rather than
    /// while we wait for it.
    pub(super) fn dismiss(mut self) -> Dismissed {
        let pid = self.pid;
        self.say_done();
        // The socket closes here, after the message; our drop would reap the guardian at once.
        self.channel = None;
        std::mem::forget(self);
        Dismissed(pid)
    }

    fn say_done(&self) {
        let _ = self.send(DONE, BootInstant::now());
        // A guardian someone stopped by hand must still be able to go (it blocks every signal,
        // but a SIGCONT resumes a stopped process all the same).
        let _ = kill(self.pid, Signal::SIGCONT);
    }
}

/// A guardian no command joined (the lock was not granted, or the command could not start) is
/// dismissed and reaped.
impl Drop for Guardian {
    fn drop(&mut self) {
        self.say_done();
        let _ = waitpid(self.pid, None);
    }
}

/// A dismissed guardian, reaped when dropped. Until then its pid, the command's group id, stays
/// reserved.
#[must_use = "dropping it waits for the guardian to exit"]
pub(crate) struct Dismissed(Pid);

impl Drop for Dismissed {
    fn drop(&mut self) {
        let _ = waitpid(self.0, None);
    }
}
