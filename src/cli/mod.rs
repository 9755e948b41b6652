//! The command line as the user typed it: clap definitions only, no I/O and no network. This
//! file owns the top level (`redlock [OPTIONS] COMMAND`) and the list of subcommands; the options
//! every subcommand shares, each subcommand's own arguments, their help headings and the value
//! parsers live beside it. What help says after the options is `help`'s.

mod commands;
mod doctor;
mod global;
mod headings;
mod history;
mod latch;
mod values;

use clap::error::ErrorKind;
use clap::{ArgMatches, Args, FromArgMatches, Parser, Subcommand};
pub(crate) use commands::{
    AcquireArgs, ExecArgs, ExtendArgs, GenerateArgs, Generated, ReleaseArgs, StatusArgs, TakeArgs,
};
pub(crate) use doctor::DoctorArgs;
pub(crate) use global::{LogFormat, OutputArgs, ServerArgs};
pub(crate) use history::{HistoryArgs, RecordArgs};
pub(crate) use latch::{
    LatchArgs, LatchDoneArgs, LatchSetArgs, LatchVerb, LatchWaitArgs, MAX_WAIT,
};

/// What `--version` prints after the name: the version and the target it was built for (build.rs),
/// so that a bug report says which build it came from. The man pages, shared by every build,
/// carry the version alone.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("BUILT_FOR_TARGET"),
    ")"
);

/// The command line. What `--help` shows after the options (examples, environment, exit
/// statuses) is not written here but in `help`, which attaches it for `--help` and writes the
/// same text into the man pages.
#[derive(Parser, Debug)]
#[command(
    name = "redlock",
    version = VERSION,
    about = "A distributed lock on N Redis servers (Redlock), for scripts, cron and CI",
    long_about = "A distributed lock on N independent Redis servers (Redlock), for scripts, crontabs \
                  and CI: a lock is held while a majority of the servers hold it.",
    propagate_version = true,
    // Wide terminals still get lines that can be read at a glance.
    max_term_width = 100
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) servers: ServerArgs,

    #[command(flatten)]
    pub(crate) output: OutputArgs,

    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands. Written out rather than derived so that only the one that runs has its
/// arguments built (clap's `defer`): a tenth of a millisecond less per process
/// (docs/performance.md). What each one says in the list of subcommands is its line in
/// `SUBCOMMANDS`.
#[derive(Debug)]
pub(crate) enum Command {
    Acquire(AcquireArgs),
    Release(ReleaseArgs),
    Extend(ExtendArgs),
    Status(StatusArgs),
    History(HistoryArgs),
    Exec(ExecArgs),
    Latch(LatchArgs),
    Doctor(DoctorArgs),
    Generate(GenerateArgs),
}

/// One subcommand: its name, its line in the list of subcommands (which fits 80 columns) and the
/// longer sentence its own `--help` opens with, if any; how it is built (its arguments at once
/// with `true`, or only when clap builds it with `false`), and how its arguments are read back.
struct Entry {
    name: &'static str,
    about: &'static str,
    long_about: Option<&'static str>,
    build: fn(&Entry, bool) -> clap::Command,
    read: fn(&mut ArgMatches) -> Result<Command, clap::Error>,
}

/// Every subcommand, in the order help lists them.
const SUBCOMMANDS: &[Entry] = &[
    Entry {
        name: "acquire",
        about: "Take the lock once (or keep trying for --wait) and print its token",
        long_about: None,
        build: subcommand::<AcquireArgs>,
        read: |matches| FromArgMatches::from_arg_matches_mut(matches).map(Command::Acquire),
    },
    Entry {
        name: "release",
        about: "Release a lock held by TOKEN (compare-and-delete on every server)",
        long_about: None,
        build: subcommand::<ReleaseArgs>,
        read: |matches| FromArgMatches::from_arg_matches_mut(matches).map(Command::Release),
    },
    Entry {
        name: "extend",
        about: "Give a lock held by TOKEN a fresh TTL; print the new validity",
        long_about: Some(
            "Give a lock held by TOKEN a fresh TTL and print the new validity in milliseconds",
        ),
        build: subcommand::<ExtendArgs>,
        read: |matches| FromArgMatches::from_arg_matches_mut(matches).map(Command::Extend),
    },
    Entry {
        name: "status",
        about: "Show who holds a lock, server by server, or list every lock",
        long_about: Some(
            "Show who holds a lock on each server, or list every lock under the prefix",
        ),
        build: subcommand::<StatusArgs>,
        read: |matches| FromArgMatches::from_arg_matches_mut(matches).map(Command::Status),
    },
    Entry {
        name: "history",
        about: "Show a lock's recent runs: which host, when, how long, how it ended",
        long_about: Some(
            "Show the recent runs of a lock: which host ran each, when, for how long, and how \
             it ended",
        ),
        build: subcommand::<HistoryArgs>,
        read: |matches| FromArgMatches::from_arg_matches_mut(matches).map(Command::History),
    },
    Entry {
        name: "exec",
        about: "Hold the lock while COMMAND runs; stop COMMAND if the lock is lost",
        long_about: Some(
            "Hold the lock while COMMAND runs: renew it, and stop COMMAND if the lock is lost",
        ),
        build: subcommand::<ExecArgs>,
        read: |matches| FromArgMatches::from_arg_matches_mut(matches).map(Command::Exec),
    },
    Entry {
        name: "latch",
        about: "A countdown latch: wait until N jobs on other hosts are done",
        long_about: Some(
            "A countdown latch: wait until N jobs on other hosts are done (set, done, wait, \
             status)",
        ),
        build: subcommand::<LatchArgs>,
        read: |matches| FromArgMatches::from_arg_matches_mut(matches).map(Command::Latch),
    },
    Entry {
        name: "doctor",
        about: "Check the servers against what Redlock needs",
        long_about: Some(
            "Check the servers against what Redlock needs (independent masters, persistence, \
             no eviction, ACL)",
        ),
        // Only the whole definition (help, man pages, completions) gives doctor its own -v and
        // -q: a parse builds doctor after the top level has handed it the global ones, and the
        // same id twice would clash. Either way the value lands in OutputArgs (clap passes a
        // global's value up by id).
        build: |entry, now| match subcommand::<DoctorArgs>(entry, now) {
            command if now => doctor::output_options(command),
            command => command,
        },
        read: |matches| FromArgMatches::from_arg_matches_mut(matches).map(Command::Doctor),
    },
    Entry {
        name: "generate",
        about: "Write shell completions, man pages or docs/json.md (for packagers and tests)",
        long_about: None,
        build: |entry, now| subcommand::<GenerateArgs>(entry, now).hide(true),
        read: |matches| FromArgMatches::from_arg_matches_mut(matches).map(Command::Generate),
    },
];

/// The subcommand `entry` with its lines and `A`'s arguments, added `now` or when clap builds
/// it. The lines are set again after them, as the derive does: `A`'s own doc comment must not
/// replace them.
fn subcommand<A: Args>(entry: &Entry, now: bool) -> clap::Command {
    let command = clap::Command::new(entry.name)
        .about(entry.about)
        .long_about(entry.long_about);
    let arguments = |command: clap::Command| {
        let about = command.get_about().cloned().unwrap_or_default();
        let long_about = command.get_long_about().cloned();
        let command = A::augment_args(command).about(about);
        match long_about {
            Some(long_about) => command.long_about(long_about),
            None => command.long_about(None),
        }
    };
    if now {
        arguments(command)
    } else {
        command.defer(arguments)
    }
}

/// The whole definition, every subcommand's arguments built (in the order a derive would add
/// them: its own before the global ones), for what shows them all: help pages, man pages,
/// completions. Parsing builds only the subcommand it runs.
pub(crate) fn whole(command: clap::Command) -> clap::Command {
    let listed = SUBCOMMANDS.iter().enumerate();
    listed.fold(command, |command, (place, entry)| {
        // In the list where `subcommand` put it (clap numbers them as they are added).
        command.mut_subcommand(entry.name, |_| {
            (entry.build)(entry, true).display_order(place)
        })
    })
}

impl Subcommand for Command {
    fn augment_subcommands(command: clap::Command) -> clap::Command {
        // All at once only for bench/run's figure of what deferring saves (Cargo.toml).
        let now = cfg!(feature = "eager-cli");
        SUBCOMMANDS.iter().fold(command, |command, entry| {
            command.subcommand((entry.build)(entry, now))
        })
    }

    fn augment_subcommands_for_update(command: clap::Command) -> clap::Command {
        Self::augment_subcommands(command)
    }

    fn has_subcommand(name: &str) -> bool {
        SUBCOMMANDS.iter().any(|entry| entry.name == name)
    }
}

impl FromArgMatches for Command {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut matches.clone())
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        let Some((name, mut sub)) = matches.remove_subcommand() else {
            return Err(clap::Error::raw(
                ErrorKind::MissingSubcommand,
                "a subcommand is required but one was not provided",
            ));
        };
        match SUBCOMMANDS.iter().find(|entry| entry.name == name) {
            Some(entry) => (entry.read)(&mut sub),
            None => Err(clap::Error::raw(
                ErrorKind::InvalidSubcommand,
                format!("the subcommand '{name}' wasn't recognized"),
            )),
        }
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
        whole(Cli::command()).debug_assert();
    }

    #[test]
    fn parsing_with_deferred_subcommands_reads_what_the_whole_definition_reads() {
        let lines: &[&[&str]] = &[
            &[
                "redlock",
                "-s",
                "redis://a:1,redis://b:2",
                "exec",
                "job",
                "--wait",
                "10s",
                "--",
                "true",
            ],
            &[
                "redlock",
                "acquire",
                "job",
                "--ttl",
                "1m",
                "--fence",
                "-s",
                "redis://c",
                "--json",
            ],
            &[
                "redlock", "release", "job", "--token", "t", "--limit", "3", "-q",
            ],
            &[
                "redlock",
                "--log-format",
                "json",
                "extend",
                "job",
                "--token",
                "t",
                "--ttl",
                "5s",
            ],
            &["redlock", "status", "--json"],
            &["redlock", "status", "job", "--watch", "5s", "--json"],
            &["redlock", "history", "job", "-n", "3", "--since", "1d"],
            &["redlock", "exec", "job", "--history", "0", "--", "true"],
            &["redlock", "latch", "wait", "deploy", "--wait", "5m"],
            &["redlock", "doctor", "--ttl", "5m", "--strict", "--json"],
            // doctor's own -v and -q (whole) and the global ones (parsing) read alike.
            &["redlock", "doctor", "-v"],
            &["redlock", "-q", "doctor"],
            &["redlock", "doctor", "--quiet", "--log-format", "json"],
            &["redlock", "generate", "man", "out"],
        ];
        for line in lines {
            let parse = |command: clap::Command| {
                let matches = command.try_get_matches_from(*line).expect("parses");
                format!("{:?}", Cli::from_arg_matches(&matches).expect("reads"))
            };
            assert_eq!(
                parse(Cli::command()),
                parse(whole(Cli::command())),
                "{line:?}"
            );
        }
    }

    #[test]
    fn every_option_has_an_environment_variable() {
        // --force and --watch are the deliberate exceptions: an exported variable must not make
        // every release a forced one, nor every status one that never ends.
        let exempt = ["help", "version", "force", "watch"];
        let mut top = whole(Cli::command());
        top.build();
        for command in std::iter::once(&top).chain(top.get_subcommands()) {
            for arg in command.get_arguments() {
                let id = arg.get_id().as_str();
                if arg.is_positional() || exempt.contains(&id) {
                    continue;
                }
                let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
                assert!(
                    env.as_deref().is_some_and(|e| e.starts_with("REDLOCK_")),
                    "{} --{id} has no REDLOCK_* variable",
                    command.get_name()
                );
            }
        }
    }
}
