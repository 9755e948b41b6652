//! Taking a lock as `acquire` and `exec` both do: the attempt (or the wait, with its live line
//! and release notifications), the refusals turned into outcomes, and the checks after a grant.

use crate::cli::TakeArgs;
use crate::exit::{self, Outcome};
use crate::lock::{self, Interrupt, LockError, Redlock, Target, Waiting, Wake};
use crate::progress::WaitLine;
use crate::report::{self, event, token_id, Level, Reporter};
use crate::retry::Retry;
use crate::schema::ms;
use crate::{signals, token};
use nix::sys::signalfd::SignalFd;
use std::os::fd::AsFd;

/// How a wait hears the signals that stop it (`signals::TERMINATING`, blocked from here on):
/// none without a wait (one attempt never pauses: a signal stays pending for the check after
/// it); from a signalfd it polls beside its connections (`Nodes::listen`).
pub(crate) enum WaitSignals {
    None,
    Polled(SignalFd),
}

impl WaitSignals {
    pub(crate) fn start(take: &TakeArgs) -> std::io::Result<WaitSignals> {
        signals::block(&signals::TERMINATING)?;
        if take.wait.is_none() {
            return Ok(WaitSignals::None);
        }
        Ok(WaitSignals::Polled(signals::signal_fd(
            &signals::TERMINATING,
        )?))
    }
}

/// Acquires `target` (what `take` asks for, checked by `config`), turning refusals into
/// outcomes. Signals arrive on the signalfd of `watching`, release notifications on the
/// connections the attempts use. `command` is what `exec` runs, recorded in the token for
/// `status` to show.
pub(crate) fn take_lock(
    lock: &mut Redlock,
    target: &Target,
    take: &TakeArgs,
    command: Option<&str>,
    watching: &WaitSignals,
    reporter: Reporter,
) -> anyhow::Result<lock::Held> {
    // The live line is for people at a terminal: not with -q, nor among JSON log lines.
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
    let take_signal = || match watching {
        WaitSignals::Polled(fd) => signals::read(fd).map(Wake::Interrupted),
        WaitSignals::None => None,
    };
    let interrupt = match watching {
        WaitSignals::Polled(fd) => Some(Interrupt {
            fd: fd.as_fd(),
            take: &take_signal,
        }),
        WaitSignals::None => None,
    };
    let waiting = Waiting {
        wait: take.wait,
        retry: Retry {
            delay: take.retry_delay,
        },
        interrupt,
        progress: Some(&mut show),
    };
    let started = crate::clock::BootInstant::now();
    let mut new_token = || token::new_token(command);
    let result = lock.acquire(target, take.ttl, waiting, &mut new_token);
    if let Some(line) = line.as_mut() {
        line.clear();
    }
    let held = result?.map_err(|err| refusal(target, take, err, reporter))?;
    let interrupted = signals::take_pending(&signals::TERMINATING);
    if let Some(signal) = interrupted {
        // Asked to stop while the last attempt succeeded: nobody will learn the token (or run
        // the command), so give the lock back rather than leave it to expire.
        let _ = lock.release(target, &held.key, &held.token, None);
        return Err(exit::quietly(Outcome::Signal(signal)));
    }
    reporter.emit(&event::Acquired {
        name: &take.name,
        key: &held.key,
        token_id: token_id(&held.token),
        ttl_ms: ms(held.ttl),
        validity_ms: ms(held.validity),
        votes: held.votes,
        servers: lock.servers().len(),
        waited_ms: ms(started.elapsed()),
        fence: held.fence,
        slot: held.slot,
    });
    Ok(held)
}

fn refusal(target: &Target, take: &TakeArgs, err: LockError, reporter: Reporter) -> anyhow::Error {
    let (name, key) = (&take.name, &target.stem());
    let wait = take.wait.filter(|wait| !wait.is_zero());
    let waited = wait.map_or(String::new(), |wait| {
        format!(" after waiting {}", humantime::format_duration(wait))
    });
    match err {
        // Busy is an expected outcome, not an error: one line unless -q (the exit status says
        // it, as with flock -n), and always a `busy` event in a JSON log.
        LockError::Busy { holder } => {
            let outcome = Outcome::busy(take.conflict_exit_code);
            reporter.emit(&event::Busy {
                name,
                key,
                held_by: holder.as_deref(),
                waited_ms: wait.map(ms),
                exit_code: outcome.code(),
            });
            exit::quietly(outcome)
        }
        LockError::Unavailable { .. } => exit::fail(
            Outcome::Unavailable,
            format!("cannot acquire lock '{name}'{waited}: {err}"),
        ),
        LockError::Interrupted(signal) => exit::fail(
            Outcome::Signal(signal),
            format!("stopped by signal {signal} while waiting for lock '{name}'; nothing is held"),
        ),
        LockError::LimitMismatch { slots } => {
            crate::config::limit_mismatch(name, target.limit(), slots)
        }
        LockError::NotHeld { .. } | LockError::OtherMode { .. } => {
            exit::fail(Outcome::Software, format!("lock '{name}': {err}"))
        }
    }
}
