//! Turning termination signals into messages on a channel.
//!
//! The signals are blocked in the calling thread before any other thread starts, so every thread
//! inherits the block and only our watcher thread, in `sigwait`, ever receives them. That lets a
//! waiting acquire stop cleanly (nothing left on any server) and lets `exec` decide what each
//! signal means. A blocked mask survives `execve`, so a child must call `unblock_all` before exec.

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
            let mut signal: libc::c_int = 0;
            // SAFETY: `set` lives in this closure; sigwait writes the signal number into ours.
            if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
                continue;
            }
            if tx.send(wrap(signal)).is_err() {
                return;
            }
        })?;
    Ok(())
}

/// Blocks `signals` in this thread (and every thread it starts from now on) without watching
/// them: for a one-shot command that only checks, with `take_pending`, whether one arrived.
pub(crate) fn block(signals: &[libc::c_int]) -> std::io::Result<libc::sigset_t> {
    let set = sigset(signals);
    // SAFETY: `set` is an initialised sigset_t; a null old-mask pointer is allowed.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    Ok(set)
}

/// The first of `signals` that arrived while blocked, if any, without waiting.
pub(crate) fn take_pending(signals: &[libc::c_int]) -> Option<libc::c_int> {
    let set = sigset(signals);
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `set` and `zero` are initialised; a null siginfo pointer is allowed.
    let signal = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &zero) };
    (signal > 0).then_some(signal)
}

/// Clears the signal mask. Async-signal-safe, for use between fork and exec.
pub(crate) fn unblock_all() -> std::io::Result<()> {
    let set = sigset(&[]);
    // SAFETY: sigprocmask with an empty, initialised set is async-signal-safe.
    if unsafe { libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn sigset(signals: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the zeroed set; sigaddset only adds valid signal numbers.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &signal in signals {
            libc::sigaddset(&mut set, signal);
        }
        set
    }
}
