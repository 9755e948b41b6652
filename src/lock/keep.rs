//! Keeping a lock after its run (`--hold-at-least`): the compare-and-set that swaps our token
//! for a kept value which expires when the hold is over. Why that is safe is argued in
//! `crate::hold`, which decides the numbers.

use super::quorum::Verdict;
use super::{scripts, tally, LockError, Redlock};
use crate::clock::BootInstant;
use std::time::Duration;

/// What a keep asks of each server.
pub(crate) struct Keep<'a> {
    /// The value that replaces our token.
    pub(crate) value: &'a str,
    /// What is left of the hold when the request is sent.
    pub(crate) remaining: Duration,
    /// The PTTL our key should have on a server that runs the request at once; `None` when
    /// unknown.
    pub(crate) expected_pttl: Option<Duration>,
}

/// Result of a keep: on how many servers the key was kept, or released because the hold had
/// run out by the time the request arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Kept {
    pub(crate) kept: usize,
    pub(crate) released: usize,
}

#[derive(Clone, Copy)]
enum Answer {
    Kept,
    Released,
    NotOurs,
}

impl Redlock {
    /// Compare-and-set on every server: where the key holds `token`, it becomes `keep.value`
    /// with what is left of the hold as its PX. Counts only with a quorum, as release does.
    pub(crate) fn keep(&mut self, key: &str, token: &str, keep: &Keep) -> Result<Kept, LockError> {
        let (queue, wake) = (scripts::queue_key(key), scripts::wake_prefix(key));
        let reserve = scripts::reservation(self.nodes.timeout());
        // Rounded so that the hold comes out shorter, never longer.
        let remaining_ms = keep.remaining.as_millis() as u64;
        let expected_ms = keep
            .expected_pttl
            .map_or(0, |pttl| pttl.as_millis() as u64 + 1);
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let answer: i64 = scripts::keep()
                .key(key)
                .key(&queue)
                .arg(token)
                .arg(keep.value)
                .arg(remaining_ms)
                .arg(expected_ms)
                .arg(&wake)
                .arg(reserve)
                .invoke(con)?;
            Ok(match answer {
                1 => Answer::Kept,
                2 => Answer::Released,
                _ => Answer::NotOurs,
            })
        });
        self.observe(
            "keep",
            key,
            &replies,
            started,
            None,
            |answer| match answer {
                Answer::Kept => ("kept".into(), true),
                Answer::Released => ("released (the hold was over)".into(), true),
                Answer::NotOurs => ("not held by this token".into(), false),
            },
        );
        let outcome = tally(&replies, |answer| !matches!(answer, Answer::NotOurs));
        match outcome.verdict(self.nodes.len()) {
            Verdict::Yes => {
                let kept = replies
                    .iter()
                    .filter(|reply| matches!(reply.result, Ok(Answer::Kept)))
                    .count();
                Ok(Kept {
                    kept,
                    released: outcome.yes - kept,
                })
            }
            Verdict::No => Err(LockError::NotHeld {
                acted: outcome.yes,
                undone: 0,
            }),
            Verdict::Unknown => {
                let did = format!("kept or released on {}", outcome.yes);
                Err(self.undecided(&replies, &outcome, &did))
            }
        }
    }
}
