//! The command line as the user typed it: clap definitions only, no I/O and no network. This
//! file owns the top level (`redlock [OPTIONS] COMMAND`) and the list of subcommands; the options
//! every subcommand shares, each subcommand's own arguments and the value parsers live beside it.

mod commands;
mod global;
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

#[derive(Parser, Debug)]
#[command(
    name = "redlock",
    version,
    about = "A distributed lock on N independent Redis servers (Redlock), for scripts, crontabs and CI",
    after_help = crate::exit::table(),
    propagate_version = true,
    disable_help_subcommand = true
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
    #[command(after_help = "Examples:
  TOKEN=$(redlock acquire deploy --ttl 5m) || exit
  redlock acquire nightly --wait 30s --json
  redlock -s redis://a:6379 -s redis://b:6379 -s redis://c:6379 acquire deploy -v")]
    Acquire(AcquireArgs),

    /// Release a lock held by TOKEN (compare-and-delete on every server)
    #[command(after_help = "Examples:
  redlock release deploy --token \"$TOKEN\"
  REDLOCK_TOKEN=$TOKEN redlock release deploy
  redlock release deploy --force      # a stuck lock: delete it whoever holds it")]
    Release(ReleaseArgs),

    /// Give a lock held by TOKEN a fresh TTL and print the new validity in milliseconds
    #[command(after_help = "Examples:
  redlock extend deploy --token \"$TOKEN\" --ttl 5m
  while sleep 100; do redlock extend deploy --token \"$TOKEN\" --ttl 5m || break; done")]
    Extend(ExtendArgs),

    /// Show who holds a lock on each server, or list every lock under the prefix
    #[command(
        after_help = "Every lock is in one of four states, the same word in the table, the list and JSON:
  held      a token holds it on a quorum of servers (or a non-redlock client's key type does)
  free      no server that answered has its key
  partial   its key is on fewer than a quorum of servers: nobody holds it; the copies expire
  unknown   too few servers answered to tell
A lock kept after its run (exec --hold-at-least) is held: the summary says how the run ended and
until when it is kept, and JSON has a non-null `kept`.

Examples:
  redlock status nightly-backup
  redlock status nightly-backup --json | jq .holder
  redlock status --json"
    )]
    Status(StatusArgs),

    /// Hold the lock while COMMAND runs: renew it, and stop COMMAND if the lock is lost
    #[command(after_help = exec_help())]
    Exec(ExecArgs),

    /// A countdown latch: wait until N jobs on other hosts are done (set, done, wait, status)
    #[command(after_help = latch::help())]
    Latch(LatchArgs),

    /// Write shell completions or man pages (for packagers)
    #[command(hide = true)]
    Generate(GenerateArgs),
}

/// `exec --help`'s examples and the statuses `exec` can end with.
fn exec_help() -> String {
    format!(
        "Examples:
  redlock exec nightly-backup -- ./backup.sh
  redlock exec deploy --wait 10m -- sh -c 'make deploy'
  redlock -q exec nightly --hold-at-least 5m --max-runtime 2h -E 0 -- ./nightly.sh
  redlock exec report --log-format json -- ./report.sh 2>>/var/log/report.jsonl

{}",
        crate::exit::exec_table()
    )
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
