//! `redlock status`: who holds a lock on each server, the quorum's verdict, and who waits for
//! it; or, without a name, every lock under the prefix. A table for people, `--json` for
//! programs. Passwords never appear: servers are shown by their redacted URL.
//!
//! - lock.rs: one mutex; semaphore.rs: one semaphore, slot by slot; list.rs: every lock.
//! - latch.rs: one latch, the latches listed after the locks, and every latch verb's JSON.
//! - text.rs and json.rs: how a verdict, a server's view, a holder and a waiter are shown.

mod json;
pub(crate) mod latch;
mod list;
mod lock;
mod semaphore;
mod text;

use crate::cli::StatusArgs;
use crate::config::Config;
use crate::exit::Outcome;
use crate::lock::Kind;
use crate::report::Reporter;

pub(crate) fn run(
    config: &Config,
    reporter: Reporter,
    args: &StatusArgs,
) -> anyhow::Result<Outcome> {
    let mut engine = config.redlock(reporter);
    let Some(name) = &args.name else {
        return list::all(config, &mut engine, args.json);
    };
    let target = config.target(name, args.limit, false, args.shared)?;
    match target.kind {
        Kind::Mutex | Kind::Shared => lock::one(&mut engine, &target, args.json),
        Kind::Semaphore { .. } => semaphore::one(&mut engine, &target, args.json),
    }
}
