//! Keeping a lock after its run (`--hold-at-least`): the compare-and-set that swaps our token
//! for a kept value which expires when the hold is over, counted only on a quorum (a refused
//! keep releases what it swapped). Why that is safe is argued in `crate::hold`, which decides
//! the numbers.

use super::engine::{LockError, Redlock};
use super::history::{self, Record};
use super::keys::Layout;
use super::limit;
use super::queue::{self, HandOver};
use super::quorum::{tally, Verdict};
use super::script::{lua, lua_part, Lua};
use super::target::Target;
use crate::clock::BootInstant;
use std::time::Duration;

/// The compare-and-set that keeps a lock (keep/keep.lua), or releases it when nothing is left
/// of the hold, recording the run either way.
pub(super) static KEEP: Lua = lua!(
    queue::FUNCTIONS,
    queue::FREED,
    limit::FUNCTIONS,
    history::RECORD,
    lua_part!("keep/keep.lua"),
);

/// What a keep asks of each server.
pub(crate) struct Keep<'a> {
    /// The value that replaces our token.
    pub(crate) value: &'a str,
    /// How long to keep it.
    pub(crate) hold: HoldLeft,
    /// The PTTL our key should have on a server that runs the request at once; `None` when
    /// unknown.
    pub(crate) expected_pttl: Option<Duration>,
    /// The run to record in the same call (history.rs).
    pub(crate) record: Option<&'a Record>,
}

/// How long a keep keeps the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HoldLeft {
    /// What is left of the hold when the request is sent, measured here.
    Left(Duration),
    /// A hold of `at_least` from `acquired_unix_ms`, measured by each server on its own clock
    /// when the request runs there, and never longer than `at_least` from then.
    Since {
        acquired_unix_ms: u64,
        at_least: Duration,
    },
}

/// Result of a keep: on how many servers the key was kept, or released because the hold had
/// run out by the time the request arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeepOutcome {
    pub(crate) kept: usize,
    pub(crate) released: usize,
    /// The shortest time a server kept it for.
    pub(crate) remaining: Duration,
}

#[derive(Clone, Copy)]
enum KeepReply {
    Kept(Duration),
    Released,
    NotOurs,
}

impl Redlock {
    /// Compare-and-set on every server: where the key holds `token`, it becomes `keep.value`
    /// with what is left of the hold as its PX. Counts only with a quorum, as release does.
    pub(crate) fn keep(
        &mut self,
        target: &Target,
        key: &str,
        token: &str,
        keep: &Keep,
    ) -> Result<KeepOutcome, LockError> {
        let hand_over = HandOver::new(target, self.nodes.timeout(), self.waited_as.as_deref());
        // Rounded so that the hold comes out shorter, never longer.
        let (hold_ms, acquired_ms) = match keep.hold {
            HoldLeft::Left(left) => (left.as_millis() as u64, 0),
            HoldLeft::Since {
                acquired_unix_ms,
                at_least,
            } => (at_least.as_millis() as u64, acquired_unix_ms),
        };
        let expected_ms = keep
            .expected_pttl
            .map_or(0, |pttl| pttl.as_millis() as u64 + 1);
        let history = target.keys.history();
        let settle = limit::settle_keys(target);
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let layout = Layout::of(con);
            let mut invocation = KEEP.key(&*layout.name(key));
            invocation
                .key(&*layout.name(&hand_over.queue))
                .key(&*layout.name(&history))
                .key(layout.names(&settle))
                .arg(token)
                .arg(keep.value)
                .arg(hold_ms)
                .arg(expected_ms)
                .arg(acquired_ms);
            history::args(keep.record, &mut invocation);
            let (answer, px): (i64, u64) = hand_over.args(&mut invocation).invoke(con)?;
            Ok(match answer {
                1 => KeepReply::Kept(Duration::from_millis(px)),
                2 => KeepReply::Released,
                _ => KeepReply::NotOurs,
            })
        });
        self.observe(
            "keep",
            key,
            &replies,
            started,
            None,
            |answer| match answer {
                KeepReply::Kept(px) => (format!("kept for {}", crate::human::duration(*px)), true),
                KeepReply::Released => ("released (the hold was over)".into(), true),
                KeepReply::NotOurs => ("not held by this token".into(), false),
            },
        );
        let outcome = tally(&replies, |answer| !matches!(answer, KeepReply::NotOurs));
        match outcome.verdict(self.nodes.len()) {
            Verdict::Yes => {
                let kept: Vec<Duration> = replies
                    .iter()
                    .filter_map(|reply| match reply.result {
                        Ok(KeepReply::Kept(px)) => Some(px),
                        _ => None,
                    })
                    .collect();
                Ok(KeepOutcome {
                    kept: kept.len(),
                    released: outcome.yes - kept.len(),
                    remaining: kept.into_iter().min().unwrap_or_default(),
                })
            }
            Verdict::No => {
                // Not ours on a quorum: a refusal keeps nothing. Where this round swapped our
                // token for the kept value, that value goes as our token would have gone with a
                // release, instead of holding a minority's key until the hold is over. The run
                // was recorded (or not) by the keep itself.
                if outcome.yes > 0 {
                    let _ = self.release(target, key, keep.value, None);
                }
                Err(LockError::NotHeld {
                    acted: outcome.yes,
                    undone: 0,
                })
            }
            Verdict::Unknown => {
                let did = format!("kept or released on {}", outcome.yes);
                Err(self.undecided(&replies, &outcome, &did))
            }
        }
    }
}
