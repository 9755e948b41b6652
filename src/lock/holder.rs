//! What a holder does with its token: release and extend, exclusive or shared (shared.rs has
//! the shared scripts). Both compare the token on every server, say truthfully what they did
//! when the token holds the lock on only some of them, and touch nothing when it holds the lock
//! in the other mode.

use super::engine::{Held, LockError, Redlock};
use super::history::{self, Record};
use super::keys::Layout;
use super::limit;
use super::nodes::{NodeError, Reply};
use super::queue::{self, HandOver};
use super::quorum::{self, tally, Tally, Verdict};
use super::script::{lua, lua_part, Lua};
use super::shared;
use super::target::Target;
use crate::clock::BootInstant;
use std::time::Duration;

/// Compare-and-delete (holder/release.lua), handing the key to the next waiter, and recording
/// the run.
pub(super) static RELEASE: Lua = lua!(
    queue::FUNCTIONS,
    queue::FREED,
    limit::FUNCTIONS,
    history::RECORD,
    lua_part!("holder/release.lua"),
);

/// Compare-and-PEXPIRE (holder/extend.lua).
pub(super) static EXTEND: Lua = lua!(limit::FUNCTIONS, lua_part!("holder/extend.lua"));

/// Compare-and-restore of the expiry a failed extension replaced (holder/restore.lua; why it
/// is safe: `Redlock::restore`).
pub(super) static RESTORE: Lua = lua!(lua_part!("holder/restore.lua"));

/// One server's answer to a release or an extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compared<T> {
    Done(T),
    NotOurs,
    /// The token holds the lock here, in the other mode (shared for an exclusive request, or
    /// the reverse).
    OtherMode,
}

impl<T> Compared<T> {
    fn from_code(code: i64, done: T) -> Compared<T> {
        match code {
            1 => Compared::Done(done),
            2 => Compared::OtherMode,
            _ => Compared::NotOurs,
        }
    }

    fn done(&self) -> bool {
        matches!(self, Compared::Done(_))
    }

    fn describe(&self, done: &str) -> (String, bool) {
        match self {
            Compared::Done(_) => (done.into(), true),
            Compared::NotOurs => ("not held by this token".into(), false),
            Compared::OtherMode => ("held by this token in the other mode".into(), false),
        }
    }
}

/// A refusal on a quorum: `NotHeld`, or `OtherMode` when the servers that refused show the token
/// holding the lock in the other mode (and none did what was asked).
fn refused<T>(
    replies: &[Reply<Compared<T>>],
    acted: usize,
    undone: usize,
    target: &Target,
) -> LockError {
    let other = replies
        .iter()
        .any(|reply| matches!(reply.result, Ok(Compared::OtherMode)));
    if other && acted == 0 {
        LockError::OtherMode {
            holds_shared: !target.is_shared(),
        }
    } else {
        LockError::NotHeld { acted, undone }
    }
}

/// Result of a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Released {
    pub(crate) deleted: usize,
    pub(crate) failures: Vec<(String, NodeError)>,
}

impl Redlock {
    /// Compare-and-delete of `key` (one of `target`'s) on every server, handing it to the next
    /// waiter, and recording the run in the same call when given one (history.rs). Waits for
    /// every server (up to the timeout) so that a one-shot `release` does not exit before its
    /// deletes went out.
    pub(crate) fn release(
        &mut self,
        target: &Target,
        key: &str,
        token: &str,
        record: Option<&Record>,
    ) -> Result<Released, LockError> {
        let hand_over = HandOver::new(target, self.nodes.timeout(), self.waited_as.as_deref());
        let script = if target.is_shared() {
            &shared::RELEASE
        } else {
            &RELEASE
        };
        let readers = target.readers();
        let history = target.keys.history();
        let settle = limit::settle_keys(target);
        let started = BootInstant::now();
        // Decided once a quorum deleted: a late delete, applied or not, changes nothing we
        // report, and what it leaves expires with the ttl (nodes/mod.rs). A refused release
        // waits for every server, so that it says what it deleted on a minority.
        let patient = self.observer.is_some();
        let replies = self.nodes.round_decided(
            |con| {
                let layout = Layout::of(con);
                let mut invocation = script.key(&*layout.name(key));
                invocation
                    .key(&*layout.name(&hand_over.queue))
                    .key(&*layout.name(&readers))
                    .key(&*layout.name(&history))
                    .key(layout.names(&settle))
                    .arg(token);
                history::args(record, &mut invocation);
                let code: i64 = hand_over.args(&mut invocation).invoke(con)?;
                Ok(Compared::from_code(code, ()))
            },
            |replies| !patient && quorum::settled(replies, Compared::done),
        );
        let replies = quorum::waited(replies, started);
        let done = if target.is_shared() {
            "left"
        } else {
            "deleted"
        };
        self.observe("release", key, &replies, started, None, |answer| {
            answer.describe(done)
        });
        let outcome = tally(&replies, Compared::done);
        let failures = self.failures(&replies);
        match outcome.verdict(self.nodes.len()) {
            Verdict::Yes => Ok(Released {
                deleted: outcome.yes,
                failures,
            }),
            Verdict::No => Err(refused(&replies, outcome.yes, 0, target)),
            Verdict::Unknown => {
                let did = format!("deleted on {}", outcome.yes);
                Err(self.undecided(&replies, &outcome, &did))
            }
        }
    }

    /// Compare-and-PEXPIRE to `ttl` on every server. Counts only with a quorum and positive
    /// validity measured from the start of this round. A failed extension deletes nothing, and
    /// puts back the expiry it replaced on the servers where it did extend, so that a minority
    /// success leaves no longer TTL behind than the holder had (see `restore`).
    pub(crate) fn extend(
        &mut self,
        target: &Target,
        key: &str,
        token: &str,
        ttl: Duration,
    ) -> Result<Held, LockError> {
        let ttl_ms = ttl.as_millis() as u64;
        let script = if target.is_shared() {
            &shared::EXTEND
        } else {
            &EXTEND
        };
        let readers = target.readers();
        let settle = limit::settle_keys(target);
        let started = BootInstant::now();
        // Decided once a quorum extended: a late extension lengthens our own key on a minority,
        // which the validity counted here never relies on. A refusal waits for every server, so
        // that `restore` puts back what a minority extended.
        let patient = self.observer.is_some();
        let replies = self.nodes.round_decided(
            |con| {
                let layout = Layout::of(con);
                let (code, before, set): (i64, i64, i64) = script
                    .key(&*layout.name(key))
                    .key(&*layout.name(&readers))
                    .key(layout.names(&settle))
                    .arg(token)
                    .arg(ttl_ms)
                    .invoke(con)?;
                Ok(Compared::from_code(code, Extended { before, set }))
            },
            |replies| !patient && quorum::settled(replies, Compared::done),
        );
        let replies = quorum::waited(replies, started);
        let outcome = tally(&replies, Compared::done);
        let validity = outcome
            .quorum_reached_at(self.quorum())
            .and_then(|at| quorum::validity(ttl, at.since(started)));
        self.observe("extend", key, &replies, started, validity, |answer| {
            answer.describe("extended")
        });
        let verdict = outcome.verdict(self.nodes.len());
        if let (Verdict::Yes, Some(validity)) = (&verdict, validity) {
            return Ok(Held::granted(
                key,
                token,
                ttl,
                (validity, started),
                outcome.yes,
            ));
        }
        let undone = self.restore(target, key, token, &replies);
        let did = format!("extended on {} (put back on {undone})", outcome.yes);
        Err(match verdict {
            Verdict::No => refused(&replies, outcome.yes, undone, target),
            Verdict::Yes => LockError::Unavailable {
                detail: format!(
                    "the servers took longer than the {ttl_ms} ms ttl to answer; {did} of {} servers",
                    self.nodes.len()
                ),
            },
            Verdict::Unknown => self.undecided(&replies, &outcome, &did),
        })
    }

    /// After a failed extension: on each server that did extend, puts back the expiry the key
    /// had before, if the key still holds our token and the expiry we set (compare-and-restore).
    ///
    /// Why this is safe: it touches only our own key, and only as this extension left it, and
    /// puts back exactly the expiry it had before, the one the holder still counts on (a failed
    /// extension gives it no new validity): the servers end as if the extension had never been
    /// asked for. Someone else's key, a key that expired meanwhile (and may be someone else's
    /// now), or ours after any later change (another extension with the same token) is left
    /// alone. Where the restore does not get through, the key keeps what the extension set, as
    /// it did before this existed: never worse. One server at a time, since each has its own
    /// values; they all just answered, so this is quick. Returns on how many servers it did.
    fn restore(
        &mut self,
        target: &Target,
        key: &str,
        token: &str,
        replies: &[Reply<Compared<Extended>>],
    ) -> usize {
        let script = if target.is_shared() {
            &shared::RESTORE
        } else {
            &RESTORE
        };
        let readers = target.readers();
        let mut undone = 0;
        for (index, reply) in replies.iter().enumerate() {
            let Ok(Compared::Done(extended)) = &reply.result else {
                continue;
            };
            let mut only = vec![false; replies.len()];
            only[index] = true;
            let replies = self.nodes.round_on(&only, |con| {
                let layout = Layout::of(con);
                let restored: i64 = script
                    .key(&*layout.name(key))
                    .key(&*layout.name(&readers))
                    .arg(token)
                    .arg(extended.set)
                    .arg(extended.before)
                    .invoke(con)?;
                Ok(restored == 1)
            });
            undone += replies
                .iter()
                .flatten()
                .filter(|reply| matches!(reply.result, Ok(true)))
                .count();
        }
        undone
    }

    /// Neither verdict: says what the servers that answered did, and which did not answer.
    /// `did` says what the yes votes did and on how many servers.
    pub(super) fn undecided<T>(
        &self,
        replies: &[Reply<T>],
        outcome: &Tally,
        did: &str,
    ) -> LockError {
        if outcome.answered() < self.quorum() {
            return match self.unavailable(replies, outcome.answered()) {
                LockError::Unavailable { detail } if outcome.yes > 0 => LockError::Unavailable {
                    detail: format!("{detail}; {did}"),
                },
                other => other,
            };
        }
        let failures = self.reasons(replies);
        LockError::Unavailable {
            detail: format!(
                "no quorum either way: {did}, not held by this token on {}, no answer from {} ({}); {} of {} needed to tell",
                outcome.no,
                failures.len(),
                failures.join("; "),
                self.quorum(),
                self.nodes.len(),
            ),
        }
    }
}

/// What one server's successful extension replaced, as expiry times in milliseconds on that
/// server's own clock; `before` is -1 when the key had no expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Extended {
    before: i64,
    set: i64,
}
