//! `redlock exec`: take the lock, run a command while a watchdog renews it, and release it when
//! the command exits (or keep it for the rest of `--hold-at-least`). If the lock is lost, the
//! command is stopped before the lock's validity runs out; it never runs on unprotected, and a
//! guardian process (guardian.rs) holds that deadline too, for when redlock itself dies or is
//! paused. A command that outlives `--max-runtime` is stopped the same way. A run that did not
//! certainly hold the lock to its end exits 125 (supervise.rs).
//!
//! All of it runs on the main thread: one loop (supervise.rs) reads signals and the command's
//! exit from a signalfd and renews when a renewal is due (renew.rs). Only a `--wait` starts a
//! thread of ours, to wake the wait when a signal comes, and stops it once the lock is granted.

mod child;
mod events;
mod guardian;
mod renew;
mod supervise;

use crate::cli::ExecArgs;
use crate::config::Config;
use crate::exit::{self, Outcome};
use crate::give_back;
use crate::history;
use crate::lock::{self, Acquisition, Held, Hold, Holding, LockError, Redlock, Target};
use crate::report::{event, token_id, Reporter};
use crate::schema::ms;
use crate::take::{take_lock, WaitSignals};
use crate::token::RunEnd;
use crate::{clock::BootInstant, signals};
use child::{SpawnError, Supervised};
use events::Events;
use guardian::Guardian;
use renew::Watchdog;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use supervise::{supervise, Ended, Lifecycle, Limits};

pub(crate) fn run(config: &Config, reporter: Reporter, args: &ExecArgs) -> anyhow::Result<Outcome> {
    let take = &args.take;
    let (target, schedule) = config.take(take, Some(args.kill_after))?;
    let schedule = schedule.expect("exec's take has a renewal schedule");
    crate::config::check_hold(&target, args.hold_at_least)?;
    // Before any thread starts (the engine's), so that every thread inherits the block and the
    // signals wait, pending, for our signalfd (events.rs).
    let mask = signals::block(&events::SIGNALS)?;
    let mut events = Events::new()?;
    let mut lock = config.redlock(reporter);
    if let Some(outer_shared) = enclosing(&mut lock, &target) {
        if outer_shared && !target.is_shared() {
            // Two shared holders that both try this would each wait for the other forever.
            return Err(exit::usage(format!(
                "lock '{}' is held shared by the enclosing redlock exec; an exclusive exec inside it would wait for its own share (an upgrade, which deadlocks two holders that both try it): take it exclusively in the outer exec, or add --shared here",
                take.name
            )));
        }
        if take.fence && std::env::var_os("REDLOCK_FENCE").is_none() {
            // The outer exec holds the lock without a fence; inventing one here would not be
            // the grant's, and running without one would ignore --fence.
            return Err(exit::usage(format!(
                "lock '{}' is already held by the enclosing redlock exec, without --fence; add --fence to that one",
                take.name
            )));
        }
        // The command inherits the outer exec's REDLOCK_* variables, its fence included, and
        // our signal mask as it was.
        let _ = mask.thread_set_mask();
        return Err(run_reentered(&args.command));
    }

    // Not inherited by a re-entered command (above): it gets the action we were given.
    signals::default_sigchld()?;
    // Only a wait needs waking by a signal; one attempt is bounded by --timeout, and a signal
    // that comes meanwhile stays pending for `take_lock`'s check or the supervise loop.
    let watch = WaitSignals::start(take)?;
    // A waiting exec forks the guardian before it waits: a busy lock's hand-over then goes
    // straight from the grant to the command (the fork costs as much as the rest of a
    // hand-over's work on our side). Without a wait it is forked after the grant, for a busy
    // lock costs it nothing then. If it cannot be forked now, it is tried again after.
    let early_guardian = take
        .wait
        .and_then(|_| Guardian::start(schedule.grace()).ok());
    let asked = BootInstant::now();
    let held = take_lock(
        &mut lock,
        &target,
        take,
        Some(&args.command.join(" ")),
        &watch,
        reporter,
    )?;
    let waited = asked.elapsed();
    let retention = crate::history::retention(&args.record);
    drop(watch);
    let key = held.key.clone();
    let servers = lock.servers().len();
    let lifecycle = Lifecycle {
        name: &take.name,
        key: &key,
        token: &held.token,
        servers,
        reporter,
    };

    let fence = held.fence.map(|fence| fence.to_string());
    let slot = held.slot.map(|slot| slot.to_string());
    // An outer exec's REDLOCK_FENCE (or REDLOCK_SLOT, REDLOCK_SHARED) belongs to another lock:
    // the command must not mistake it for this lock's, so it is removed when this grant has
    // none.
    let env = [
        ("REDLOCK_NAME", Some(take.name.as_str())),
        ("REDLOCK_KEY", Some(key.as_str())),
        ("REDLOCK_TOKEN", Some(held.token.as_str())),
        ("REDLOCK_FENCE", fence.as_deref()),
        ("REDLOCK_SLOT", slot.as_deref()),
        ("REDLOCK_SHARED", target.is_shared().then_some("1")),
    ];
    let guardian = match early_guardian {
        Some(guardian) => Ok(guardian),
        None => Guardian::start(schedule.grace()).map_err(SpawnError::Other),
    };
    let command = match guardian
        .and_then(|guardian| Supervised::spawn(&args.command, &env, guardian, held.deadline()))
    {
        Ok(command) => command,
        Err(err) => {
            let err = spawn_failure(&args.command[0], err);
            let failed = history::Ended::Failed(i32::from(exit::code_of(&err).0));
            let record = history::of_exec(retention, (&target, &held), waited, failed);
            let _ = lock.release(&target, &key, &held.token, record.as_ref());
            return Err(err);
        }
    };

    let pid = command.pid();
    let running_since = BootInstant::now();
    let mut watchdog = Watchdog::new(&mut lock, (&target, &key), held.clone(), schedule);
    let ended = supervise(
        &command,
        &mut events,
        &mut watchdog,
        &lifecycle,
        limits(args, running_since),
    );
    // The guardian is told the run is over and goes while we release the lock; it is reaped
    // when we return.
    let (status, _guardian) = command.finish();
    if let Ok(status) = &status {
        reporter.emit(&event::ChildExited {
            name: &take.name,
            key: &key,
            child_pid: pid as u32,
            code: status.code(),
            signal: status.signal(),
            ran_ms: ms(running_since.elapsed()),
        });
    }
    let hold = hold_after(args, &held, &ended, status.as_ref().ok());
    let verb = if hold.is_some() { "keep" } else { "release" };
    let ended_as = ended_as(&ended, status.as_ref().ok());
    let record = history::of_exec(retention, (&target, &held), waited, ended_as);
    let mut lost = ended.lost.is_some();
    match give_back::give_back(
        &mut lock,
        (&target, &key, &held.token),
        hold,
        record.as_ref(),
    ) {
        Ok(gave) => give_back::report(reporter, (&take.name, &key, &held.token), servers, &gave),
        // After a loss the key is someone else's or gone: nothing to report.
        Err(_) if lost => {}
        // Our token was gone on a quorum by the end: the lock expired, or was deleted or taken
        // over, at some moment after the last renewal, while the command may still have run.
        // The entry the give-back just recorded could not know it; a newer one says so.
        Err(LockError::NotHeld { .. }) => {
            lost = true;
            reporter.emit(&event::Lost {
                name: &take.name,
                key: &key,
                token_id: token_id(&held.token),
                reason: "the token was gone from a quorum of servers when the command ended: the lock expired, or was deleted or taken over, while it ran",
            });
            let lost = history::of_exec(retention, (&target, &held), waited, history::Ended::Lost);
            if let Some(record) = lost {
                lock.record(&target, &record);
            }
        }
        Err(err) => reporter.warn(&format!(
            "could not {verb} lock '{}': {err}; it expires by its ttl",
            take.name
        )),
    }
    if lost {
        return Ok(Outcome::LockLost);
    }
    if ended.timed_out {
        return Ok(Outcome::TimedOut);
    }
    let status = status?;
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => Outcome::CommandExited(code as u8),
        (None, Some(signal)) => Outcome::Signal(signal),
        (None, None) => Outcome::Software,
    })
}

/// The rest of `--hold-at-least` to keep the lock for, now that the command has ended. The run
/// happened, whatever its status (or a signal to us). Not after a loss: the key is someone
/// else's or gone.
fn hold_after(
    args: &ExecArgs,
    held: &Held,
    ended: &Ended,
    status: Option<&std::process::ExitStatus>,
) -> Option<(Hold, RunEnd)> {
    let at_least = args.hold_at_least.filter(|_| ended.lost.is_none())?;
    let last = ended.renewed.as_ref().unwrap_or(held);
    let hold = Hold {
        at_least,
        acquired: Acquisition::Here {
            started: held.since,
            confirmed: last.since,
            ttl: last.ttl,
        },
    };
    Some((hold, run_end(status?, ended.timed_out)))
}

/// How the command's run ended, as a kept lock records it.
fn run_end(status: &std::process::ExitStatus, timed_out: bool) -> RunEnd {
    match (timed_out, status.code(), status.signal()) {
        (true, _, _) => RunEnd::TimedOut,
        (false, Some(code), _) => RunEnd::Exited(code),
        (false, None, Some(signal)) => RunEnd::Signal(signal),
        (false, None, None) => RunEnd::Exited(-1),
    }
}

/// How the run ended, as its history entry says: a loss or a stop by `--max-runtime` first
/// (the command's status then only says how it took being stopped), then a signal we passed on,
/// then the command's own status.
fn ended_as(ended: &Ended, status: Option<&std::process::ExitStatus>) -> history::Ended {
    if ended.lost.is_some() {
        return history::Ended::Lost;
    }
    if ended.timed_out {
        return history::Ended::MaxRuntime;
    }
    if let Some(signal) = ended.interrupted {
        return history::Ended::Interrupted(signal);
    }
    match status.map(|status| (status.code(), status.signal())) {
        Some((Some(0), _)) => history::Ended::Ok,
        Some((Some(code), _)) => history::Ended::Failed(code),
        Some((None, Some(signal))) => history::Ended::Signal(signal),
        // What exec then exits with (an internal error).
        _ => history::Ended::Failed(i32::from(Outcome::Software.code())),
    }
}

fn limits(args: &ExecArgs, running_since: BootInstant) -> Limits {
    Limits {
        stop_at: args.max_runtime.map(|max| running_since.add(max)),
        max_runtime: args.max_runtime.unwrap_or_default(),
        kill_after: args.kill_after,
    }
}

/// Re-entry: we run inside a command that already holds this lock (`REDLOCK_KEY` and
/// `REDLOCK_TOKEN` from an outer `redlock exec`, a key of this target: the lock's, or one of
/// this semaphore's slots), and the servers confirm the token holds it. `Some(true)` when the
/// outer exec holds it shared, `Some(false)` when exclusively.
fn enclosing(lock: &mut Redlock, target: &Target) -> Option<bool> {
    let inherited = |name| std::env::var(name).ok();
    let (outer_key, token) = (inherited("REDLOCK_KEY")?, inherited("REDLOCK_TOKEN")?);
    let index = target.index_of(&outer_key)?;
    let inspection = lock.inspect(target);
    match lock::holding(&inspection.keys[index], inspection.started) {
        Holding::Held { token: holder, .. } if holder == token => Some(false),
        Holding::Shared { readers, .. } if readers.iter().any(|r| r.token == token) => Some(true),
        _ => None,
    }
}

/// The outer `redlock exec` renews and releases; we simply become the command, so its signals
/// and exit status are exactly the command's.
fn run_reentered(argv: &[String]) -> anyhow::Error {
    let err = std::process::Command::new(&argv[0]).args(&argv[1..]).exec();
    let code = match err.raw_os_error() {
        Some(libc::ENOENT) => Outcome::NotFound,
        _ => Outcome::CannotExecute,
    };
    exit::fail(code, format!("cannot run '{}': {err}", argv[0]))
}

fn spawn_failure(program: &str, err: SpawnError) -> anyhow::Error {
    match err {
        SpawnError::NotFound(err) => exit::fail(
            Outcome::NotFound,
            format!("command not found: '{program}' ({err}); the lock was released"),
        ),
        SpawnError::NotExecutable(err) => exit::fail(
            Outcome::CannotExecute,
            format!("cannot execute '{program}' ({err}); the lock was released"),
        ),
        SpawnError::Other(err) => exit::fail(
            Outcome::Software,
            format!("cannot start '{program}' ({err}); the lock was released"),
        ),
    }
}
