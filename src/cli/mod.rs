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

use clap::{Parser, Subcommand};
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

/// The subcommands, in the order help lists them. Each one's doc line is its line in the list of
/// subcommands (which fits 80 columns); `long_about` is the longer sentence its own `--help`
/// opens with, where it has one.
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Take the lock once (or keep trying for --wait) and print its token
    Acquire(AcquireArgs),

    /// Release a lock held by TOKEN (compare-and-delete on every server)
    Release(ReleaseArgs),

    /// Give a lock held by TOKEN a fresh TTL; print the new validity
    #[command(
        long_about = "Give a lock held by TOKEN a fresh TTL and print the new validity in milliseconds"
    )]
    Extend(ExtendArgs),

    /// Show who holds a lock, server by server, or list every lock
    #[command(
        long_about = "Show who holds a lock on each server, or list every lock under the prefix"
    )]
    Status(StatusArgs),

    /// Show a lock's recent runs: which host, when, how long, how it ended
    #[command(
        long_about = "Show the recent runs of a lock: which host ran each, when, for how long, and \
                      how it ended"
    )]
    History(HistoryArgs),

    /// Hold the lock while COMMAND runs; stop COMMAND if the lock is lost
    #[command(
        long_about = "Hold the lock while COMMAND runs: renew it, and stop COMMAND if the lock is lost"
    )]
    Exec(ExecArgs),

    /// A countdown latch: wait until N jobs on other hosts are done
    #[command(
        long_about = "A countdown latch: wait until N jobs on other hosts are done (set, done, \
                      wait, status)"
    )]
    Latch(LatchArgs),

    /// Check the servers against what Redlock needs
    #[command(
        long_about = "Check the servers against what Redlock needs (independent masters, \
                      persistence, no eviction, ACL)",
        // Its own -v and -q, with what they mean for doctor; the global ones are not added
        // where a subcommand has an option of the same id, and the value still lands in
        // OutputArgs (clap passes a global's value up by id).
        args = doctor::output_options()
    )]
    Doctor(DoctorArgs),

    /// Write shell completions, man pages or docs/json.md (for packagers and tests)
    #[command(hide = true)]
    Generate(GenerateArgs),
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn doctors_own_verbose_and_quiet_are_the_global_ones() {
        // doctor's -v and -q are its own options (with its texts), but a run reads them where
        // every other subcommand does, before or after the subcommand name.
        let lines: &[(&[&str], bool, bool)] = &[
            (&["redlock", "doctor", "-v"], true, false),
            (&["redlock", "-v", "doctor"], true, false),
            (&["redlock", "-q", "doctor"], false, true),
            (
                &["redlock", "doctor", "--quiet", "--log-format", "json"],
                false,
                true,
            ),
            (&["redlock", "doctor"], false, false),
        ];
        for (line, verbose, quiet) in lines {
            let cli = Cli::try_parse_from(*line).expect("parses");
            assert_eq!(
                (cli.output.verbose, cli.output.quiet),
                (*verbose, *quiet),
                "{line:?}"
            );
        }
        let both = Cli::try_parse_from(["redlock", "doctor", "-q", "-v"]);
        assert!(
            both.is_err(),
            "doctor's -v and -q conflict as the global ones do"
        );
    }

    #[test]
    fn every_option_has_an_environment_variable() {
        // --force and --watch are the deliberate exceptions: an exported variable must not make
        // every release a forced one, nor every status one that never ends.
        let exempt = ["help", "version", "force", "watch"];
        let mut top = Cli::command();
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
