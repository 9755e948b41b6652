//! Each subcommand's own arguments (`acquire`, `release`, `extend`, `status`, `exec` and the
//! hidden `generate`), under the headings `--help` groups them by; `history`'s are history.rs's.

use super::headings::{EXEC, LOCK, OUTPUT, WAITING};
use super::history::RecordArgs;
use super::values::{hold, kill_after, limit, max_runtime, retry_delay, token, ttl, wait, watch};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub(crate) struct GenerateArgs {
    /// What to write
    pub(crate) what: Generated,

    /// Directory to write the files into (created if missing)
    pub(crate) dir: PathBuf,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Generated {
    /// redlock.bash, _redlock (zsh) and redlock.fish
    Completions,
    /// redlock.1 and one page per subcommand (redlock-acquire.1, …)
    Man,
    /// json.md, the JSON documents' fields (docs/json.md)
    Json,
    /// schema.json, docs/json.md's tables as data (for the tests)
    Schema,
}

/// How a lock is taken, shared by `acquire` and `exec`.
#[derive(Args, Debug, Clone)]
pub(crate) struct TakeArgs {
    /// Lock name (the key is <PREFIX><NAME>)
    pub(crate) name: String,

    /// How long the lock lives (at most 7d)
    ///
    /// On the servers, unless extended or released; exec renews it every TTL/3 while its
    /// command runs.
    #[arg(long, value_name = "DUR", env = "REDLOCK_TTL", default_value = "30s", value_parser = ttl, help_heading = LOCK)]
    pub(crate) ttl: Duration,

    /// Keep trying up to DUR while the lock is busy
    ///
    /// Or while too few servers answer. At most 7d; without it, redlock tries once.
    #[arg(short = 'w', long, value_name = "DUR", env = "REDLOCK_WAIT", value_parser = wait, help_heading = WAITING)]
    pub(crate) wait: Option<Duration>,

    /// Exit status when the lock is busy (default 75)
    #[arg(short = 'E', long = "conflict-exit-code", value_name = "N", env = "REDLOCK_CONFLICT_EXIT_CODE", value_parser = clap::value_parser!(u8), help_heading = WAITING)]
    pub(crate) conflict_exit_code: Option<u8>,

    /// Mean pause between attempts while waiting (randomised ±50%)
    #[arg(long, value_name = "DUR", env = "REDLOCK_RETRY_DELAY", default_value = "200ms", value_parser = retry_delay, help_heading = WAITING, hide_short_help = true)]
    pub(crate) retry_delay: Duration,

    /// Also get a fencing number for the resource to check
    ///
    /// It is greater than that of every earlier grant of NAME (exec's command sees
    /// REDLOCK_FENCE; acquire prints it on a second line, or as "fence" with --json). Costs one
    /// more round. Its variable is REDLOCK_FENCING, not REDLOCK_FENCE: that one is the number
    /// exec gives its command, and a redlock that the command runs must not turn on --fence by
    /// inheriting it.
    #[arg(long, env = "REDLOCK_FENCING", help_heading = LOCK)]
    pub(crate) fence: bool,

    /// A semaphore: up to N holders of NAME at once (1 to 1000)
    ///
    /// Each holder is in a slot of its own (exec's command sees REDLOCK_SLOT, 0 to N-1). The
    /// servers remember N while it has holders: another N exits 64. The mutex NAME is a
    /// different lock.
    #[arg(long, value_name = "N", env = "REDLOCK_LIMIT", value_parser = limit, allow_hyphen_values = true, help_heading = LOCK)]
    pub(crate) limit: Option<usize>,

    /// Take NAME shared, as flock -s does
    ///
    /// Any number of shared holders at once, none while an exclusive holder has it, and none
    /// who arrive after an exclusive waiter (exec's command sees REDLOCK_SHARED=1). Not with
    /// --limit; with --fence, the current fence is read and no new one is taken. Its variable
    /// is REDLOCK_SHARING, not REDLOCK_SHARED: that one is what exec --shared gives its command,
    /// and a redlock that the command runs for another lock must not turn shared by inheriting
    /// it.
    #[arg(long, env = SHARING, help_heading = LOCK)]
    pub(crate) shared: bool,
}

/// The environment variable of `--shared`. Not REDLOCK_SHARED, which `exec --shared` gives its
/// command: a `redlock` that command runs for another lock must not become shared by inheriting
/// it.
const SHARING: &str = "REDLOCK_SHARING";

#[derive(Args, Debug)]
pub(crate) struct AcquireArgs {
    #[command(flatten)]
    pub(crate) take: TakeArgs,

    /// Print one JSON object instead of the token
    ///
    /// Its fields: version, name, key, token, ttl_ms, validity_ms, servers, votes, and fence and
    /// slot with --fence and --limit (docs/json.md).
    #[arg(long, env = "REDLOCK_JSON", help_heading = OUTPUT)]
    pub(crate) json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct ReleaseArgs {
    /// Lock name
    pub(crate) name: String,

    /// The token `acquire` printed
    #[arg(
        long,
        value_name = "T",
        env = "REDLOCK_TOKEN",
        hide_env_values = true,
        required_unless_present = "force",
        value_parser = token,
        help_heading = LOCK
    )]
    pub(crate) token: Option<String>,

    /// Delete the lock whatever its token (a stuck lock)
    ///
    /// Prints what it removed, and exits 1 if there was nothing. Deliberately has no
    /// environment variable: it must be typed each time.
    #[arg(long, conflicts_with = "token", help_heading = LOCK)]
    pub(crate) force: bool,

    /// NAME is a semaphore: release the slot TOKEN holds
    ///
    /// NAME is a semaphore of N slots: with --force, every slot is released. Without --limit, a
    /// token that holds no lock NAME releases its slot of the semaphore NAME.
    #[arg(long, value_name = "N", env = "REDLOCK_LIMIT", value_parser = limit, allow_hyphen_values = true, help_heading = LOCK)]
    pub(crate) limit: Option<usize>,

    /// TOKEN is a shared holder's (acquire --shared)
    ///
    /// It leaves the shared holders, and the last one to leave frees the lock. Its variable is
    /// REDLOCK_SHARING, not REDLOCK_SHARED (what exec --shared gives its command).
    #[arg(long, env = SHARING, help_heading = LOCK)]
    pub(crate) shared: bool,

    /// Keep the lock until DUR after its acquisition
    ///
    /// Instead of deleting it: the key then expires on its own (DUR at most 7d). The
    /// acquisition time is the one in the token, from the acquiring host's wall clock; each
    /// server counts DUR from it on its own clock, never past DUR from now (this host's clock
    /// plays no part). Released at once if DUR has passed.
    #[arg(long, value_name = "DUR", env = "REDLOCK_HOLD_AT_LEAST", value_parser = hold, allow_hyphen_values = true, conflicts_with = "force", help_heading = LOCK)]
    pub(crate) hold_at_least: Option<Duration>,

    #[command(flatten)]
    pub(crate) record: RecordArgs,
}

#[derive(Args, Debug)]
pub(crate) struct ExtendArgs {
    /// Lock name
    pub(crate) name: String,

    /// The token `acquire` printed
    #[arg(long, value_name = "T", env = "REDLOCK_TOKEN", hide_env_values = true, value_parser = token, help_heading = LOCK)]
    pub(crate) token: String,

    /// The new TTL, counted from now (at most 7d)
    #[arg(long, value_name = "DUR", env = "REDLOCK_TTL", default_value = "30s", value_parser = ttl, help_heading = LOCK)]
    pub(crate) ttl: Duration,

    /// Print one JSON object instead of the validity
    ///
    /// Its fields: version, name, key, token, ttl_ms, validity_ms, servers, votes
    /// (docs/json.md).
    #[arg(long, env = "REDLOCK_JSON", help_heading = OUTPUT)]
    pub(crate) json: bool,

    /// NAME is a semaphore: extend the slot TOKEN holds
    ///
    /// Without --limit, a token that holds no lock NAME extends its slot of the semaphore NAME.
    #[arg(long, value_name = "N", env = "REDLOCK_LIMIT", value_parser = limit, allow_hyphen_values = true, help_heading = LOCK)]
    pub(crate) limit: Option<usize>,

    /// TOKEN is a shared holder's (acquire --shared)
    ///
    /// Its variable is REDLOCK_SHARING, not REDLOCK_SHARED (what exec --shared gives its
    /// command).
    #[arg(long, env = SHARING, help_heading = LOCK)]
    pub(crate) shared: bool,
}

#[derive(Args, Debug)]
pub(crate) struct StatusArgs {
    /// Lock name; without it, list every lock under the prefix
    pub(crate) name: Option<String>,

    /// Print one JSON object for programs
    ///
    /// Its fields: docs/json.md.
    #[arg(long, env = "REDLOCK_JSON", help_heading = OUTPUT)]
    pub(crate) json: bool,

    /// NAME is a semaphore of N slots: show each slot's holder
    ///
    /// And its TTL. Without --limit, a name that is a semaphore is shown as one (and beside the
    /// lock NAME, when both are held).
    #[arg(long, value_name = "N", env = "REDLOCK_LIMIT", value_parser = limit, allow_hyphen_values = true, help_heading = LOCK)]
    pub(crate) limit: Option<usize>,

    /// Changes nothing: status always shows the mode
    ///
    /// Accepted so that one set of options (and REDLOCK_SHARING) fits every subcommand: status
    /// always shows whether NAME is held exclusively or shared, and by whom.
    #[arg(long, env = SHARING, help_heading = LOCK)]
    pub(crate) shared: bool,

    /// Watch it every DUR (default 2s) until Ctrl-C
    ///
    /// Over the same connections, until interrupted (exit 0 on Ctrl-C): the table redrawn in
    /// place on a terminal, else one table (or with --json one document) per refresh.
    /// Deliberately has no environment variable: an exported one would make every status in a
    /// script run forever.
    #[arg(long, value_name = "DUR", num_args = 0..=1, default_missing_value = "2s", value_parser = watch, help_heading = OUTPUT)]
    pub(crate) watch: Option<Duration>,

    /// Walk every key of every server, however many it holds
    ///
    /// A server of over 100,000 keys is otherwise listed from the index of the keys redlock set
    /// there, which is quick but does not have a lock another client (redsync, redis-py) took:
    /// --scan walks every key (SCAN), at about 1 µs a key of the server's time.
    #[arg(long, env = "REDLOCK_SCAN", help_heading = OUTPUT, hide_short_help = true)]
    pub(crate) scan: bool,
}

#[derive(Args, Debug)]
pub(crate) struct ExecArgs {
    #[command(flatten)]
    pub(crate) take: TakeArgs,

    /// After SIGTERM to a command that must stop, wait this long (at most 1h) before SIGKILL
    #[arg(long, value_name = "DUR", env = "REDLOCK_KILL_AFTER", default_value = "5s", value_parser = kill_after, help_heading = EXEC, hide_short_help = true)]
    pub(crate) kill_after: Duration,

    /// Keep the lock until DUR after it was taken
    ///
    /// When the command ends, the lock is kept until DUR (at most 7d) after it was acquired
    /// instead of released, so hosts whose start is up to DUR later find it busy. For cron
    /// across a fleet: size it to the spread of the hosts' start times and clocks.
    #[arg(long, value_name = "DUR", env = "REDLOCK_HOLD_AT_LEAST", value_parser = hold, allow_hyphen_values = true, help_heading = EXEC)]
    pub(crate) hold_at_least: Option<Duration>,

    /// Stop the command after DUR and exit 124
    ///
    /// A command still running after DUR (at most 7d) is stopped as a lost lock stops it
    /// (SIGTERM to its process group, SIGKILL after --kill-after), as timeout(1) does.
    #[arg(long, value_name = "DUR", env = "REDLOCK_MAX_RUNTIME", value_parser = max_runtime, allow_hyphen_values = true, help_heading = EXEC)]
    pub(crate) max_runtime: Option<Duration>,

    #[command(flatten)]
    pub(crate) record: RecordArgs,

    /// The command and its arguments, run directly (no shell)
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}
