//! `redlock exec`: take the lock, run a command while a watchdog renews it, and release it when
//! the command exits (or keep it for the rest of `--hold-at-least`). If the lock is lost, the
//! command is stopped before the lock's validity runs out; it never runs on unprotected. A
//! command that outlives `--max-runtime` is stopped the same way.
//!
//! One place decides what each event means: the loop in `supervise`. Events come from the
//! signal watcher, the watchdog and a thread that waits for the command to exit; the deadlines
//! (`--max-runtime`, then SIGKILL after `--kill-after`) are its timeouts.

mod child;
mod renew;

use crate::cli::ExecArgs;
use crate::config::Config;
use crate::exit::{self, Outcome};
use crate::hold::{self, Acquired, Hold};
use crate::lock::{self, Held, Holding, Redlock, Target, Wake};
use crate::report::{Event as Log, Reporter};
use crate::take::take_lock;
use crate::token::RunEnd;
use crate::{clock::BootInstant, signals};
use child::{SpawnError, Supervised};
use renew::{Report, Watchdog};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::sync::mpsc;

enum Event {
    Signal(i32),
    Watchdog(Report),
    CommandExited,
}

pub(crate) fn run(config: &Config, reporter: Reporter, args: &ExecArgs) -> anyhow::Result<Outcome> {
    let take = &args.take;
    let (target, schedule) = config.take(take, Some(args.kill_after))?;
    let schedule = schedule.expect("exec's take has a renewal schedule");
    crate::config::check_hold(&target, args.hold_at_least)?;
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
        // The command inherits the outer exec's REDLOCK_* variables, its fence included.
        return Err(run_reentered(&args.command));
    }

    let (wake_tx, wakes) = mpsc::channel();
    signals::watch(&signals::TERMINATING, wake_tx.clone(), Wake::Interrupted)?;
    let held = take_lock(
        &mut lock,
        &target,
        take,
        Some(&args.command.join(" ")),
        (&wake_tx, &wakes),
        reporter,
    )?;
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
    let command = match Supervised::spawn(&args.command, &env, schedule.grace()) {
        Ok(command) => command,
        Err(err) => {
            let _ = lock.release(&target, &key, &held.token);
            return Err(spawn_failure(&args.command[0], err));
        }
    };

    let (events, inbox) = mpsc::channel();
    forward_signals(wakes, events.clone());
    let pid = command.pid();
    let exited = events.clone();
    std::thread::spawn(move || {
        child::wait_for_exit(pid);
        let _ = exited.send(Event::CommandExited);
    });
    // The watchdog has its own connections: a renewal never waits behind anything else.
    let renewer = config.redlock(reporter);
    let watchdog = Watchdog::start(
        renewer,
        (target.clone(), key.clone()),
        held.clone(),
        schedule,
        events,
        Event::Watchdog,
    )?;

    let running_since = BootInstant::now();
    let mut ended = supervise(&command, &inbox, &lifecycle, limits(args, running_since));
    watchdog.stop();
    // A renewal that finished while the command was exiting still tells the hold what the
    // servers' TTL is.
    for event in inbox.try_iter() {
        if let Event::Watchdog(Report::Renewed(renewed)) = event {
            ended.renewed = Some(renewed);
        }
    }
    let status = command.finish();
    if let Ok(status) = &status {
        reporter.emit(&Log::ChildExited {
            name: &take.name,
            key: &key,
            pid: pid as u32,
            code: status.code(),
            signal: status.signal(),
            ran: running_since.elapsed(),
        });
    }
    let hold = hold_after(args, &held, &ended, status.as_ref().ok());
    let verb = if hold.is_some() { "keep" } else { "release" };
    match hold::give_back(&mut lock, &target, &key, &held.token, hold) {
        Ok(gave) => hold::report(reporter, (&take.name, &key, &held.token), servers, &gave),
        // After a loss the key is someone else's or gone: nothing to report.
        Err(_) if ended.lost.is_some() => {}
        Err(err) => reporter.warn(&format!(
            "could not {verb} lock '{}': {err}; it expires by its ttl",
            take.name
        )),
    }
    if ended.lost.is_some() {
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
        acquired: Acquired::Here {
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

/// When the command must be stopped (`--max-runtime`), and how long it then gets to stop.
struct Limits {
    stop_at: Option<BootInstant>,
    max_runtime: std::time::Duration,
    kill_after: std::time::Duration,
}

fn limits(args: &ExecArgs, running_since: BootInstant) -> Limits {
    Limits {
        stop_at: args.max_runtime.map(|max| running_since.add(max)),
        max_runtime: args.max_runtime.unwrap_or_default(),
        kill_after: args.kill_after,
    }
}

/// What the lifecycle log says about this lock.
struct Lifecycle<'a> {
    name: &'a str,
    key: &'a str,
    token: &'a str,
    servers: usize,
    reporter: Reporter,
}

/// How the command's supervision ended.
#[derive(Default)]
struct Ended {
    /// Why the lock was lost, if it was.
    lost: Option<String>,
    /// The command outlived `--max-runtime` and was stopped.
    timed_out: bool,
    /// The last renewal, if any.
    renewed: Option<Held>,
}

/// Waits for the command to exit, forwarding signals and stopping it if the lock is lost or it
/// outlives `--max-runtime`.
fn supervise(
    command: &Supervised,
    inbox: &mpsc::Receiver<Event>,
    lock: &Lifecycle<'_>,
    mut limits: Limits,
) -> Ended {
    let mut ended = Ended::default();
    let mut kill_at: Option<BootInstant> = None;
    // Stops the command as a lost lock does; SIGKILL follows `grace` later, or sooner if a stop
    // is already under way.
    let stop = |kill_at: &mut Option<BootInstant>, grace| {
        command.signal_group(libc::SIGTERM);
        // A stopped (SIGSTOP) command must wake up to act on SIGTERM.
        command.signal_group(libc::SIGCONT);
        let at = BootInstant::now().add(grace);
        *kill_at = Some(kill_at.map_or(at, |earlier: BootInstant| earlier.min(at)));
    };
    loop {
        let event = match kill_at.into_iter().chain(limits.stop_at).min() {
            Some(at) => match inbox.recv_timeout(at.remaining()) {
                Ok(event) => event,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if kill_at.is_some_and(BootInstant::has_passed) {
                        command.signal_group(libc::SIGKILL);
                        kill_at = None;
                    }
                    if limits.stop_at.is_some_and(BootInstant::has_passed) {
                        limits.stop_at = None;
                        ended.timed_out = true;
                        lock.reporter.emit(&Log::TimedOut {
                            name: lock.name,
                            key: lock.key,
                            pid: command.pid() as u32,
                            max_runtime: limits.max_runtime,
                        });
                        stop(&mut kill_at, limits.kill_after);
                    }
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return ended,
            },
            None => match inbox.recv() {
                Ok(event) => event,
                Err(_) => return ended,
            },
        };
        match event {
            Event::CommandExited => return ended,
            Event::Signal(signal) => command.signal_group(signal),
            Event::Watchdog(Report::Renewed(held)) => {
                lock.reporter.emit(&Log::Renewed {
                    name: lock.name,
                    key: lock.key,
                    token: lock.token,
                    ttl: held.ttl,
                    validity: held.validity,
                    votes: held.votes,
                    servers: lock.servers,
                });
                ended.renewed = Some(held);
            }
            Event::Watchdog(Report::RenewalFailed { reason, remaining }) => {
                lock.reporter.emit(&Log::RenewalFailed {
                    name: lock.name,
                    key: lock.key,
                    token: lock.token,
                    reason: &reason,
                    remaining,
                });
            }
            Event::Watchdog(Report::Lost { reason, grace }) => {
                if ended.lost.is_none() {
                    lock.reporter.emit(&Log::Lost {
                        name: lock.name,
                        key: lock.key,
                        token: lock.token,
                        reason: &format!("{reason}; stopping the command"),
                    });
                    stop(&mut kill_at, grace);
                    ended.lost = Some(reason);
                }
            }
        }
    }
}

fn forward_signals(wakes: mpsc::Receiver<Wake>, events: mpsc::Sender<Event>) {
    std::thread::spawn(move || {
        for wake in wakes {
            if let Some(signal) = wake.signal() {
                if events.send(Event::Signal(signal)).is_err() {
                    return;
                }
            }
        }
    });
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
