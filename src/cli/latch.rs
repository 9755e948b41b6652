//! `redlock latch set|done|wait|status`: the countdown latch's verbs and their arguments, and
//! the parsers of a count and a count-down id.

pub(crate) use super::values::MAX_WAIT;
use super::values::{ttl, wait};
use crate::lock::latch::MAX_COUNT;
use clap::{Args, Subcommand};
use std::time::Duration;

/// The longest count-down id, in bytes.
pub(crate) const MAX_ID_BYTES: usize = 256;

#[derive(Args, Debug)]
pub(crate) struct LatchArgs {
    #[command(subcommand)]
    pub(crate) verb: LatchVerb,
}

#[derive(Subcommand, Debug)]
pub(crate) enum LatchVerb {
    /// Create latch NAME, to open once COUNT ids have counted down
    ///
    /// Create latch NAME, to open once COUNT distinct ids have counted down; exit 0 if it exists
    /// with the same count (so every host can run it), 75 if with another.
    #[command(after_help = "Examples:
  redlock latch set nightly-etl-$(date +%F) --count 3 --ttl 20h
  redlock latch set release-42 --count 4 --json")]
    Set(LatchSetArgs),

    /// Count down once for --id
    ///
    /// Exit 0 once it is recorded (id, when, by whom) on a quorum.
    #[command(after_help = "Examples:
  ./extract.sh && redlock latch done nightly-etl-$(date +%F) --id \"$(hostname)\"
  redlock latch done release-42 --id shard-3 --count 4   # creates the latch if missing")]
    Done(LatchDoneArgs),

    /// Wait until the latch opens (exit 0), or give up (75)
    ///
    /// Or give up after --wait or when it expires (75), or when too few servers answer to tell
    /// (69).
    #[command(after_help = "Examples:
  redlock latch wait nightly-etl-$(date +%F) --wait 3h && ./report.sh
  redlock latch wait release-42 --count 4 --ttl 2h --wait 1h --json")]
    Wait(LatchWaitArgs),

    /// Show who counted down, and what is missing; or list every latch
    ///
    /// Who counted down, when, and what is missing; without NAME, every latch under the
    /// prefix.
    #[command(
        after_help = "Every latch is in one of five states, the same word in the table, the list and JSON:
  open      a quorum holds it, and at least COUNT distinct ids counted down
  waiting   a quorum holds it, and fewer ids counted down
  partial   fewer than a quorum hold it (it expired, or is being created, or servers lost it)
  absent    no server that answered holds it
  unknown   too few servers answered to tell
Exits 0 when open, 1 when not, 69 when it cannot tell."
    )]
    Status(LatchStatusArgs),
}

/// How long a latch lives, for the verbs that may create one.
#[derive(Args, Debug, Clone)]
pub(crate) struct LatchTtlArgs {
    /// Lifetime of a latch this creates (at most 7d)
    ///
    /// On the servers; an existing latch keeps its own. Give it room for the slowest job and the
    /// wait, and name the latch for the run (nightly-etl-2025-01-07) rather than reusing a name
    /// before it expires.
    #[arg(long, value_name = "DUR", env = "REDLOCK_LATCH_TTL", default_value = "12h", value_parser = ttl)]
    pub(crate) ttl: Duration,
}

#[derive(Args, Debug)]
pub(crate) struct LatchSetArgs {
    /// Latch name (apart from a lock of the same name)
    ///
    /// The key is <PREFIX><NAME>␟latch: a latch and a lock of one name are apart.
    pub(crate) name: String,

    /// Ids that must count down before it opens (1 to 1000)
    ///
    /// How many distinct ids.
    #[arg(long, value_name = "N", env = "REDLOCK_LATCH_COUNT", value_parser = count, allow_hyphen_values = true)]
    pub(crate) count: u32,

    #[command(flatten)]
    pub(crate) ttl: LatchTtlArgs,

    /// Print one JSON object (the latch's state, and `created`)
    #[arg(long, env = "REDLOCK_JSON")]
    pub(crate) json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct LatchDoneArgs {
    /// Latch name
    pub(crate) name: String,

    /// What this count-down is for: one id per job
    ///
    /// A host, a shard. An id counts once, so a retried job may run `done` again. Without it, a
    /// fresh id: a retry then counts twice.
    #[arg(long, value_name = "ID", env = "REDLOCK_LATCH_ID", value_parser = id)]
    pub(crate) id: Option<String>,

    /// Create the latch with N if it does not exist
    ///
    /// As `set` does (exit 75 if it exists with another count). Without it, a latch that no
    /// server knows is an error (64).
    #[arg(long, value_name = "N", env = "REDLOCK_LATCH_COUNT", value_parser = count, allow_hyphen_values = true)]
    pub(crate) count: Option<u32>,

    #[command(flatten)]
    pub(crate) ttl: LatchTtlArgs,

    /// Print one JSON object for programs
    ///
    /// The latch's state, and `id`, `votes`, `repaired`.
    #[arg(long, env = "REDLOCK_JSON")]
    pub(crate) json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct LatchWaitArgs {
    /// Latch name
    pub(crate) name: String,

    /// Give up (exit 75) after DUR; 0s looks once
    ///
    /// At most 7d. Without it, wait until the latch opens or expires.
    #[arg(short = 'w', long, value_name = "DUR", env = "REDLOCK_LATCH_WAIT", value_parser = wait)]
    pub(crate) wait: Option<Duration>,

    /// Create the latch with N if it does not exist
    ///
    /// As `set` does (exit 75 if it exists with another count), so the waiter may start first.
    /// Without it, a latch that no server knows is an error (64).
    #[arg(long, value_name = "N", env = "REDLOCK_LATCH_COUNT", value_parser = count, allow_hyphen_values = true)]
    pub(crate) count: Option<u32>,

    #[command(flatten)]
    pub(crate) ttl: LatchTtlArgs,

    /// Print one JSON object, open or not
    ///
    /// The latch's state, and `waited_ms`, `expired`.
    #[arg(long, env = "REDLOCK_JSON")]
    pub(crate) json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct LatchStatusArgs {
    /// Latch name; without it, list every latch under the prefix
    pub(crate) name: Option<String>,

    /// Print JSON for programs
    #[arg(long, env = "REDLOCK_JSON")]
    pub(crate) json: bool,

    /// Walk every key of every server, however many it holds
    ///
    /// A server of over 100,000 keys is otherwise listed from the index of the keys redlock set
    /// there, which is quick but does not have a lock another client (redsync, redis-py) took:
    /// --scan walks every key (SCAN), at about 1 µs a key of the server's time.
    #[arg(long, env = "REDLOCK_SCAN", hide_short_help = true)]
    pub(crate) scan: bool,
}

/// A latch's count, `--count`: a whole number from 1 to `MAX_COUNT`.
pub(crate) fn count(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_COUNT).contains(&n) => Ok(n),
        _ => Err(format!(
            "{} is not a count; expected a whole number from 1 to {MAX_COUNT}",
            crate::human::quoted(text)
        )),
    }
}

/// A count-down id, `--id`: printable text (no control character, so it is never the latch's
/// own `␟count` field), not empty, at most `MAX_ID_BYTES`.
pub(crate) fn id(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err(format!(
            "{} is empty; expected an id such as host-a",
            crate::human::quoted(text)
        ));
    }
    if text.len() > MAX_ID_BYTES {
        return Err(format!(
            "an id of {} bytes is too long; expected at most {MAX_ID_BYTES}",
            text.len()
        ));
    }
    if let Some(bad) = text.chars().find(|c| c.is_control()) {
        return Err(format!(
            "{} contains the control character {bad:?}; expected printable text such as host-a",
            crate::human::quoted(text)
        ));
    }
    Ok(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_whole_numbers_from_1_to_the_cap() {
        assert_eq!(count("3"), Ok(3));
        assert_eq!(count("1000"), Ok(MAX_COUNT));
        for bad in ["0", "-1", "three", "1001", "2.5", ""] {
            assert!(count(bad).unwrap_err().contains("from 1 to 1000"), "{bad}");
        }
    }

    #[test]
    fn ids_are_printable_and_bounded() {
        assert_eq!(id("host-a").as_deref(), Ok("host-a"));
        assert!(id("").unwrap_err().contains("expected an id"));
        assert!(id(" ").is_err());
        assert!(id("a\u{1f}count").unwrap_err().contains("control"));
        assert!(id("a\nb").unwrap_err().contains("'a\\nb'"));
        assert!(id(&"x".repeat(MAX_ID_BYTES + 1))
            .unwrap_err()
            .contains("at most 256"));
    }

    #[test]
    fn every_latch_option_has_an_environment_variable() {
        use clap::CommandFactory;
        let mut top = crate::cli::whole(crate::cli::Cli::command());
        top.build();
        let latch = top.find_subcommand("latch").expect("the latch subcommand");
        for verb in latch.get_subcommands() {
            for arg in verb.get_arguments() {
                let name = arg.get_id().as_str();
                if arg.is_positional() || ["help", "version"].contains(&name) || arg.is_global_set()
                {
                    continue;
                }
                let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
                assert!(
                    env.as_deref().is_some_and(|e| e.starts_with("REDLOCK_")),
                    "latch {} --{name} has no REDLOCK_* variable",
                    verb.get_name()
                );
            }
        }
    }
}
