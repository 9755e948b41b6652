//! Keeping a lock after its run, for `--hold-at-least`: giving it back no earlier than a set
//! time after it was acquired, so that a short run on one host still excludes the same job on
//! hosts that start a little later (cron across a fleet), as ShedLock's `lockAtLeastFor` does.
//!
//! Two words, two things: the hold is that time (`Hold`: how long, counted from when, and
//! `HoldLeft`, what is left of it); the keep is the give-back that honours it (`Redlock::keep`),
//! and a kept lock is one in that state (the `kept` event and status field, the kept value of
//! `crate::token`). The act is not called a hold because hold, held and holder already name
//! holding a lock by one's token (`Held`, holder.rs, the holder facts), and no process holds a
//! kept value as its token.
//!
//! Instead of deleting the key, the holder swaps its token for a kept value (a fresh token that
//! records who ran what, when the run finished and how) whose PX is what is left of the hold:
//! one compare-and-set (keep/keep.lua), counted only on a quorum (a refused keep releases what
//! it swapped). Why that is safe:
//!
//! - Only the holder converts: the swap compares the key with our token first, atomically on
//!   each server (one Lua script), exactly as release does. A lock we lost is never touched, and
//!   a lost lock is never kept (exec does not ask).
//! - The kept key still excludes everyone until it expires: it is the same plain string key, so
//!   every client's `SET NX` (redlock, redsync, node-redlock, redis-py) fails on it. No process
//!   holds the kept value as its token, so nobody renews it (`extend` refuses a kept value); it
//!   only goes by expiring (or by `release --force`). A conversion counts only on a quorum, as
//!   a release does.
//! - It never extends the lock beyond acquisition + DUR. `exec` measures the acquisition on our
//!   boot-time clock from the start of the acquisition round (T1, before any server could have
//!   set the key), and sends PX = DUR − (now − T1). A request that reaches a server late would
//!   end the hold late by its delay; so the script also gets the PTTL the key should have if the
//!   request ran at once (from our last confirmed renewal) and shortens the hold by whatever the
//!   key's real PTTL falls short of it. On each server the hold then ends by acquisition + DUR
//!   plus the smaller of two one-way delays: the conversion's, and the last renewal's (a server
//!   cannot have applied a renewal before we sent it, so its key has at least the PTTL we
//!   expect, and any shortfall is time the conversion spent on the way). However late the
//!   conversion lands, the hold does not grow. A hold with nothing left, there or here, is a
//!   plain release.
//! - `release --hold-at-least` has no boot-time instant from the acquiring process, and the
//!   only record of when the lock was acquired is the time in the token, from the acquiring
//!   host's wall clock (the servers keep no time of the `SET`, and a key's PTTL counts from its
//!   last renewal, by a TTL the releaser does not know). So each server measures the hold on its
//!   own clock (`TIME`, when the keep runs there): it ends at that time plus DUR, and never
//!   later than DUR from then. The releasing host's clock plays no part, nor does the keep's
//!   delay on the way. What remains is the acquiring host's clock against the servers': one S
//!   behind them ends the hold S early (a plain release when S >= DUR), one ahead up to S later,
//!   never past DUR after the release (docs/recipes.md).

use super::engine::{LockError, Redlock};
use super::history::{self, Record};
use super::keys::Layout;
use super::limit;
use super::queue::{self, HandOver};
use super::quorum::{self, tally, Verdict};
use super::script::{lua, lua_part, Lua};
use super::target::Target;
use crate::clock::BootInstant;
use std::time::Duration;

/// When the lock was acquired, as far as this process can tell.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Acquisition {
    /// `exec`: the start of the acquisition round, and the last confirmed (re)acquisition with
    /// its TTL, on our boot-time clock.
    Here {
        started: BootInstant,
        confirmed: BootInstant,
        ttl: Duration,
    },
    /// `release`: the unix milliseconds in the token, from the acquiring host's wall clock.
    Token { unix_ms: u64 },
}

/// `--hold-at-least DUR` for one lock.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hold {
    pub(crate) at_least: Duration,
    pub(crate) acquired: Acquisition,
}

impl Hold {
    /// What is left of the hold: measured here now, or by each server on its own clock.
    pub(crate) fn left(&self) -> HoldLeft {
        match self.acquired {
            Acquisition::Here { started, .. } => {
                HoldLeft::Left(self.at_least.saturating_sub(started.elapsed()))
            }
            Acquisition::Token { unix_ms } => HoldLeft::Since {
                acquired_unix_ms: unix_ms,
                at_least: self.at_least,
            },
        }
    }

    /// The PTTL the key should have on a server that runs the keep at once.
    pub(crate) fn expected_pttl(&self) -> Option<Duration> {
        match self.acquired {
            Acquisition::Here { confirmed, ttl, .. } => {
                Some(confirmed.add(ttl).remaining()).filter(|left| !left.is_zero())
            }
            Acquisition::Token { .. } => None,
        }
    }
}

/// What is left of a hold: how long a keep keeps the key.
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
        // Decided once a quorum kept or released, as a release is (holder.rs): a late keep
        // swaps our token for the kept value (or deletes it) on a minority, which no count we
        // report relies on; what it leaves expires with the hold. A refusal waits for every
        // server, so that it takes back what a minority kept.
        let patient = self.observer.is_some();
        let yes = |answer: &KeepReply| !matches!(answer, KeepReply::NotOurs);
        let op = |con: &mut crate::server::Session| {
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
        };
        let replies = self
            .nodes
            .round_decided(op, |replies| !patient && quorum::settled(replies, yes));
        let replies = quorum::waited(replies, started);
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
        let outcome = tally(&replies, yes);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_counts_from_the_acquisition_and_never_past_dur() {
        let started = BootInstant::now();
        let here = Hold {
            at_least: Duration::from_secs(5),
            acquired: Acquisition::Here {
                started,
                confirmed: started,
                ttl: Duration::from_secs(30),
            },
        };
        let HoldLeft::Left(left) = here.left() else {
            panic!("{:?}", here.left());
        };
        assert!(left <= Duration::from_secs(5) && left > Duration::from_secs(4));
        assert!(here.expected_pttl().unwrap() > Duration::from_secs(29));
        // From a token, the servers measure it, whatever this host's clock says.
        let token_hold = Hold {
            at_least: Duration::from_secs(5),
            acquired: Acquisition::Token { unix_ms: 1_000 },
        };
        assert_eq!(
            token_hold.left(),
            HoldLeft::Since {
                acquired_unix_ms: 1_000,
                at_least: Duration::from_secs(5)
            }
        );
        assert_eq!(token_hold.expected_pttl(), None);
    }
}
