//! The give-back that ends a run (`exec`'s, or `release`'s): a release, or, while
//! `--hold-at-least` is not over, a keep (lock/keep.rs, where its numbers and why it is safe
//! are), recording the run in the name's history in the same call; and the lifecycle event
//! that says which.

use crate::lock::{
    Hold, HoldLeft, Keep, KeepOutcome, LockError, Record, Redlock, Released, Target,
};
use crate::report::{event, token_id, Reporter};
use crate::schema::ms;
use crate::token::{self, KeptRun, RunEnd};
use std::time::Duration;

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
