//! `--hold-at-least`: giving a lock back no earlier than a set time after it was acquired, so
//! that a short run on one host still excludes the same job on hosts that start a little later
//! (cron across a fleet), as ShedLock's `lockAtLeastFor` does.
//!
//! Instead of deleting the key, the holder swaps its token for a kept value (a fresh token that
//! records who ran what, when the run finished and how) whose PX is what is left of the hold.
//! Why that is safe:
//!
//! - Only the holder converts: the swap compares the key with our token first, atomically on
//!   each server (one Lua script), exactly as release does. A lock we lost is never touched, and
//!   a lost lock is never kept (exec does not ask).
//! - The kept key still excludes everyone until it expires: it is the same plain string key, so
//!   every client's `SET NX` (redlock, redsync, node-redlock, redis-py) fails on it. No process
//!   holds the kept value as its token, so nobody renews it (`extend` refuses a kept value); it
//!   only goes by expiring (or by `release --force`). A conversion counts only on a quorum, as a release does.
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

use crate::clock::BootInstant;
use crate::lock::{HoldLeft, Keep, KeepOutcome, LockError, Record, Redlock, Released, Target};
use crate::report::{event, token_id, Reporter};
use crate::schema::ms;
use crate::token::{self, KeptRun, RunEnd};
use std::time::Duration;

/// When the lock was acquired, as far as this process can tell.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Acquired {
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
    pub(crate) acquired: Acquired,
}

impl Hold {
    /// What is left of the hold: measured here now, or by each server on its own clock.
    fn left(&self) -> HoldLeft {
        match self.acquired {
            Acquired::Here { started, .. } => {
                HoldLeft::Left(self.at_least.saturating_sub(started.elapsed()))
            }
            Acquired::Token { unix_ms } => HoldLeft::Since {
                acquired_unix_ms: unix_ms,
                at_least: self.at_least,
            },
        }
    }

    /// The PTTL the key should have on a server that runs the keep at once.
    fn expected_pttl(&self) -> Option<Duration> {
        match self.acquired {
            Acquired::Here { confirmed, ttl, .. } => {
                Some(confirmed.add(ttl).remaining()).filter(|left| !left.is_zero())
            }
            Acquired::Token { .. } => None,
        }
    }
}

/// How the lock was given back.
pub(crate) enum GaveBack {
    Released(Released),
    /// Kept for `kept.remaining` more (on `kept.kept` servers; released where the hold was
    /// over).
    Kept(KeepOutcome),
}

/// Releases `key` (one of `target`'s) held by `token`, or, with a hold that is not over, keeps
/// it until it is, recording how the run ended in the kept value; and `record`s the run in the
/// name's history in the same call.
pub(crate) fn give_back(
    lock: &mut Redlock,
    (target, key, token): (&Target, &str, &str),
    hold: Option<(Hold, RunEnd)>,
    record: Option<&Record>,
) -> Result<GaveBack, LockError> {
    let release = |lock: &mut Redlock| {
        lock.release(target, key, token, record)
            .map(GaveBack::Released)
    };
    let holder = token::holder(token);
    let (Some((hold, end)), Some(holder)) = (hold, holder) else {
        return release(lock);
    };
    let run = KeptRun {
        finished_unix_ms: token::unix_ms_now(),
        end,
    };
    let Ok(value) = token::kept_token(&holder, &run) else {
        return release(lock);
    };
    let left = hold.left();
    if left == HoldLeft::Left(Duration::ZERO) {
        return release(lock);
    }
    let keep = Keep {
        value: &value,
        hold: left,
        expected_pttl: hold.expected_pttl(),
        record,
    };
    let kept = lock.keep(target, key, token, &keep)?;
    Ok(if kept.kept == 0 {
        GaveBack::Released(Released {
            deleted: kept.released,
            failures: Vec::new(),
        })
    } else {
        GaveBack::Kept(kept)
    })
}

/// The lifecycle event for a lock given back.
pub(crate) fn report(
    reporter: Reporter,
    (name, key, token): (&str, &str, &str),
    servers: usize,
    gave: &GaveBack,
) {
    match gave {
        GaveBack::Released(released) => reporter.emit(&event::Released {
            name,
            key,
            token_id: Some(token_id(token)),
            servers_deleted: released.deleted,
            servers,
            forced: false,
        }),
        GaveBack::Kept(kept) => reporter.emit(&event::Kept {
            name,
            key,
            token_id: token_id(token),
            servers_kept: kept.kept,
            servers,
            remaining_ms: ms(kept.remaining),
        }),
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
            acquired: Acquired::Here {
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
            acquired: Acquired::Token { unix_ms: 1_000 },
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
