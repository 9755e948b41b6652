//! A waiter listening between rounds (poll.rs's loop): messages on its channel come on the
//! connections its attempts use, which subscribed behind each attempt (queue, step 2), and late
//! replies are handled meanwhile as between rounds.

use super::poll::Loop;
use crate::clock::BootInstant;
use crate::server::Sink;
use rustix::event::{PollFd, PollFlags};
use std::os::fd::BorrowedFd;

impl Loop {
    /// Listens on every open wire for messages on `channel` until one comes, `bell` (a signalfd,
    /// say) is readable, or `until`; late replies are handled meanwhile
    /// as between rounds. Each wire subscribed behind its round's request (`round` with
    /// `listen`); one that sent another request since (a clean-up) subscribes again now.
    ///
    /// This is a waiter's whole listening: one connection per server, the one its attempts
    /// use, and no thread. A RESP2 connection that has subscribed runs no other command, which
    /// is why the next request on it is preceded by UNSUBSCRIBE (server/wire.rs).
    pub(super) fn listen(
        &mut self,
        channel: &str,
        until: BootInstant,
        bell: Option<BorrowedFd<'_>>,
    ) -> Heard {
        let mut heard = Heard {
            messages: std::mem::take(&mut self.pushed),
            rang: false,
        };
        for kept in self.wires.iter_mut().flatten() {
            if kept.wire.failure().is_none() && !kept.wire.subscribed() {
                kept.wire.subscribe(channel, Sink::Discard);
            }
        }
        loop {
            // Late replies as between rounds; messages land in `pushed`.
            self.pump();
            heard.messages.append(&mut self.pushed);
            if !heard.messages.is_empty() || heard.rang || until.has_passed() {
                return heard;
            }
            heard.rang = self.wait_with(until, bell);
        }
    }

    /// Waits like `wait`, also for `bell` to be readable; true if it is.
    fn wait_with(&mut self, until: BootInstant, bell: Option<BorrowedFd<'_>>) -> bool {
        let wires = self.wires.iter().flatten().map(|kept| &kept.wire);
        let retired = self.retired.iter().map(|(wire, _)| wire);
        let mut fds: Vec<PollFd<'_>> = wires
            .chain(retired)
            .filter(|wire| wire.failure().is_none())
            .map(|wire| PollFd::from_borrowed_fd(wire.fd(), wire.interest()))
            .collect();
        if let Some(bell) = bell {
            fds.push(PollFd::from_borrowed_fd(bell, PollFlags::IN));
        }
        // Whatever is due first: a task's deadline (its clean-up then goes out) or `until`.
        let next = self
            .tasks
            .iter()
            .map(|task| task.by)
            .filter(|by| !by.has_passed())
            .fold(until, BootInstant::min);
        let left = next.remaining();
        let timeout = rustix::event::Timespec {
            tv_sec: left.as_secs() as i64,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        // An error (EINTR) is a wake-up like any other: the caller looks again.
        let _ = rustix::event::poll(&mut fds, Some(&timeout));
        bell.is_some() && fds.last().is_some_and(|fd| !fd.revents().is_empty())
    }
}

/// What a waiter heard while it listened (`Loop::listen`).
#[derive(Default)]
pub(crate) struct Heard {
    /// Each message's payload, with the server it came from.
    pub(crate) messages: Vec<(usize, Vec<u8>)>,
    /// The bell rang.
    pub(crate) rang: bool,
}
