//! The one poll(2) of a round, of a waiter's pause, or of what we still owe before we go: wait
//! until one of the wires (failed ones aside) can move bytes the way it wants to.

use super::wire::Wire;
use rustix::event::{PollFd, PollFlags};
use std::os::fd::BorrowedFd;
use std::time::Duration;

/// Waits up to `at_most` until one of `wires` (the failed ones aside) can move bytes the way
/// it wants to (`Wire::interest`): the one poll(2) of a round, or of a waiter's subscriptions.
/// Returns at once when none is left to wait on.
pub(crate) fn wait_any<'a>(wires: impl Iterator<Item = &'a Wire>, at_most: Duration) {
    let live: Vec<&Wire> = wires.filter(|wire| wire.failure().is_none()).collect();
    if !live.is_empty() && !at_most.is_zero() {
        wait_any_or(live.into_iter(), None, at_most);
    }
}

/// `wait_any`, also until `bell` is readable (then true), and for all of `at_most` when there is
/// nothing to wait on: a waiter's pause between rounds (`Loop::listen`).
pub(crate) fn wait_any_or<'a>(
    wires: impl Iterator<Item = &'a Wire>,
    bell: Option<BorrowedFd<'_>>,
    at_most: Duration,
) -> bool {
    let mut fds: Vec<PollFd<'_>> = wires
        .filter(|wire| wire.failure().is_none())
        .map(|wire| PollFd::from_borrowed_fd(wire.fd(), wire.interest()))
        .collect();
    if let Some(bell) = bell {
        fds.push(PollFd::from_borrowed_fd(bell, PollFlags::IN));
    }
    let timeout = rustix::event::Timespec {
        tv_sec: at_most.as_secs() as i64,
        tv_nsec: i64::from(at_most.subsec_nanos()),
    };
    // An error (EINTR) is a wake-up like any other: the caller looks again.
    let _ = rustix::event::poll(&mut fds, Some(&timeout));
    bell.is_some() && fds.last().is_some_and(|fd| !fd.revents().is_empty())
}
