//! `redlock exec`: take the lock, run a command while a watchdog renews it, and release it when
//! the command exits. If the lock is lost, the command is stopped before the lock's validity
//! runs out; it never runs on unprotected.
//!
//! One place decides what each event means: the loop in `supervise`. Events come from the
//! signal watcher, the watchdog and a thread that waits for the command to exit.

mod child;
mod renew;

use crate::cli::ExecArgs;
use crate::commands::{redlock, take_lock};
use crate::config::Config;
use crate::exit;
use crate::lock::{self, Holding, Redlock, Wake};
use crate::report::{self, Event as Log};
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

pub(crate) fn run(config: &Config, args: &ExecArgs) -> anyhow::Result<u8> {
    let take = &args.take;
    let key = config.key(&take.name)?;
    config.check_ttl(take.ttl)?;
    check_renewable(config, take.ttl)?;
    let mut lock = redlock(config);
    if let Some(token) = inherited_token(&mut lock, &key) {
        return Err(run_reentered(&args.command, &token));
    }

    let (wake_tx, wakes) = mpsc::channel();
    signals::watch(&signals::TERMINATING, wake_tx.clone(), Wake::Interrupted)?;
    let held = take_lock(
        &mut lock,
        &key,
        take,
        Some(&args.command.join(" ")),
        (&wake_tx, &wakes),
    )?;
    let servers = lock.servers().len();
    let lifecycle = Lifecycle {
        name: &take.name,
        key: &key,
        token: &held.token,
        servers,
    };

    let env = [
        ("REDLOCK_NAME", take.name.as_str()),
        ("REDLOCK_KEY", key.as_str()),
        ("REDLOCK_TOKEN", held.token.as_str()),
    ];
    let grace = args.kill_after.min(take.ttl / 3);
    let command = match Supervised::spawn(&args.command, &env, grace) {
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
    let renewer = redlock(config);
    let watchdog = Watchdog::start(
        renewer,
        key.clone(),
        held.clone(),
        args.kill_after,
        events,
        Event::Watchdog,
    )?;

    let running_since = BootInstant::now();
    let lost = supervise(&command, &inbox, &lifecycle);
    watchdog.stop();
    let status = command.finish();
    if let Ok(status) = &status {
        report::emit(&Log::ChildExited {
            name: &take.name,
            key: &key,
            pid: pid as u32,
            code: status.code(),
            signal: status.signal(),
            ran: running_since.elapsed(),
        });
    }
    match lock.release(&key, &held.token) {
        Ok(released) => report::emit(&Log::Released {
            name: &take.name,
            key: &key,
            token: Some(&held.token),
            deleted: released.deleted,
            servers,
            forced: false,
        }),
        // After a loss the key is someone else's or gone: nothing to report.
        Err(_) if lost.is_some() => {}
        Err(err) => report::warn(&format!(
            "could not release lock '{}': {err}; it expires by its ttl",
            take.name
        )),
    }
    if lost.is_some() {
        return Err(exit::quietly(exit::LOCK_LOST));
    }
    let status = status?;
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(signal)) => exit::for_signal(signal),
        (None, None) => exit::SOFTWARE,
    })
}

/// A renewal is due after TTL/3 and may take one `--timeout`; if it fails, the command needs up to
/// TTL/3 (the longest grace) to stop, and a retry another `--timeout`, all before the validity
/// ends. A TTL too short for that would report the lock lost at the first renewal.
fn check_renewable(config: &Config, ttl: std::time::Duration) -> anyhow::Result<()> {
    let needed = ttl / 3 * 2 + config.timeout * 2 + lock::quorum::drift(ttl);
    if needed >= ttl {
        let minimum = (config.timeout * 2 + std::time::Duration::from_millis(2)) * 3 * 100 / 97;
        return Err(crate::config::UsageError(format!(
            "--ttl {} is too short for exec with a {} per-server timeout; expected at least {} ms so renewals have time",
            humantime::format_duration(ttl),
            humantime::format_duration(config.timeout),
            minimum.as_millis() + 1
        ))
        .into());
    }
    Ok(())
}

/// What the lifecycle log says about this lock.
struct Lifecycle<'a> {
    name: &'a str,
    key: &'a str,
    token: &'a str,
    servers: usize,
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
            Event::Watchdog(Report::Renewed(held)) => report::emit(&Log::Renewed {
                name: lock.name,
                key: lock.key,
                token: lock.token,
                ttl: held.ttl,
                validity: held.validity,
                votes: held.votes,
                servers: lock.servers,
            }),
            Event::Watchdog(Report::RenewalFailed { reason, remaining }) => {
                report::emit(&Log::RenewalFailed {
                    name: lock.name,
                    key: lock.key,
                    token: lock.token,
                    reason: &reason,
                    remaining,
                });
            }
            Event::Watchdog(Report::Lost { reason, grace }) => {
                if lost.is_none() {
                    report::emit(&Log::Lost {
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
            if let Some(signal) = interrupt(wake) {
                if events.send(Event::Signal(signal)).is_err() {
                    return;
                }
            }
        }
    });
}

fn interrupt(wake: Wake) -> Option<i32> {
    match wake {
        Wake::Interrupted(signal) => Some(signal),
        Wake::Released => None,
    }
}

/// Re-entry: we run inside a command that already holds this lock (`REDLOCK_KEY` and
/// `REDLOCK_TOKEN` from an outer `redlock exec`), and the servers confirm the token holds it.
fn inherited_token(lock: &mut Redlock, key: &str) -> Option<String> {
    if std::env::var("REDLOCK_KEY").ok()? != key {
        return None;
    }
    let token = std::env::var("REDLOCK_TOKEN").ok()?;
    let (states, started) = lock.inspect(key);
    match lock::holding(&states, started) {
        Holding::Held { token: holder, .. } if holder == token => Some(token),
        _ => None,
    }
}

/// The outer `redlock exec` renews and releases; we simply become the command, so its signals
/// and exit status are exactly the command's.
fn run_reentered(argv: &[String], _token: &str) -> anyhow::Error {
    let err = std::process::Command::new(&argv[0]).args(&argv[1..]).exec();
    let code = match err.raw_os_error() {
        Some(libc::ENOENT) => exit::NOT_FOUND,
        _ => exit::CANNOT_EXECUTE,
    };
    exit::fail(code, format!("cannot run '{}': {err}", argv[0]))
}

fn spawn_failure(program: &str, err: SpawnError) -> anyhow::Error {
    match err {
        SpawnError::NotFound(err) => exit::fail(
            exit::NOT_FOUND,
            format!("command not found: '{program}' ({err}); the lock was released"),
        ),
        SpawnError::NotExecutable(err) => exit::fail(
            exit::CANNOT_EXECUTE,
            format!("cannot execute '{program}' ({err}); the lock was released"),
        ),
        SpawnError::Other(err) => exit::fail(
            exit::SOFTWARE,
            format!("cannot start '{program}' ({err}); the lock was released"),
        ),
    }
}
