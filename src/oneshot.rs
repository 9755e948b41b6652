//! The scripted path: `acquire` prints a token, `extend` and `release` take it back. Each is one
//! round (or one wait) against the servers, and ends with one outcome.

use crate::cli::{AcquireArgs, ExtendArgs, ReleaseArgs};
use crate::config::Config;
use crate::exit::{self, Outcome};
use crate::hold::{self, Acquired, GaveBack, Hold};
use crate::lock::{self, KeyState, LockError, Redlock};
use crate::report::{Event, Reporter};
use crate::signals;
use crate::take::take_lock;
use crate::token::{self, RunEnd};
use std::io::Write;
use std::sync::mpsc;

pub(crate) fn acquire(
    config: &Config,
    reporter: Reporter,
    args: &AcquireArgs,
) -> anyhow::Result<Outcome> {
    let take = &args.take;
    let key = crate::take::target_key(config, take)?;
    config.check_ttl(take.ttl)?;
    let (wake_tx, wakes) = mpsc::channel();
    if take.wait.is_some() {
        signals::watch(
            &signals::TERMINATING,
            wake_tx.clone(),
            lock::Wake::Interrupted,
        )?;
    } else {
        // One attempt never pauses, so nothing needs waking: blocking the signals is enough to
        // finish the attempt and then act on them, and saves starting a thread.
        signals::block(&signals::TERMINATING)?;
    }
    let mut lock = config.redlock(reporter);
    let held = take_lock(&mut lock, &key, take, None, (&wake_tx, &wakes), reporter)?;
    let key = held.key_in(&key);
    let output = if args.json {
        let mut output = serde_json::json!({
            "name": take.name,
            "key": key,
            "token": held.token,
            "ttl_ms": held.ttl.as_millis() as u64,
            "validity_ms": held.validity.as_millis() as u64,
            "servers": lock.servers().len(),
            "votes": held.votes,
        });
        if let Some(fence) = held.fence {
            output["fence"] = fence.into();
        }
        if let Some(slot) = held.slot {
            output["slot"] = slot.into();
        }
        output.to_string()
    } else {
        // The fence on a line of its own: `$(redlock acquire NAME)` stays the bare token
        // without --fence, and with it `set -- $(…)` splits token and fence.
        match held.fence {
            Some(fence) => format!("{}\n{fence}", held.token),
            None => held.token.clone(),
        }
    };
    if let Err(err) = writeln!(std::io::stdout(), "{output}") {
        // A token nobody can read is a lock nobody can release: give it back.
        let _ = lock.release(&key, &held.token);
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
    let key = config.key(&args.name)?;
    let mut lock = config.redlock(reporter);
    let Some(token) = args.token.as_deref().filter(|_| !args.force) else {
        return match args.limit {
            Some(slots) => force_release_slots(&mut lock, reporter, &args.name, &key, slots),
            None => force_release(&mut lock, reporter, &args.name, &key),
        };
    };
    // A hold counts from the acquisition time the token carries: checked before anything is
    // sent, so a token that carries none is a usage error with nothing half-done.
    let hold = match args.hold_at_least {
        Some(at_least) => {
            let Some(holder) = token::holder(token) else {
                return Err(exit::usage(
                    "--hold-at-least needs a token made by `redlock acquire` (it carries the acquisition time); this one does not",
                ));
            };
            Some(Hold {
                at_least,
                acquired: Acquired::Token {
                    unix_ms: holder.acquired_unix_ms,
                },
            })
        }
        None => None,
    };
    let (done, verb) = match hold {
        Some(_) => ("kept", "released or kept"),
        None => ("deleted", "released"),
    };
    let hold = hold.map(|hold| (hold, RunEnd::Released));
    let held = held_key(&mut lock, key, args.limit, token);
    match held.and_then(|key| Ok((hold::give_back(&mut lock, &key, token, hold)?, key))) {
        Ok((gave, key)) => {
            if let GaveBack::Released(released) = &gave {
                for (server, why) in &released.failures {
                    reporter.warn(&format!(
                        "{server}: {why}; the lock there expires by its ttl"
                    ));
                }
            }
            hold::report(
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

/// The key `token` holds: `key` itself, or with `--limit` the semaphore slot it is in.
fn held_key(
    lock: &mut Redlock,
    key: String,
    limit: Option<usize>,
    token: &str,
) -> Result<String, LockError> {
    let Some(slots) = limit else {
        return Ok(key);
    };
    let semaphore = lock::semaphore::semaphore_key(&key);
    let slot = lock.find_slot(&semaphore, slots, token)?;
    Ok(lock::semaphore::slot_key(&semaphore, slot))
}

/// `release --force --limit N`: every slot of the semaphore, one after the other.
fn force_release_slots(
    lock: &mut Redlock,
    reporter: Reporter,
    name: &str,
    key: &str,
    slots: usize,
) -> anyhow::Result<Outcome> {
    let semaphore = lock::semaphore::semaphore_key(key);
    let mut last = None;
    for slot in 0..slots {
        let slot_key = lock::semaphore::slot_key(&semaphore, slot);
        match force_release(lock, reporter, name, &slot_key) {
            Ok(outcome) => last = Some(Ok(outcome)),
            Err(err) if last.is_none() => last = Some(Err(err)),
            Err(_) => {}
        }
    }
    last.unwrap_or(Ok(Outcome::Negative))
}

fn force_release(
    lock: &mut Redlock,
    reporter: Reporter,
    name: &str,
    key: &str,
) -> anyhow::Result<Outcome> {
    let states = lock.force_release(key);
    let mut removed = 0;
    let mut answered = 0;
    let mut out = std::io::stdout().lock();
    for state in &states {
        match &state.state {
            Ok(found @ (KeyState::Present { .. } | KeyState::Foreign { .. })) => {
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
        reporter.emit(&Event::Released {
            name,
            key,
            token: None,
            deleted: removed,
            servers: states.len(),
            forced: true,
        });
        Ok(Outcome::Success)
    } else if answered < lock.quorum() {
        Err(exit::fail(
            Outcome::Unavailable,
            format!(
                "cannot force-release lock '{name}': only {answered} of {} servers answered",
                states.len()
            ),
        ))
    } else {
        Err(exit::fail(
            Outcome::Negative,
            format!("lock '{name}' is not held on any server; nothing to remove"),
        ))
    }
}

pub(crate) fn extend(
    config: &Config,
    reporter: Reporter,
    args: &ExtendArgs,
) -> anyhow::Result<Outcome> {
    let key = config.key(&args.name)?;
    config.check_ttl(args.ttl)?;
    if token::holder(&args.token).is_some_and(|holder| holder.kept.is_some()) {
        // A kept lock ends when its hold does: stretching it would defeat the bound that
        // `--hold-at-least` promises (see `crate::hold`).
        return Err(exit::usage(
            "--token is the value of a lock kept by --hold-at-least, not a holder's token; a kept lock cannot be extended",
        ));
    }
    let mut lock = config.redlock(reporter);
    let held = held_key(&mut lock, key, args.limit, &args.token);
    match held.and_then(|key| Ok((lock.extend(&key, &args.token, args.ttl)?, key))) {
        Ok((held, key)) => {
            reporter.emit(&Event::Renewed {
                name: &args.name,
                key: &key,
                token: &held.token,
                ttl: held.ttl,
                validity: held.validity,
                votes: held.votes,
                servers: lock.servers().len(),
            });
            let validity_ms = held.validity.as_millis() as u64;
            let output = if args.json {
                serde_json::json!({
                    "name": args.name,
                    "key": key,
                    "token": held.token,
                    "ttl_ms": held.ttl.as_millis() as u64,
                    "validity_ms": validity_ms,
                    "votes": held.votes,
                })
                .to_string()
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
