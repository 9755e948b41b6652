//! `redlock status`: who holds a lock on each server, the quorum's verdict, and who waits for
//! it; or, without a name, every lock under the prefix. A table for people, `--json` for
//! programs. Passwords never appear: servers are shown by their redacted URL.
//!
//! A name is a mutex, a semaphore (its limit key says so, and how many slots it has), or both
//! at once: `status NAME` shows whichever holds it, both when both do, with a warning, since the
//! two do not exclude each other.
//!
//! - lock.rs: one mutex; semaphore.rs: one semaphore, slot by slot; list.rs: every lock.
//! - latch.rs: one latch, and the latches listed after the locks; latch_json.rs: every latch
//!   verb's JSON.
//! - shown.rs: one mutex or semaphore as shown, and how it is printed.
//! - text.rs and json.rs: how a verdict, a server's view, a holder and a waiter are shown.
//! - watch.rs: `--watch`, the same status again and again over the same connections.

mod json;
pub(crate) mod latch;
pub(crate) mod latch_json;
mod list;
mod lock;
mod semaphore;
mod shown;
mod text;
mod watch;

use crate::cli::StatusArgs;
use crate::config::{self, Config};
use crate::exit::Outcome;
use crate::lock::{Limit, Redlock, Target};
use crate::report::Reporter;
use json::Document;
pub(crate) use json::{LockDocument, SemaphoreDocument};
pub(crate) use list::ListDocument;
use shown::{show, Shown};
pub(crate) use text::{align, print};

pub(crate) fn run(
    config: &Config,
    reporter: Reporter,
    args: &StatusArgs,
) -> anyhow::Result<Outcome> {
    if let Some(every) = args.watch {
        return watch::run(config, reporter, args, every);
    }
    let mut engine = config.redlock(reporter);
    once(config, reporter, &mut engine, args)
}

/// One `status`, printed, over `engine`'s connections: what `--watch` repeats.
fn once(
    config: &Config,
    reporter: Reporter,
    engine: &mut Redlock,
    args: &StatusArgs,
) -> anyhow::Result<Outcome> {
    let Some(name) = &args.name else {
        return list::all(config, reporter, engine, args);
    };
    let target = config.target(name, args.limit, false, args.shared)?;
    let inspection = engine.inspect(&target);
    if let Some(slots) = target.limit() {
        if let Some(found) = inspection.limit.other_than(slots) {
            return Err(config::limit_mismatch(name, Some(slots), found));
        }
        return show(semaphore::report(engine, &target, inspection), args.json);
    }
    let slots = match &inspection.limit {
        Limit::Absent => None,
        Limit::Slots(slots) => Some(*slots),
        Limit::Disagree(found) => {
            reporter.warn(&format!(
                "the servers disagree on how many slots the semaphore '{name}' has ({}); showing the most",
                found.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
            ));
            found.iter().copied().max()
        }
    };
    let Some(slots) = slots else {
        return show(lock::report(engine, &target, &inspection), args.json);
    };
    let semaphore = semaphore_of(config, engine, &target, slots)?;
    if lock::is_absent(&inspection) {
        return show(semaphore, args.json);
    }
    let mut mutex = lock::report(engine, &target, &inspection);
    if mutex.held() && semaphore.held() {
        reporter.warn(&format!(
            "'{name}' is held both as a lock and as a semaphore of {slots} slots, which do not exclude each other; use one or the other"
        ));
    }
    let outcome = match (&mutex.outcome, &semaphore.outcome) {
        (Ok(Outcome::Success), _) | (_, Ok(Outcome::Success)) => Ok(Outcome::Success),
        _ => mutex.outcome,
    };
    mutex.text = format!("{}\n\n{}", mutex.text.trim_end(), semaphore.text);
    if let (Document::Lock(lock), Document::Semaphore(both)) = (&mut mutex.json, semaphore.json) {
        lock.semaphore = Some(both);
    }
    show(Shown { outcome, ..mutex }, args.json)
}

/// The semaphore of `target`'s name, of `slots` slots, inspected and shown.
fn semaphore_of(
    config: &Config,
    engine: &mut Redlock,
    target: &Target,
    slots: usize,
) -> anyhow::Result<Shown> {
    let semaphore = config.target(&target.name, Some(slots), false, false)?;
    let inspection = engine.inspect(&semaphore);
    Ok(semaphore::report(engine, &semaphore, inspection))
}
