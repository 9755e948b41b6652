//! A waiter listening between rounds (poll.rs's loop): messages on its channel come on the
//! connections its attempts use, which subscribed behind each attempt (queue, step 2), and late
//! replies are handled meanwhile as between rounds.

use super::poll::Loop;
use crate::clock::BootInstant;
use crate::lock::keys::owner;
use crate::server::{wait_any_or, Sink};
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
        for open in self.wires.iter_mut().flatten() {
            if open.wire.failure().is_none() && !open.wire.subscribed() {
                open.wire.subscribe(channel, owner(channel), Sink::Discard);
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

    /// Waits like `wait`, also for `bell` to be readable (then true), and no longer than the
    /// nearest task's deadline, when its clean-up goes out.
    fn wait_with(&mut self, until: BootInstant, bell: Option<BorrowedFd<'_>>) -> bool {
        let next = self
            .tasks
            .iter()
            .map(|task| task.by)
            .filter(|by| !by.has_passed())
            .fold(until, BootInstant::min);
        let wires = self.wires.iter().flatten().map(|open| &open.wire);
        let retired = self.retired.iter().map(|(wire, _)| wire);
        wait_any_or(wires.chain(retired), bell, next.remaining())
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
