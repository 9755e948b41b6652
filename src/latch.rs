//! `redlock latch set|done|wait|status`: a countdown latch across hosts ("start the report once
//! the three ETL jobs are done"). Each verb checks its arguments, makes one call to the engine
//! (`lock::latch`, where the safety argument is), and ends with one outcome: 0 set, counted or
//! open; 75 not open in time, expired, or another count; 69 no quorum; 64 bad input or a latch
//! nobody knows. Text output is silent on success (a crontab mails nothing); `--json` prints the
//! latch's document (status/latch.rs) on stdout, also when the answer is 75.

use crate::cli::{LatchArgs, LatchDoneArgs, LatchSetArgs, LatchVerb, LatchWaitArgs, MAX_WAIT};
use crate::config::Config;
use crate::exit::{self, Outcome};
use crate::lock::latch::{Counting, Latch, LatchError, LatchWait, Shape, Waited};
use crate::lock::{Interrupt, Wake};
use crate::report::Reporter;
use crate::signals;
use crate::status::latch::summary;
use crate::status::latch_json::{document, LatchDocument};
use std::io::Write;
use std::os::fd::AsFd;

pub(crate) fn run(
    config: &Config,
    reporter: Reporter,
    args: &LatchArgs,
) -> anyhow::Result<Outcome> {
    match &args.verb {
        LatchVerb::Set(args) => set(config, reporter, args),
        LatchVerb::Done(args) => done(config, reporter, args),
        LatchVerb::Wait(args) => wait(config, reporter, args),
        LatchVerb::Status(args) => {
            let mut engine = config.redlock(reporter);
            match &args.name {
                Some(name) => {
                    crate::status::latch::one(&mut engine, &config.latch(name)?, args.json)
                }
                None => {
                    crate::status::latch::all(config, reporter, &mut engine, (args.json, args.scan))
                }
            }
        }
    }
}

fn set(config: &Config, reporter: Reporter, args: &LatchSetArgs) -> anyhow::Result<Outcome> {
    let latch = config.latch(&args.name)?;
    let shape = Shape {
        count: args.count,
        ttl: args.ttl.ttl,
    };
    let mut engine = config.redlock(reporter);
    let set = engine
        .latch_set(&latch, shape)
        .map_err(|err| refused(&latch, "set", err, Some(shape.count)))?;
    if args.json {
        print_json(&latch, &set.view.counting(), |document| {
            document.created = Some(set.created);
            document.votes = Some(set.votes);
        });
    }
    Ok(Outcome::Success)
}

fn done(config: &Config, reporter: Reporter, args: &LatchDoneArgs) -> anyhow::Result<Outcome> {
    let latch = config.latch(&args.name)?;
    // Who counted down, and when: the holder facts of a token (`status` reads them back).
    let record = crate::token::new_token(None)?;
    let id = match &args.id {
        Some(id) => id.clone(),
        // Unique (the token's random part), and still says where it came from.
        None => format!("{}-{}", crate::token::hostname(), &record[..8]),
    };
    let create = args.count.map(|count| Shape {
        count,
        ttl: args.ttl.ttl,
    });
    let mut engine = config.redlock(reporter);
    let counted = engine
        .latch_done(&latch, (&id, &record), create)
        .map_err(|err| refused(&latch, "count down", err, args.count))?;
    if args.json {
        print_json(&latch, &counted.view.counting(), |document| {
            document.id = Some(id);
            document.votes = Some(counted.votes);
            document.repaired = Some(counted.repaired);
        });
    }
    Ok(Outcome::Success)
}

fn wait(config: &Config, reporter: Reporter, args: &LatchWaitArgs) -> anyhow::Result<Outcome> {
    let latch = config.latch(&args.name)?;
    // Blocked from here on, and read from a signalfd polled beside the wires: a signal still
    // wakes the wait.
    signals::block(&signals::TERMINATING)?;
    let signalled = signals::signal_fd(&signals::TERMINATING)?;
    let take_signal = || signals::read(&signalled).map(Wake::Interrupted);
    let mut engine = config.redlock(reporter);
    if let Some(count) = args.count {
        let shape = Shape {
            count,
            ttl: args.ttl.ttl,
        };
        engine
            .latch_set(&latch, shape)
            .map_err(|err| refused(&latch, "set", err, Some(count)))?;
    }
    let started = crate::clock::BootInstant::now();
    let how = LatchWait {
        wait: args.wait.unwrap_or(MAX_WAIT),
        interrupt: Some(Interrupt {
            fd: signalled.as_fd(),
            take: &take_signal,
        }),
    };
    let waited = engine
        .latch_wait(&latch, how)
        .map_err(|err| refused(&latch, "wait for", err, args.count))?;
    let report = |counting: &Counting, expired: bool| {
        if args.json {
            let waited_ms = crate::schema::ms(started.elapsed());
            print_json(&latch, counting, |document| {
                document.waited_ms = Some(waited_ms);
                document.expired = Some(expired);
            });
        }
    };
    let name = &latch.name;
    match waited {
        Waited::Open(counting) => {
            report(&counting, false);
            Ok(Outcome::Success)
        }
        Waited::NotOpen(counting) => {
            report(&counting, false);
            let after = match args.wait {
                Some(wait) => format!(" after {}", humantime::format_duration(wait)),
                None => String::new(),
            };
            Err(exit::fail(
                Outcome::busy(None),
                format!("latch '{name}' is not open{after}: {}", summary(&counting)),
            ))
        }
        Waited::Gone { last, expired } => {
            report(&last, expired);
            let what = if expired {
                "expired while waited on"
            } else {
                "is no longer on a quorum of servers (lost by servers that restarted empty?)"
            };
            let before = match last.count {
                Some(count) => format!("; {} of {count} had counted down", last.ids.len()),
                None => String::new(),
            };
            Err(exit::fail(
                Outcome::busy(None),
                format!("latch '{name}' {what}{before}"),
            ))
        }
        Waited::Interrupted(signal) => Err(exit::quietly(Outcome::Signal(signal))),
    }
}

/// Prints the latch's document with a verb's own fields (`own` sets them) after it.
fn print_json(latch: &Latch, counting: &Counting, own: impl FnOnce(&mut LatchDocument)) {
    let mut document = document(latch, counting);
    own(&mut document);
    // A closed pipe is not worth an error: the exit status still says what happened.
    if let Ok(document) = crate::schema::to_json(&document) {
        let _ = writeln!(std::io::stdout(), "{document}");
    }
}

/// The error a refused latch round ends the run with; `doing` says what was tried (`set`,
/// `count down`, `wait for`), `asked` is the count given, if any.
fn refused(latch: &Latch, doing: &str, err: LatchError, asked: Option<u32>) -> anyhow::Error {
    let name = &latch.name;
    match err {
        LatchError::OtherCount { count, servers } => exit::fail(
            Outcome::busy(None),
            format!(
                "latch '{name}' exists with count {count} on {servers} server(s), not {}; expected the same count everywhere (or another name: one latch per run)",
                asked.unwrap_or(count)
            ),
        ),
        LatchError::NoMajority {
            count,
            holding,
            quorum,
            servers,
        } => exit::fail(
            Outcome::busy(None),
            format!(
                "cannot {doing} latch '{name}': only {holding} of {servers} servers hold it with one count ({count}), {quorum} needed; the others lost it (restarted empty?); nothing was written; expected `redlock latch set {name} --count N` again, then each job's count-down again"
            ),
        ),
        LatchError::Unknown => exit::usage(format!(
            "latch '{name}' does not exist on any server that answered; expected `redlock latch set {name} --count N` first, or --count N here"
        )),
        LatchError::Foreign { kind } => exit::fail(
            Outcome::busy(None),
            format!(
                "latch '{name}': its key {:?} holds a {kind} of another client; expected a latch",
                latch.keys.key()
            ),
        ),
        LatchError::Unavailable { detail } => exit::fail(
            Outcome::Unavailable,
            format!("cannot {doing} latch '{name}': {detail}"),
        ),
    }
}
