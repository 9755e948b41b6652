//! The scripted path: `acquire` prints a token, `extend` and `release` take it back. Each is one
//! round (or one wait) against the servers, and ends with one outcome.

use crate::cli::{AcquireArgs, ExtendArgs, ReleaseArgs};
use crate::config::{self, Config};
use crate::exit::{self, usage, Outcome};
use crate::give_back::{self, GaveBack};
use crate::lock::{KeyState, Kind, Limit, LockError, Redlock, Target};
use crate::report::{event, token_id, Reporter};
use crate::schema::{documented, ms};
use crate::take::{take_lock, WaitSignals};
use crate::token::RunEnd;
use std::io::Write;

documented! {
    /// `acquire --json`: the grant, with the token that gives it back.
    pub(crate) struct AcquireDocument<'a> {
        /// the lock name
        name: &'a str,
        /// the key the grant holds: `<prefix><NAME>`, or a semaphore's slot key
        key: &'a str,
        /// the holder's token, for `release` and `extend`
        token: &'a str,
        /// the TTL the key was set with
        ttl_ms: u64,
        /// how long the lock is certainly held, from before the first request
        validity_ms: u64,
        /// servers configured
        servers: usize,
        /// servers that granted it, of those the round waited for (at least a quorum)
        votes: usize,
        /// only with `--fence`: the grant's fencing number
        #[serde(skip_serializing_if = "Option::is_none")]
        fence: Option<u64>,
        /// only with `--limit`: the semaphore slot held, 0 to N−1
        #[serde(skip_serializing_if = "Option::is_none")]
        slot: Option<usize>,
    }
}

documented! {
    /// `extend --json`: the grant, extended.
    pub(crate) struct ExtendDocument<'a> {
        /// the lock name
        name: &'a str,
        /// the key extended (a semaphore's slot key)
        key: &'a str,
        /// the holder's token
        token: &'a str,
        /// the new TTL, from now
        ttl_ms: u64,
        /// how long the lock is certainly held, from before the first request
        validity_ms: u64,
        /// servers configured
        servers: usize,
        /// servers that extended it
        votes: usize,
    }
}

pub(crate) fn acquire(
    config: &Config,
    reporter: Reporter,
    args: &AcquireArgs,
) -> anyhow::Result<Outcome> {
    let take = &args.take;
    let (target, _) = config.take(take, None)?;
    let mut lock = config.redlock(reporter);
    // Watching until the end of this function, so that a signal still wakes the wait.
    let _watch = WaitSignals::start(take)?;
    let held = take_lock(&mut lock, &target, take, None, &_watch, reporter)?;
    let key = &held.key;
    let output: anyhow::Result<String> = if args.json {
        crate::schema::to_json(&AcquireDocument {
            name: &take.name,
            key,
            token: &held.token,
            ttl_ms: ms(held.ttl),
            validity_ms: ms(held.validity),
            servers: lock.servers().len(),
            votes: held.votes,
            fence: held.fence,
            slot: held.slot,
        })
    } else {
        // The fence on a line of its own: `$(redlock acquire NAME)` stays the bare token
        // without --fence, and with it `set -- $(…)` splits token and fence.
        Ok(match held.fence {
            Some(fence) => format!("{}\n{fence}", held.token),
            None => held.token.clone(),
        })
    };
    let printed = output.and_then(|output| Ok(writeln!(std::io::stdout(), "{output}")?));
    if let Err(err) = printed {
        // A token nobody can read is a lock nobody can release: give it back.
        let _ = lock.release(&target, key, &held.token, None);
        return Err(exit::fail(
            Outcome::Software,
            format!("cannot print the token ({err}); the lock was released"),
        ));
    }
    Ok(Outcome::Success)
}

pub(crate) fn release(
    config: &Config,
    reporter: Reporter,
    args: &ReleaseArgs,
) -> anyhow::Result<Outcome> {
    let (target, hold) = config.release(args)?;
    let mut lock = config.redlock(reporter);
    let Some(token) = args.token.as_deref().filter(|_| !args.force) else {
        return force_release(&mut lock, reporter, &target);
    };
    let (done, verb) = match hold {
        Some(_) => ("kept", "released or kept"),
        None => ("deleted", "released"),
    };
    let retention = crate::history::retention(&args.record);
    let (target, result) = by_token(&mut lock, config, target, |lock, target| {
        let key = lock.find_key(target, token)?;
        let hold = hold.map(|hold| (hold, RunEnd::Released));
        let record = crate::history::of_release(retention, target, &key, token);
        let gave = give_back::give_back(lock, (target, &key, token), hold, record.as_ref())?;
        Ok((gave, key))
    })?;
    match result {
        Ok((gave, key)) => {
            if let GaveBack::Released(released) = &gave {
                for (server, why) in &released.failures {
                    reporter.warn(&format!(
                        "{server}: {why}; the lock there expires by its ttl"
                    ));
                }
            }
            give_back::report(
                reporter,
                (&args.name, &key, token),
                lock.servers().len(),
                &gave,
            );
            Ok(Outcome::Success)
        }
        Err(LockError::NotHeld { acted: 0, .. }) => Err(exit::fail(
            Outcome::Negative,
            format!(
                "lock '{}' is not held by this token (it expired, was released, or is held by someone else)",
                args.name
            ),
        )),
        Err(err @ LockError::OtherMode { .. }) => Err(exit::fail(
            Outcome::Negative,
            format!("lock '{}' was not released: {err}", args.name),
        )),
        Err(LockError::LimitMismatch { slots }) => {
            Err(config::limit_mismatch(&args.name, target.limit(), slots))
        }
        Err(LockError::NotHeld { acted, .. }) => Err(exit::fail(
            Outcome::Negative,
            format!(
                "lock '{}' is not held by this token on a quorum of servers; its key was {done} on the {acted} of {} that still held this token",
                args.name,
                lock.servers().len()
            ),
        )),
        Err(err) => Err(exit::fail(
            Outcome::Unavailable,
            format!("cannot tell whether lock '{}' was {verb}: {err}", args.name),
        )),
    }
}

/// Does what the token asks (`act`) on `target`; when that finds the token nowhere and the
/// command line gave no `--limit`, does it again on the semaphore of the same name, if the
/// servers record one: its limit key says how many slots to look at (`lock::Limit`). A token
/// that holds a slot is never told it holds nothing. Returns the target acted on last.
fn by_token<T>(
    lock: &mut Redlock,
    config: &Config,
    target: Target,
    mut act: impl FnMut(&mut Redlock, &Target) -> Result<T, LockError>,
) -> anyhow::Result<(Target, Result<T, LockError>)> {
    let result = act(lock, &target);
    if !matches!(result, Err(LockError::NotHeld { acted: 0, .. })) || target.kind != Kind::Mutex {
        return Ok((target, result));
    }
    let name = &target.name;
    let slots = match lock.limit(&target) {
        Limit::Absent => return Ok((target, result)),
        Limit::Slots(slots) => slots,
        Limit::Disagree(found) => {
            let found: Vec<String> = found.iter().map(|n| format!("--limit {n}")).collect();
            return Err(usage(format!(
                "the token holds no lock '{name}', and the servers disagree on how many slots the semaphore '{name}' has; --limit N is needed: expected {}",
                found.join(" or ")
            )));
        }
    };
    let semaphore = config.target(name, Some(slots), false, false)?;
    let result = act(lock, &semaphore);
    Ok((semaphore, result))
}

/// `release --force`: every key of the target (a semaphore's slots one after the other),
/// whoever holds it.
fn force_release(
    lock: &mut Redlock,
    reporter: Reporter,
    target: &Target,
) -> anyhow::Result<Outcome> {
    let name = &target.name;
    if let Some(slots) = target.limit() {
        // Emptying slots 0..N-1 of a semaphore of another size would leave some of its holders.
        if let Some(found) = lock.limit(target).other_than(slots) {
            return Err(config::limit_mismatch(name, Some(slots), found));
        }
    }
    let mut removed_any = false;
    let mut answered_all = true;
    for key in target.all_keys() {
        let states = lock.force_release(target, &key);
        let mut removed = 0;
        let mut answered = 0;
        let mut out = std::io::stdout().lock();
        for state in &states {
            match &state.state {
                Ok(
                    found @ (KeyState::Present { .. }
                    | KeyState::Foreign { .. }
                    | KeyState::Shared { .. }),
                ) => {
                    removed += 1;
                    answered += 1;
                    let holder = found.holder().unwrap_or_default();
                    let _ = writeln!(out, "removed {key} on {} (held by {holder})", state.server);
                }
                Ok(KeyState::Absent) => answered += 1,
                Err(why) => reporter.warn(&format!("{}: {why}", state.server)),
            }
        }
        if removed > 0 {
            removed_any = true;
            reporter.emit(&event::Released {
                name,
                key: &key,
                token_id: None,
                servers_deleted: removed,
                servers: states.len(),
                forced: true,
            });
        }
        answered_all &= answered >= lock.quorum();
    }
    if removed_any {
        Ok(Outcome::Success)
    } else if !answered_all {
        Err(exit::fail(
            Outcome::Unavailable,
            format!(
                "cannot force-release lock '{name}': fewer than {} of {} servers answered",
                lock.quorum(),
                lock.servers().len()
            ),
        ))
    } else {
        let semaphore = match (target.kind, lock.limit(target)) {
            (Kind::Mutex, Limit::Slots(slots)) => format!(
                " ('{name}' is also a semaphore of {slots} slots: --limit {slots} --force empties them)"
            ),
            _ => String::new(),
        };
        Err(exit::fail(
            Outcome::Negative,
            format!("lock '{name}' is not held on any server; nothing to remove{semaphore}"),
        ))
    }
}

pub(crate) fn extend(
    config: &Config,
    reporter: Reporter,
    args: &ExtendArgs,
) -> anyhow::Result<Outcome> {
    let target = config.extension(args)?;
    let mut lock = config.redlock(reporter);
    let (target, result) = by_token(&mut lock, config, target, |lock, target| {
        let key = lock.find_key(target, &args.token)?;
        Ok((lock.extend(target, &key, &args.token, args.ttl)?, key))
    })?;
    match result {
        Ok((held, key)) => {
            reporter.emit(&event::Renewed {
                name: &args.name,
                key: &key,
                token_id: token_id(&held.token),
                ttl_ms: ms(held.ttl),
                validity_ms: ms(held.validity),
                votes: held.votes,
                servers: lock.servers().len(),
            });
            let validity_ms = ms(held.validity);
            let output = if args.json {
                crate::schema::to_json(&ExtendDocument {
                    name: &args.name,
                    key: &key,
                    token: &held.token,
                    ttl_ms: ms(held.ttl),
                    validity_ms,
                    servers: lock.servers().len(),
                    votes: held.votes,
                })?
            } else {
                validity_ms.to_string()
            };
            let _ = writeln!(std::io::stdout(), "{output}");
            Ok(Outcome::Success)
        }
        Err(LockError::NotHeld { acted: 0, .. }) => Err(exit::fail(
            Outcome::Negative,
            format!(
                "lock '{}' is not held by this token; nothing was extended",
                args.name
            ),
        )),
        Err(err @ LockError::OtherMode { .. }) => Err(exit::fail(
            Outcome::Negative,
            format!("lock '{}' was not extended: {err}", args.name),
        )),
        Err(LockError::LimitMismatch { slots }) => {
            Err(config::limit_mismatch(&args.name, target.limit(), slots))
        }
        Err(LockError::NotHeld { acted, undone }) => Err(exit::fail(
            Outcome::Negative,
            format!(
                "lock '{}' is not held by this token on a quorum of servers; it was extended on the {acted} of {} that still held this token, and its previous ttl put back on {undone} of them",
                args.name,
                lock.servers().len()
            ),
        )),
        Err(err) => Err(exit::fail(
            Outcome::Unavailable,
            format!("cannot extend lock '{}': {err}", args.name),
        )),
    }
}
