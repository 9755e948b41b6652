//! Termination signals, blocked and read from a signalfd: by a watcher thread that turns them
//! into messages on a channel (a wait), or by `exec`'s supervise loop.
//!
//! The signals are blocked in the calling thread before any other thread starts, so every thread
//! inherits the block and only a signalfd ever receives them: our watcher thread's, while a wait
//! must be woken by them, or the one `exec` supervises its command with. That lets a waiting
//! acquire stop cleanly (nothing left on any server) and lets `exec` decide what each signal
//! means. A blocked mask survives `execve`; `exec` starts its command with an empty one.

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

/// The signals that ask redlock to stop.
pub(crate) const TERMINATING: [libc::c_int; 4] =
    [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// A running watcher thread. Dropping it stops the thread (and waits for it): the signals stay
/// blocked, so one that arrives afterwards stays pending for whoever reads them next.
pub(crate) struct Watch {
    /// Closing our end tells the thread to stop.
    stop: Option<UnixStream>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Blocks `signals` in this thread (and every thread it starts from now on) and starts a thread
/// that sends `wrap(signal)` on `tx` for each one that arrives, until the `Watch` is dropped.
pub(crate) fn watch<T: Send + 'static>(
    signals: &[libc::c_int],
    tx: Sender<T>,
    wrap: fn(libc::c_int) -> T,
) -> std::io::Result<Watch> {
    block(signals)?;
    let fd = signal_fd(signals)?;
    let (stop, stopped) = UnixStream::pair()?;
    let thread = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || loop {
            let mut fds = [
                PollFd::new(fd.as_fd(), PollFlags::POLLIN),
                PollFd::new(stopped.as_fd(), PollFlags::POLLIN),
            ];
            if poll(&mut fds, PollTimeout::NONE).is_err() {
                continue;
            }
            // Told to stop (our `Watch` closed its end): not one more signal is taken.
            if fds[1].any().unwrap_or(true) {
                return;
            }
            while let Some(signal) = read(&fd) {
                if tx.send(wrap(signal)).is_err() {
                    return;
                }
            }
        })?;
    Ok(Watch {
        stop: Some(stop),
        thread: Some(thread),
    })
}

/// Blocks `signals` in this thread (and every thread it starts from now on) without watching
/// them: for a one-shot command that only checks, with `take_pending`, whether one arrived, or
/// for `exec`, which reads them from a signalfd. Returns the mask as it was before.
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
