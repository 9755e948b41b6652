//! The command line as the user typed it: clap definitions only, no I/O and no network. This
//! file owns the top level (`redlock [OPTIONS] COMMAND`) and the list of subcommands; the options
//! every subcommand shares, each subcommand's own arguments, their help headings and the value
//! parsers live beside it. What help says after the options is `help`'s.

mod commands;
mod global;
mod headings;
mod latch;
mod values;

use clap::{Parser, Subcommand};
pub(crate) use commands::{
    AcquireArgs, ExecArgs, ExtendArgs, GenerateArgs, Generated, ReleaseArgs, StatusArgs, TakeArgs,
};
pub(crate) use global::{LogFormat, OutputArgs, ServerArgs};
pub(crate) use latch::{
    LatchArgs, LatchDoneArgs, LatchSetArgs, LatchVerb, LatchWaitArgs, MAX_WAIT,
};

/// The command line. What `--help` shows after the options (examples, environment, exit
/// statuses) is not written here but in `help`, which attaches it for `--help` and writes the
/// same text into the man pages.
#[derive(Parser, Debug)]
#[command(
    name = "redlock",
    version,
    about = "A distributed lock on N independent Redis servers (Redlock), for scripts, crontabs and CI",
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

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Take the lock once (or keep trying for --wait) and print its token
    Acquire(AcquireArgs),

    /// Release a lock held by TOKEN (compare-and-delete on every server)
    Release(ReleaseArgs),

    /// Give a lock held by TOKEN a fresh TTL and print the new validity in milliseconds
    Extend(ExtendArgs),

    /// Show who holds a lock on each server, or list every lock under the prefix
    Status(StatusArgs),

    /// Hold the lock while COMMAND runs: renew it, and stop COMMAND if the lock is lost
    Exec(ExecArgs),

    /// A countdown latch: wait until N jobs on other hosts are done (set, done, wait, status)
    #[command(after_help = latch::help())]
    Latch(LatchArgs),

    /// Write shell completions or man pages (for packagers)
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
    fn every_option_has_an_environment_variable() {
        // --force is the deliberate exception: an exported variable must not make every
        // release a forced one.
        let exempt = ["help", "version", "force"];
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
