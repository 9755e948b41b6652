//! `redlock exec`: take the lock, run a command while a watchdog renews it, and release it when
//! the command exits. If the lock is lost, the command is stopped before the lock's validity
//! runs out; it never runs on unprotected.
//!
//! One place decides what each event means: the loop in `supervise`. Events come from the
//! signal watcher, the watchdog and a thread that waits for the command to exit.

mod child;
mod renew;
mod schedule;

use crate::cli::ExecArgs;
use crate::config::Config;
use crate::exit::{self, Outcome};
use crate::lock::{self, Holding, Redlock, Wake};
use crate::report::{Event as Log, Reporter};
use crate::take::take_lock;
use crate::{clock::BootInstant, signals};
use child::{SpawnError, Supervised};
use renew::{Report, Watchdog};
use schedule::Schedule;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::sync::mpsc;

enum Event {
    Signal(i32),
    Watchdog(Report),
    CommandExited,
}

pub(crate) fn run(config: &Config, reporter: Reporter, args: &ExecArgs) -> anyhow::Result<Outcome> {
    let take = &args.take;
    let key = crate::take::target_key(config, take)?;
    config.check_ttl(take.ttl)?;
    let schedule = Schedule {
        ttl: take.ttl,
        timeout: config.timeout,
        kill_after: args.kill_after,
    };
    check_renewable(&schedule)?;
    let mut lock = config.redlock(reporter);
    if is_reentry(&mut lock, &reentry_key(&key, take.limit)) {
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
        &key,
        take,
        Some(&args.command.join(" ")),
        (&wake_tx, &wakes),
        reporter,
    )?;
    let key = held.key_in(&key);
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
    // An outer exec's REDLOCK_FENCE belongs to another lock: the command must not mistake it
    // for this lock's, so it is removed when this grant has none.
    let env = [
        ("REDLOCK_NAME", Some(take.name.as_str())),
        ("REDLOCK_KEY", Some(key.as_str())),
        ("REDLOCK_TOKEN", Some(held.token.as_str())),
        ("REDLOCK_FENCE", fence.as_deref()),
        ("REDLOCK_SLOT", slot.as_deref()),
    ];
    let command = match Supervised::spawn(&args.command, &env, schedule.grace()) {
        Ok(command) => command,
        Err(err) => {
            let _ = lock.release(&key, &held.token);
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
        key.clone(),
        held.clone(),
        schedule,
        events,
        Event::Watchdog,
    )?;

    let running_since = BootInstant::now();
    let lost = supervise(&command, &inbox, &lifecycle);
    watchdog.stop();
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
    match lock.release(&key, &held.token) {
        Ok(released) => reporter.emit(&Log::Released {
            name: &take.name,
            key: &key,
            token: Some(&held.token),
            deleted: released.deleted,
            servers,
            forced: false,
        }),
        // After a loss the key is someone else's or gone: nothing to report.
        Err(_) if lost.is_some() => {}
        Err(err) => reporter.warn(&format!(
            "could not release lock '{}': {err}; it expires by its ttl",
            take.name
        )),
    }
    if lost.is_some() {
        return Ok(Outcome::LockLost);
    }
    let status = status?;
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => Outcome::CommandExited(code as u8),
        (None, Some(signal)) => Outcome::Signal(signal),
        (None, None) => Outcome::Software,
    })
}

/// A TTL too short for the renewal schedule would report the lock lost at the first renewal.
fn check_renewable(schedule: &Schedule) -> anyhow::Result<()> {
    if !schedule.is_workable() {
        return Err(exit::usage(format!(
            "--ttl {} is too short for exec with a {} per-server timeout; expected at least {} ms so renewals have time",
            humantime::format_duration(schedule.ttl),
            humantime::format_duration(schedule.timeout),
            Schedule::minimum_ttl(schedule.timeout).as_millis()
        )));
    }
    Ok(())
}

/// What the lifecycle log says about this lock.
struct Lifecycle<'a> {
    name: &'a str,
    key: &'a str,
    token: &'a str,
    servers: usize,
    reporter: Reporter,
}

/// Waits for the command to exit, forwarding signals and stopping it if the lock is lost.
/// Returns the reason the lock was lost, if it was.
fn supervise(
    command: &Supervised,
    inbox: &mpsc::Receiver<Event>,
    lock: &Lifecycle<'_>,
) -> Option<String> {
    let mut lost = None;
    let mut kill_at: Option<BootInstant> = None;
    loop {
        let event = match kill_at {
            Some(at) => match inbox.recv_timeout(at.remaining()) {
                Ok(event) => event,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    command.signal_group(libc::SIGKILL);
                    kill_at = None;
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return lost,
            },
            None => match inbox.recv() {
                Ok(event) => event,
                Err(_) => return lost,
            },
        };
        match event {
            Event::CommandExited => return lost,
            Event::Signal(signal) => command.signal_group(signal),
            Event::Watchdog(Report::Renewed(held)) => lock.reporter.emit(&Log::Renewed {
                name: lock.name,
                key: lock.key,
                token: lock.token,
                ttl: held.ttl,
                validity: held.validity,
                votes: held.votes,
                servers: lock.servers,
            }),
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
                if lost.is_none() {
                    lock.reporter.emit(&Log::Lost {
                        name: lock.name,
                        key: lock.key,
                        token: lock.token,
                        reason: &format!("{reason}; stopping the command"),
                    });
                    command.signal_group(libc::SIGTERM);
                    // A stopped (SIGSTOP) command must wake up to act on SIGTERM.
                    command.signal_group(libc::SIGCONT);
                    kill_at = Some(BootInstant::now().add(grace));
                    lost = Some(reason);
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

/// The key an enclosing exec of the same lock would hold: the lock's own, or for a semaphore
/// the slot named in the inherited `REDLOCK_KEY`, if it is one of this semaphore's.
fn reentry_key(key: &str, limit: Option<usize>) -> String {
    let Some(limit) = limit else {
        return key.to_string();
    };
    let outer = std::env::var("REDLOCK_KEY").unwrap_or_default();
    match lock::semaphore::split_slot_key(&outer) {
        Some((semaphore, slot)) if semaphore == key && slot < limit => outer,
        _ => key.to_string(),
    }
}

/// Re-entry: we run inside a command that already holds this lock (`REDLOCK_KEY` and
/// `REDLOCK_TOKEN` from an outer `redlock exec`), and the servers confirm the token holds it.
fn is_reentry(lock: &mut Redlock, key: &str) -> bool {
    let inherited = |name| std::env::var(name).ok();
    let (Some(outer_key), Some(token)) = (inherited("REDLOCK_KEY"), inherited("REDLOCK_TOKEN"))
    else {
        return false;
    };
    if outer_key != key {
        return false;
    }
    let (states, started) = lock.inspect(key);
    matches!(lock::holding(&states, started), Holding::Held { token: holder, .. } if holder == token)
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
