//! Termination signals, blocked and read from a signalfd: one a wait polls beside its wires
//! (`Nodes::listen`), or the one `exec`'s supervise loop reads.
//!
//! The signals are blocked in the calling thread before any other thread starts, so every thread
//! inherits the block and only a signalfd ever receives them: a wait's, while it must be woken
//! by them, or the one `exec` supervises its command with. That lets a waiting
//! acquire stop cleanly (nothing left on any server) and lets `exec` decide what each signal
//! means. A blocked mask survives `execve`; `exec` starts its command with an empty one.

use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

/// The signals that ask redlock to stop.
pub(crate) const TERMINATING: [libc::c_int; 4] =
    [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Blocks `signals` in this thread (and every thread it starts from now on): for a one-shot
/// command that only checks, with `take_pending`, whether one arrived, or for a wait or `exec`,
/// which read them from a signalfd. Returns the mask as it was before.
pub(crate) fn block(signals: &[libc::c_int]) -> std::io::Result<SigSet> {
    Ok(sigset(signals).thread_swap_mask(SigmaskHow::SIG_BLOCK)?)
}

/// Restores SIGCHLD's default action, in case we were started with it ignored: the kernel would
/// then reap our children itself, and never say (nor let us wait) that one exited.
pub(crate) fn default_sigchld() -> std::io::Result<()> {
    let default = SigAction::new(SigHandler::SigDfl, SaFlags::empty(), SigSet::empty());
    // SAFETY: the default action runs no code of ours in a signal handler, so nothing here must
    // be async-signal-safe.
    unsafe { sigaction(Signal::SIGCHLD, &default) }?;
    Ok(())
}

/// The first of `signals` that arrived while blocked, if any, without waiting.
pub(crate) fn take_pending(signals: &[libc::c_int]) -> Option<libc::c_int> {
    // Reading a non-blocking signalfd accepts a pending signal, as sigtimedwait with a zero
    // timeout would, and returns nothing at once when none is.
    read(&signal_fd(signals).ok()?)
}

/// A non-blocking signalfd for `signals`, which must be blocked: they stay pending until read
/// from it (or from another one).
pub(crate) fn signal_fd(signals: &[libc::c_int]) -> std::io::Result<SignalFd> {
    let flags = SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC;
    Ok(SignalFd::with_flags(&sigset(signals), flags)?)
}

/// The next signal pending on `fd`, if any, without waiting.
pub(crate) fn read(fd: &SignalFd) -> Option<libc::c_int> {
    let pending = fd.read_signal().ok()??;
    libc::c_int::try_from(pending.ssi_signo).ok()
}

fn sigset(signals: &[libc::c_int]) -> SigSet {
    let mut set = SigSet::empty();
    for &signal in signals {
        if let Ok(signal) = Signal::try_from(signal) {
            set.add(signal);
        }
    }
    set
}
