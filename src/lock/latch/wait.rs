//! Waiting for a latch to open: a read, then listening on the latch's channel on every server,
//! a second read, and from then on what the count-downs announce, with a periodic re-read as
//! the safety net and a read when the latch should expire (the module comment, rule 4). Both
//! reads are retries, paced as every retry of the house is (`crate::retry`).

use super::decide::LatchError;
use super::lua::parse_heard;
use super::lua::LatchHeard;
use super::model::Latch;
use super::verdict::{Counting, LatchState};
use super::view::View;
use crate::clock::BootInstant;
use crate::lock::queue::Subscriptions;
use crate::lock::Redlock;
use crate::retry::Retry;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// A waiter's own re-reads (`crate::retry`, so a crowd spreads out): only for count-downs whose
/// message was lost, so they can be far apart.
const RECHECK: Retry = Retry {
    delay: Duration::from_secs(10),
};
/// After the latch's TTL should have run out, a pause of this before reading it again: every
/// waiter reads then (an expiry announces nothing), so they are spread out too.
const AFTER_EXPIRY: Retry = Retry {
    delay: Duration::from_millis(20),
};

/// Something that may end a pause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LatchWake {
    /// A count-down announced by the server of this index.
    Heard(usize, LatchHeard),
    /// A signal asked us to stop.
    Interrupted(i32),
}

/// How to wait.
pub(crate) struct LatchWait<'a> {
    /// Wait this long at most; zero: look once.
    pub(crate) wait: Duration,
    /// Signals and count-downs arrive here.
    pub(crate) wakes: &'a Receiver<LatchWake>,
    /// The sending side of `wakes`, for the subscriptions.
    pub(crate) notify: Sender<LatchWake>,
}

/// How a wait ended.
#[derive(Debug, Clone)]
pub(crate) enum Waited {
    Open(Counting),
    /// `--wait` ran out first.
    NotOpen(Counting),
    /// It was on a quorum and is no longer: its TTL ran out (`expired`), or servers lost it.
    Gone {
        last: Counting,
        expired: bool,
    },
    Interrupted(i32),
}

impl Redlock {
    /// Waits up to `how.wait` for `latch` to open. A latch that no server knows at the first
    /// read that a quorum answered is `LatchError::Unknown`; one that never got a quorum to
    /// answer is `Unavailable`.
    pub(crate) fn latch_wait(
        &mut self,
        latch: &Latch,
        how: LatchWait<'_>,
    ) -> Result<Waited, LatchError> {
        let give_up_at = BootInstant::now().add(how.wait);
        let mut view = View::new(self.nodes.len());
        let mut subscriptions: Option<Subscriptions> = None;
        // What a quorum was last seen holding, and until when it should then live.
        let mut held: Option<Counting> = None;
        let mut held_until: Option<BootInstant> = None;
        // Whether a quorum answered any read yet.
        let mut decided = false;
        let mut read = true;
        let mut next_read = give_up_at;
        loop {
            if read {
                self.latch_read_into(latch, &mut view);
                read = false;
                next_read = RECHECK.next(give_up_at);
            }
            let counting = view.counting();
            match counting.state {
                LatchState::Open => return Ok(Waited::Open(counting)),
                LatchState::Waiting => {
                    decided = true;
                    held_until = counting.ttl.map(|ttl| BootInstant::now().add(ttl));
                    held = Some(counting.clone());
                }
                LatchState::Partial | LatchState::Absent if held.is_some() => {
                    // A little early is still expired: our estimate of its expiry is late by
                    // up to the time an answer took.
                    let expired =
                        held_until.is_some_and(|until| until.remaining() <= self.nodes.timeout());
                    return Ok(Waited::Gone {
                        last: held.unwrap_or(counting),
                        expired,
                    });
                }
                LatchState::Absent if !decided => return Err(LatchError::Unknown),
                LatchState::Partial | LatchState::Absent => decided = true,
                LatchState::Unknown => {}
            }
            if give_up_at.has_passed() {
                if !decided {
                    let reasons: Vec<String> = self
                        .servers()
                        .iter()
                        .zip(view.copies())
                        .filter_map(|(server, copy)| {
                            Some(format!("{}: {}", server.display, copy.error?))
                        })
                        .collect();
                    return Err(LatchError::Unavailable {
                        detail: format!(
                            "no quorum: {} of {} servers answered, {} needed ({})",
                            counting.answered,
                            counting.servers,
                            counting.quorum,
                            reasons.join("; ")
                        ),
                    });
                }
                return Ok(Waited::NotOpen(counting));
            }
            if subscriptions.is_none() {
                subscriptions = Some(Subscriptions::start_with(
                    self.servers(),
                    &latch.keys.channel(),
                    self.nodes.timeout(),
                    how.notify.clone(),
                    |server, payload| {
                        parse_heard(payload).map(|heard| LatchWake::Heard(server, heard))
                    },
                ));
                // A count-down between the first read and the subscription was announced to
                // nobody: read again now that nothing more can be missed.
                read = true;
                continue;
            }
            let mut until = next_read;
            if let Some(expiry) = held_until {
                until = until.min(expiry.add(AFTER_EXPIRY.pause()));
            }
            match how.wakes.recv_timeout(until.remaining()) {
                Ok(LatchWake::Interrupted(signal)) => return Ok(Waited::Interrupted(signal)),
                Ok(LatchWake::Heard(server, heard)) => {
                    read |= view.heard(server, &heard);
                    // Count-downs come in bursts: take every one already here before deciding.
                    while let Ok(wake) = how.wakes.try_recv() {
                        match wake {
                            LatchWake::Interrupted(signal) => {
                                return Ok(Waited::Interrupted(signal))
                            }
                            LatchWake::Heard(server, heard) => read |= view.heard(server, &heard),
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => read = true,
                Err(RecvTimeoutError::Disconnected) => {
                    std::thread::sleep(until.remaining());
                    read = true;
                }
            }
        }
    }
}
