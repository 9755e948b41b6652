//! Turning termination signals into messages on a channel.
//!
//! The signals are blocked in the calling thread before any other thread starts, so every thread
//! inherits the block and only our watcher thread, in `sigwait`, ever receives them. That lets a
//! waiting acquire stop cleanly (nothing left on any server) and lets `exec` decide what each
//! signal means. A blocked mask survives `execve`, so a child must call `unblock_all` before exec.

use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use std::sync::mpsc::Sender;

/// The signals that ask redlock to stop.
pub(crate) const TERMINATING: [libc::c_int; 4] =
    [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Blocks `signals` in this thread (and every thread it starts from now on) and starts a thread
/// that sends `wrap(signal)` on `tx` for each one that arrives.
pub(crate) fn watch<T: Send + 'static>(
    signals: &[libc::c_int],
    tx: Sender<T>,
    wrap: fn(libc::c_int) -> T,
) -> std::io::Result<()> {
    let set = block(signals)?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || loop {
            let Ok(signal) = set.wait() else {
                continue;
            };
            if tx.send(wrap(signal as libc::c_int)).is_err() {
                return;
            }
        })?;
    Ok(())
}

/// Blocks `signals` in this thread (and every thread it starts from now on) without watching
/// them: for a one-shot command that only checks, with `take_pending`, whether one arrived.
pub(crate) fn block(signals: &[libc::c_int]) -> std::io::Result<SigSet> {
    let set = sigset(signals);
    set.thread_block()?;
    Ok(set)
}

/// The first of `signals` that arrived while blocked, if any, without waiting.
pub(crate) fn take_pending(signals: &[libc::c_int]) -> Option<libc::c_int> {
    // Reading a non-blocking signalfd accepts a pending signal, as sigtimedwait with a zero
    // timeout would, and returns nothing at once when none is.
    let pending = SignalFd::with_flags(
        &sigset(signals),
        SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC,
    )
    .ok()?
    .read_signal()
    .ok()??;
    libc::c_int::try_from(pending.ssi_signo).ok()
}

/// Clears the signal mask. Async-signal-safe, for use between fork and exec.
pub(crate) fn unblock_all() -> std::io::Result<()> {
    nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
    Ok(())
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
