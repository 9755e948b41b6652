//! What the supervise loop waits on, all at once in one poll(2) on the main thread: a signalfd
//! for the termination signals and SIGCHLD, and a timer for the next deadline (a renewal,
//! `--max-runtime`, the SIGKILL after `--kill-after`).
//!
//! The timer runs on the boot-time clock, as our deadlines do (clock.rs): a poll timeout would
//! count on the monotonic clock, which stops while the machine is suspended, and a deadline that
//! passed during a suspend would then be noticed only as late again after the resume. An absolute
//! boot-time timer fires as soon as the machine is back.
//!
//! The signals must be blocked (`SIGNALS`, before any other thread starts, so that every thread
//! inherits the block): a blocked signal stays pending until the signalfd reads it, and SIGCHLD,
//! whose default action is to be discarded, is never delivered to a thread that would drop it.

use crate::clock::BootInstant;
use crate::signals;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signalfd::SignalFd;
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use std::os::fd::AsFd;

/// The signals `exec` reads: those that ask it to stop (forwarded to the command), and SIGCHLD,
/// which says the command may have exited.
pub(crate) const SIGNALS: [libc::c_int; 5] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGCHLD,
];

pub(crate) struct Events {
    signals: SignalFd,
    timer: TimerFd,
}

impl Events {
    /// `SIGNALS` must already be blocked (`signals::block`).
    pub(crate) fn new() -> std::io::Result<Events> {
        let flags = TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC;
        Ok(Events {
            signals: signals::signal_fd(&SIGNALS)?,
            timer: TimerFd::new(ClockId::CLOCK_BOOTTIME, flags)?,
        })
    }

    /// Waits until a signal arrives or `until` passes (`None`: no deadline), and returns the
    /// termination signals that arrived, in order. It may return early with none (SIGCHLD, the
    /// timer, an interrupted poll): the caller looks again at the command and the clock.
    pub(crate) fn wait(&mut self, until: Option<BootInstant>) -> Vec<libc::c_int> {
        let armed = match until {
            Some(at) => {
                let at = TimeSpec::from_duration(at.since_boot());
                let expiration = Expiration::OneShot(at);
                self.timer
                    .set(expiration, TimerSetTimeFlags::TFD_TIMER_ABSTIME)
            }
            None => self.timer.unset(),
        };
        if armed.is_ok() {
            let mut fds = [
                PollFd::new(self.signals.as_fd(), PollFlags::POLLIN),
                PollFd::new(self.timer.as_fd(), PollFlags::POLLIN),
            ];
            let _ = poll(&mut fds, PollTimeout::NONE);
        } else if let Some(at) = until {
            // Without the timer (it cannot fail on a Linux that has CLOCK_BOOTTIME timers, 3.15
            // and later), a poll timeout still wakes us, if late after a suspend.
            let mut fds = [PollFd::new(self.signals.as_fd(), PollFlags::POLLIN)];
            let timeout = at.remaining().as_millis().saturating_add(1);
            let _ = poll(
                &mut fds,
                PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX),
            );
        }
        let mut arrived = Vec::new();
        while let Some(signal) = signals::read(&self.signals) {
            if signal != libc::SIGCHLD {
                arrived.push(signal);
            }
        }
        arrived
    }
}
