//! Waiting for a latch to open: a read, with a subscription to the latch's channel behind it on
//! every server's wire (in the same burst, so a count-down the read did not see is announced),
//! then what the count-downs announce, heard on those wires between rounds (`Nodes::listen`),
//! with a periodic re-read as the safety net and a read when the latch should expire (the
//! module comment, rule 4). Re-reads are retries, paced as every retry of the house is
//! (`crate::retry`).

use super::decide::LatchError;
use super::lua::parse_heard;
use super::model::Latch;
use super::verdict::{Counting, LatchState};
use super::view::View;
use crate::clock::BootInstant;
use crate::lock::{Interrupt, Redlock, Wake};
use crate::retry::Retry;
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

/// How to wait.
pub(crate) struct LatchWait<'a> {
    /// Wait this long at most; zero: look once.
    pub(crate) wait: Duration,
    /// What else ends a pause, polled beside the wires: a signal.
    pub(crate) interrupt: Option<Interrupt<'a>>,
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
        let channel = latch.keys.channel();
        // What a quorum was last seen holding, and until when it should then live.
        let mut held: Option<Counting> = None;
        let mut held_until: Option<BootInstant> = None;
        // Whether a quorum answered any read yet.
        let mut decided = false;
        let mut read = true;
        let mut next_read = give_up_at;
        loop {
            if read {
                self.latch_read_into(latch, &mut view, Some(&channel));
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
            let mut until = next_read;
            if let Some(expiry) = held_until {
                until = until.min(expiry.add(AFTER_EXPIRY.pause()));
            }
            let heard = self
                .nodes
                .listen(&channel, until, how.interrupt.map(|i| i.fd));
            if let Some(Wake::Interrupted(signal)) = how
                .interrupt
                .filter(|_| heard.rang)
                .and_then(|i| (i.take)())
            {
                return Ok(Waited::Interrupted(signal));
            }
            // Count-downs come in bursts: every one already here is taken before deciding.
            for (server, payload) in &heard.messages {
                if let Some(count_down) = parse_heard(payload) {
                    read |= view.heard(*server, &count_down);
                }
            }
            read |= until.has_passed();
        }
    }
}
