//! A waiter's pause between attempts, and what ends it early: a release handing the lock to it,
//! heard on the rounds' own connections or on connections of its own (queue, step 2), or a
//! signal. Otherwise a pause lasts as long as the schedule (backoff.rs) says.

use super::progress::{Progress, WaitProgress};
use crate::clock::BootInstant;
use crate::lock::nodes::Nodes;
use crate::lock::queue::Subscriptions;
use crate::server::Server;
use std::collections::VecDeque;
use std::os::fd::BorrowedFd;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// Something that may end a wait early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// A signal asked us to stop.
    Interrupted(i32),
    /// A release handed the lock to us (we were first in its queue): worth trying again now.
    Released,
}

impl Wake {
    /// The signal, if this wake-up is one.
    pub(crate) fn signal(self) -> Option<i32> {
        match self {
            Wake::Interrupted(signal) => Some(signal),
            Wake::Released => None,
        }
    }
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
    /// Signals, and the release notifications of `subscriptions`, arrive here.
    wakes: Option<&'a Receiver<Wake>>,
    /// The sending side of `wakes`, for `subscriptions`.
    notify: Option<Sender<Wake>>,
    /// What else ends a pause of a waiter that listens on the rounds' own connections, which
    /// waits on sockets rather than on `wakes`: a signal.
    interrupt: Option<Interrupt<'a>>,
    /// The waiter's channel, when it listens on the rounds' own connections (`Nodes::listen`).
    on_wires: Option<String>,
    /// Its listeners on connections of its own otherwise, once started; dropping them stops
    /// any that did not hear the waiter leave.
    subscriptions: Option<Subscriptions>,
    /// Wake-ups heard on the rounds' own connections and not yet taken.
    heard: VecDeque<Wake>,
}

/// Waits up to the duration it is given for the next wake-up, if one comes.
type NextWake<'a> = dyn FnMut(Duration) -> Option<Wake> + 'a;

impl<'a> Listening<'a> {
    /// Listening for nothing yet: a pause ends early only on what arrives on `wakes` (or, on
    /// the wires, what `interrupt` brings).
    pub(super) fn new(
        wakes: Option<&'a Receiver<Wake>>,
        notify: Option<Sender<Wake>>,
        interrupt: Option<Interrupt<'a>>,
    ) -> Listening<'a> {
        Listening {
            wakes,
            notify,
            interrupt,
            on_wires: None,
            subscriptions: None,
            heard: VecDeque::new(),
        }
    }

    /// Listens for `channel` on the rounds' own connections (every attempt subscribes behind
    /// its request), from this thread.
    pub(super) fn on_wires(&mut self, channel: String) {
        self.on_wires = Some(channel);
    }

    /// Whether it listens already, on the rounds' own connections or on connections of its own.
    pub(super) fn listens(&self) -> bool {
        self.on_wires.is_some() || self.subscriptions.is_some()
    }

    /// Subscribes to `channel` on connections of its own, a thread each (queue::Subscriptions).
    /// False, and nothing started, when nothing could carry a wake-up here (no `notify`).
    pub(super) fn subscribe(
        &mut self,
        servers: &[Server],
        channel: &str,
        timeout: Duration,
    ) -> bool {
        let Some(notify) = &self.notify else {
            return false;
        };
        self.subscriptions = Some(Subscriptions::start(
            servers,
            channel,
            timeout,
            (notify.clone(), Wake::Released),
        ));
        true
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
            wakes,
            interrupt,
            on_wires,
            heard,
            ..
        } = self;
        let mut next_wake = |at_most: Duration| match on_wires {
            Some(channel) => listen(nodes, channel, (*wakes, *interrupt), heard, at_most),
            None => pause_until_woken(*wakes, at_most),
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

fn pause_until_woken(wakes: Option<&Receiver<Wake>>, pause: Duration) -> Option<Wake> {
    let Some(wakes) = wakes else {
        std::thread::sleep(pause);
        return None;
    };
    match wakes.recv_timeout(pause) {
        Ok(wake) => Some(wake),
        Err(RecvTimeoutError::Timeout) => None,
        Err(RecvTimeoutError::Disconnected) => {
            std::thread::sleep(pause);
            None
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
/// a message from a server (one wake-up each), what `interrupt` brought (a signal), or what
/// came on `wakes`, within `at_most`.
fn listen(
    nodes: &mut Nodes,
    channel: &str,
    (wakes, interrupt): (Option<&Receiver<Wake>>, Option<Interrupt<'_>>),
    heard: &mut VecDeque<Wake>,
    at_most: Duration,
) -> Option<Wake> {
    let until = BootInstant::now().add(at_most);
    loop {
        if let Some(wake) = wakes.and_then(|wakes| wakes.try_recv().ok()) {
            return Some(wake);
        }
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
        // Anything but `done` (a waiter's own leaving, which a waiter listening here never
        // announces) says the lock was handed to us.
        let released = news
            .messages
            .iter()
            .filter(|(_, payload)| payload != b"done");
        heard.extend(released.map(|_| Wake::Released));
    }
}
