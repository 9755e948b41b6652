//! A waiter's pause between attempts, and what ends it early: a release handing the lock to it,
//! heard on the rounds' own connections (queue, step 2), or a signal. Otherwise a pause lasts
//! as long as the schedule (backoff.rs) says.

use super::progress::{Progress, WaitProgress};
use crate::clock::BootInstant;
use crate::lock::nodes::Nodes;
use std::collections::VecDeque;
use std::os::fd::BorrowedFd;
use std::time::Duration;

/// Something that may end a wait early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// A signal asked us to stop.
    Interrupted(i32),
    /// A release handed the lock to us (we were first in its queue): worth trying again now.
    Released,
}

/// Something besides the servers that can end a pause: `fd` is polled beside the connections
/// a waiter listens on, and once it is readable, `take` says what it brought (if anything).
#[derive(Clone, Copy)]
pub(crate) struct Interrupt<'a> {
    pub(crate) fd: BorrowedFd<'a>,
    pub(crate) take: &'a dyn Fn() -> Option<Wake>,
}

/// After the first server announced a release to us, how long at most we wait for the same
/// release from a quorum of servers before asking, so that our SET does not overtake the release
/// still on its way to them (it would be refused there); without a quorum, the pause goes on
/// (more wake-ups count on). Not from every server: the slowest would set the pace of every
/// handover. Normally the notifications arrive within a fraction of a millisecond of each other;
/// this bound only matters when one of them never comes.
const WAKE_GATHER: Duration = Duration::from_millis(25);

/// Where a waiter's wake-ups come from, and those heard but not yet taken.
pub(super) struct Listening<'a> {
    /// What else ends a pause, polled beside the rounds' own connections: a signal.
    interrupt: Option<Interrupt<'a>>,
    /// The waiter's channel, which it listens on on the rounds' own connections
    /// (`Nodes::listen`); none without a waiter.
    on_wires: Option<String>,
    /// Wake-ups heard on the rounds' own connections and not yet taken.
    heard: VecDeque<Wake>,
}

/// Waits up to the duration it is given for the next wake-up, if one comes.
type NextWake<'a> = dyn FnMut(Duration) -> Option<Wake> + 'a;

impl<'a> Listening<'a> {
    /// Listening for nothing yet: a pause ends early only on what `interrupt` brings.
    pub(super) fn new(interrupt: Option<Interrupt<'a>>) -> Listening<'a> {
        Listening {
            interrupt,
            on_wires: None,
            heard: VecDeque::new(),
        }
    }

    /// Listens for `channel` on the rounds' own connections (every attempt subscribes behind
    /// its request), from this thread.
    pub(super) fn on_wires(&mut self, channel: String) {
        self.on_wires = Some(channel);
    }

    /// Pauses until `until`, telling `progress` where things stand (`status`), unless a quorum
    /// (`needed`) of servers wakes it first or a signal stops it: the signal, if one did.
    pub(super) fn pause(
        &mut self,
        nodes: &mut Nodes,
        until: BootInstant,
        needed: usize,
        progress: &mut Progress<'_>,
        status: &WaitProgress,
    ) -> Option<i32> {
        let Listening {
            interrupt,
            on_wires,
            heard,
        } = self;
        let mut next_wake = |at_most: Duration| match on_wires {
            Some(channel) => listen(nodes, channel, *interrupt, heard, at_most),
            None => {
                std::thread::sleep(at_most);
                None
            }
        };
        // A release wakes us from every server where it handed the lock to us; we ask once a
        // quorum of them did, since only then can our SETs win. A lone wake-up most often comes
        // from a release that reached one server late, after another waiter won the others:
        // asking on it would cost every server a request for nothing. If we are wanted after
        // all, more wake-ups or our own schedule bring us back.
        let mut woken = 0;
        loop {
            match progress.pause(&mut next_wake, until.remaining(), status) {
                Some(Wake::Interrupted(signal)) => return Some(signal),
                Some(Wake::Released) => {
                    match gather_released(&mut next_wake, needed.saturating_sub(woken + 1)) {
                        (_, Some(signal)) => return Some(signal),
                        (more, None) => woken += 1 + more,
                    }
                    if woken >= needed || until.has_passed() {
                        return None;
                    }
                }
                None => return None,
            }
        }
    }
}

/// Waits up to `WAKE_GATHER` for `more` further notifications of the same release (one per
/// server): how many came, and a signal if one arrived meanwhile (which ends the wait).
fn gather_released(next_wake: &mut NextWake<'_>, more: usize) -> (usize, Option<i32>) {
    let until = BootInstant::now().add(WAKE_GATHER);
    let mut heard = 0;
    while heard < more && !until.has_passed() {
        match next_wake(until.remaining()) {
            Some(Wake::Interrupted(signal)) => return (heard, Some(signal)),
            Some(Wake::Released) => heard += 1,
            None => break,
        }
    }
    (heard, None)
}

/// The next wake-up of a waiter that listens on the rounds' own connections (`Nodes::listen`):
/// a message from a server (one wake-up each) or what `interrupt` brought (a signal), within
/// `at_most`.
fn listen(
    nodes: &mut Nodes,
    channel: &str,
    interrupt: Option<Interrupt<'_>>,
    heard: &mut VecDeque<Wake>,
    at_most: Duration,
) -> Option<Wake> {
    let until = BootInstant::now().add(at_most);
    loop {
        if let Some(wake) = heard.pop_front() {
            return Some(wake);
        }
        if until.has_passed() {
            return None;
        }
        let news = nodes.listen(channel, until, interrupt.map(|interrupt| interrupt.fd));
        if let Some(wake) = interrupt.filter(|_| news.rang).and_then(|i| (i.take)()) {
            return Some(wake);
        }
        // Every message on our own channel (a release's `go`) says the lock was handed to us.
        heard.extend(news.messages.iter().map(|_| Wake::Released));
    }
}
