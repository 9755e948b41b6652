//! The record a process makes of the run it ends, for the give-back to carry (lock/history.rs):
//! `exec`'s (how its command ended, how long it waited and held the lock) and `release`'s (a
//! script's run, ended by hand), with how the history keeps them (`--history`,
//! `--history-retention`).

use super::entry::{Ended, Entry};
use crate::cli::RecordArgs;
use crate::lock::{Held, Record, Retention, Target};
use crate::token;
use std::time::Duration;

/// How the history retains runs, as the command line says; `None` with `--history 0`.
pub(crate) fn retention(args: &RecordArgs) -> Option<Retention> {
    (args.history > 0).then_some(Retention {
        cap: args.history,
        idle: args.history_retention,
    })
}

/// `exec`'s record of its run under `held` (a grant of `target` after `waited`), ended as
/// `ended` now. Its grant counted on a quorum, so the run happened: it is recorded on every
/// server the give-back reaches, also where the lock was lost.
pub(crate) fn of_exec(
    retention: Option<Retention>,
    (target, held): (&Target, &Held),
    waited: Duration,
    ended: Ended,
) -> Option<Record> {
    let retention = retention?;
    let entry = Entry {
        token: held.token.clone(),
        ended,
        ended_unix_ms: token::unix_ms_now(),
        held: Some(held.since.elapsed()),
        waited: Some(waited),
        fence: held.fence,
        slot: held.slot,
        shared: target.is_shared(),
    };
    Some(Record {
        entry: entry.encode(),
        retention,
        ran: true,
    })
}

/// `release`'s record of the run `token` held `key` (one of `target`'s) for, ended now. Only
/// the servers where the token still holds the key record it: a token that holds nothing had
/// no run to speak of. How long it held comes from the acquisition time in the token, on the
/// acquiring host's clock (the releasing host may be another).
pub(crate) fn of_release(
    retention: Option<Retention>,
    target: &Target,
    key: &str,
    token: &str,
) -> Option<Record> {
    let retention = retention?;
    let ended_unix_ms = token::unix_ms_now();
    let held = token::holder(token)
        .map(|holder| Duration::from_millis(ended_unix_ms.saturating_sub(holder.acquired_unix_ms)));
    let entry = Entry {
        token: token.to_string(),
        ended: Ended::Released,
        ended_unix_ms,
        held,
        waited: None,
        fence: None,
        slot: target.index_of(key).and_then(|index| target.slot(index)),
        shared: target.is_shared(),
    };
    Some(Record {
        entry: entry.encode(),
        retention,
        ran: false,
    })
}
