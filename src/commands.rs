//! The one-shot subcommands (acquire, release, extend) and the dispatch to the others.

use crate::cli::{AcquireArgs, Cli, Command, ExtendArgs, OutputArgs, ReleaseArgs, TakeArgs};
use crate::config::Config;
use crate::exit;
use crate::lock::{self, KeyState, LockError, Redlock, RetryPolicy, Waiting, Wake};
use crate::progress::WaitLine;
use crate::report::{self, Event, Level, Reporter};
use crate::{signals, token};
use std::io::Write;
use std::sync::mpsc;

pub(crate) fn run(cli: Cli) -> anyhow::Result<u8> {
    report::init(reporter(&cli.output));
    if let Command::Generate(args) = &cli.command {
        return crate::generate::run(args);
    }
    let config = Config::from_args(&cli.servers)?;
    for warning in &config.warnings {
        report::warn(warning);
    }
    match cli.command {
        Command::Acquire(args) => acquire(&config, &args),
        Command::Release(args) => release(&config, &args),
        Command::Extend(args) => extend(&config, &args),
        Command::Status(args) => crate::status::run(&config, &args),
        Command::Exec(args) => crate::exec::run(&config, &args),
        Command::Generate(args) => crate::generate::run(&args),
    }
}

fn reporter(output: &OutputArgs) -> Reporter {
    let level = if output.quiet {
        Level::Quiet
    } else if output.verbose {
        Level::Verbose
    } else {
        Level::Normal
    };
    Reporter {
        level,
        format: output.log_format,
    }
}

/// The engine over the configured servers; with `-v`, every round it makes is reported.
pub(crate) fn redlock(config: &Config) -> Redlock {
    let mut lock = Redlock::new(config.servers.clone(), config.timeout);
    let reporter = report::get();
    if reporter.level == Level::Verbose {
        lock.set_observer(Box::new(move |round| reporter.round(round)));
    }
    lock
}

fn acquire(config: &Config, args: &AcquireArgs) -> anyhow::Result<u8> {
    let take = &args.take;
    let key = config.key(&take.name)?;
    config.check_ttl(take.ttl)?;
    let (wake_tx, wakes) = mpsc::channel();
    if take.wait.is_some() {
        signals::watch(&signals::TERMINATING, wake_tx.clone(), Wake::Interrupted)?;
    } else {
        // One attempt never pauses, so nothing needs waking: blocking the signals is enough to
        // finish the attempt and then act on them, and saves starting a thread.
        signals::block(&signals::TERMINATING)?;
    }
    let mut lock = redlock(config);
    let held = take_lock(&mut lock, &key, take, None, (&wake_tx, &wakes))?;
    let output = if args.json {
        serde_json::json!({
            "name": take.name,
            "key": key,
            "token": held.token,
            "ttl_ms": held.ttl.as_millis() as u64,
            "validity_ms": held.validity.as_millis() as u64,
            "servers": lock.servers().len(),
            "votes": held.votes,
        })
        .to_string()
    } else {
        held.token.clone()
    };
    if let Err(err) = writeln!(std::io::stdout(), "{output}") {
        // A token nobody can read is a lock nobody can release: give it back.
        let _ = lock.release(&key, &held.token);
        return Err(exit::fail(
            exit::SOFTWARE,
            format!("cannot print the token ({err}); the lock was released"),
        ));
    }
    Ok(exit::SUCCESS)
}

/// Acquires as `acquire` and `exec` both do, turning refusals into exit statuses. Signals and
/// release notifications arrive on `wakes`; `notify` is its sending side, for the subscriptions.
pub(crate) fn take_lock(
    lock: &mut Redlock,
    key: &str,
    take: &TakeArgs,
    command: Option<&str>,
    (notify, wakes): (&mpsc::Sender<Wake>, &mpsc::Receiver<Wake>),
) -> anyhow::Result<lock::Held> {
    // The live line is for people at a terminal: not with -q, nor among JSON log lines.
    let reporter = report::get();
    let wants_line = reporter.level != Level::Quiet && reporter.format == report::Format::Text;
    let mut line = take
        .wait
        .filter(|_| wants_line)
        .and_then(|_| WaitLine::on_terminal(&take.name));
    let mut show = |progress: &lock::WaitProgress| {
        if let Some(line) = line.as_mut() {
            line.show(progress);
        }
    };
    let waiting = Waiting {
        wait: take.wait,
        retry: RetryPolicy {
            delay: take.retry_delay,
        },
        wakes: Some(wakes),
        // Release notifications join the channel the signals arrive on.
        notify: take.wait.map(|_| notify.clone()),
        progress: Some(&mut show),
    };
    let started = crate::clock::BootInstant::now();
    let mut new_token = || token::new_token(command);
    let result = lock.acquire(key, take.ttl, waiting, &mut new_token);
    if let Some(line) = line.as_mut() {
        line.clear();
    }
    let held = result?.map_err(|err| refusal(&take.name, take, err))?;
    let interrupted =
        pending_interrupt(wakes).or_else(|| signals::take_pending(&signals::TERMINATING));
    if let Some(signal) = interrupted {
        // Asked to stop while the last attempt succeeded: nobody will learn the token (or run
        // the command), so give the lock back rather than leave it to expire.
        let _ = lock.release(key, &held.token);
        return Err(exit::quietly(exit::for_signal(signal)));
    }
    report::emit(&Event::Acquired {
        name: &take.name,
        key,
        token: &held.token,
        ttl: held.ttl,
        validity: held.validity,
        votes: held.votes,
        servers: lock.servers().len(),
        waited: started.elapsed(),
    });
    Ok(held)
}

fn refusal(name: &str, take: &TakeArgs, err: LockError) -> anyhow::Error {
    let waited = match take.wait {
        Some(wait) if !wait.is_zero() => {
            format!(" after waiting {}", humantime::format_duration(wait))
        }
        _ => String::new(),
    };
    match err {
        LockError::Busy { .. } => exit::fail(
            take.conflict_exit_code.unwrap_or(exit::BUSY),
            format!("lock '{name}' is busy{waited}: {err}"),
        ),
        LockError::Unavailable { .. } => exit::fail(
            exit::UNAVAILABLE,
            format!("cannot acquire lock '{name}'{waited}: {err}"),
        ),
        LockError::Interrupted(signal) => exit::fail(
            exit::for_signal(signal),
            format!("stopped by signal {signal} while waiting for lock '{name}'; nothing is held"),
        ),
        LockError::NotHeld => exit::fail(exit::SOFTWARE, format!("lock '{name}': {err}")),
    }
}

fn pending_interrupt(wakes: &mpsc::Receiver<Wake>) -> Option<i32> {
    wakes.try_iter().find_map(|wake| match wake {
        Wake::Interrupted(signal) => Some(signal),
        Wake::Released => None,
    })
}

fn release(config: &Config, args: &ReleaseArgs) -> anyhow::Result<u8> {
    let key = config.key(&args.name)?;
    let mut lock = redlock(config);
    let Some(token) = args.token.as_deref().filter(|_| !args.force) else {
        return force_release(&mut lock, &args.name, &key);
    };
    if token.is_empty() {
        return Err(crate::config::UsageError(
            "empty --token; expected the token `redlock acquire` printed".into(),
        )
        .into());
    }
    match lock.release(&key, token) {
        Ok(released) => {
            for (server, why) in &released.failures {
                report::warn(&format!(
                    "{server}: {why}; the lock there expires by its ttl"
                ));
            }
            report::emit(&Event::Released {
                name: &args.name,
                key: &key,
                token: Some(token),
                deleted: released.deleted,
                servers: lock.servers().len(),
                forced: false,
            });
            Ok(exit::SUCCESS)
        }
        Err(LockError::NotHeld) => Err(exit::fail(
            exit::NEGATIVE,
            format!(
                "lock '{}' is not held by this token (it expired, was released, or is held by someone else)",
                args.name
            ),
        )),
        Err(err) => Err(exit::fail(
            exit::UNAVAILABLE,
            format!("cannot tell whether lock '{}' was released: {err}", args.name),
        )),
    }
}

fn force_release(lock: &mut Redlock, name: &str, key: &str) -> anyhow::Result<u8> {
    let states = lock.force_release(key);
    let mut removed = 0;
    let mut answered = 0;
    let mut out = std::io::stdout().lock();
    for state in &states {
        match &state.state {
            Ok(KeyState::Present { token, .. }) => {
                removed += 1;
                answered += 1;
                let holder = token
                    .as_deref()
                    .map_or_else(|| "a non-string value".to_string(), lock::describe_token);
                let _ = writeln!(out, "removed {key} on {} (held by {holder})", state.server);
            }
            Ok(KeyState::Absent) => answered += 1,
            Err(why) => report::warn(&format!("{}: {why}", state.server)),
        }
    }
    if removed > 0 {
        report::emit(&Event::Released {
            name,
            key,
            token: None,
            deleted: removed,
            servers: states.len(),
            forced: true,
        });
        Ok(exit::SUCCESS)
    } else if answered < lock.quorum() {
        Err(exit::fail(
            exit::UNAVAILABLE,
            format!(
                "cannot force-release lock '{name}': only {answered} of {} servers answered",
                states.len()
            ),
        ))
    } else {
        Err(exit::fail(
            exit::NEGATIVE,
            format!("lock '{name}' is not held on any server; nothing to remove"),
        ))
    }
}

fn extend(config: &Config, args: &ExtendArgs) -> anyhow::Result<u8> {
    let key = config.key(&args.name)?;
    config.check_ttl(args.ttl)?;
    let mut lock = redlock(config);
    match lock.extend(&key, &args.token, args.ttl) {
        Ok(held) => {
            report::emit(&Event::Renewed {
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
            Ok(exit::SUCCESS)
        }
        Err(LockError::NotHeld) => Err(exit::fail(
            exit::NEGATIVE,
            format!(
                "lock '{}' is not held by this token; nothing was extended",
                args.name
            ),
        )),
        Err(err) => Err(exit::fail(
            exit::UNAVAILABLE,
            format!("cannot extend lock '{}': {err}", args.name),
        )),
    }
}
