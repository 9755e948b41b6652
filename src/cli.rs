//! The command line as the user typed it: clap definitions only, no I/O and no network.

use crate::human;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

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

/// Where the lock lives: valid before or after the subcommand.
#[derive(Args, Debug, Clone)]
pub(crate) struct ServerArgs {
    /// Redis server URL; repeat for each server (redis://[user[:password]@]host[:port][/db],
    /// rediss://…, unix:///path/redis.sock, or a Sentinel group as
    /// redis+sentinel://[user[:password]@]host[:port][,host[:port]…]/MASTER_NAME[/db]).
    /// Quorum is a majority of the distinct servers
    #[arg(
        short = 's',
        long = "server",
        value_name = "URL",
        env = "REDLOCK_SERVERS",
        value_delimiter = ',',
        global = true,
        hide_env_values = true
    )]
    pub(crate) servers: Vec<String>,

    /// Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>
    #[arg(
        long,
        value_name = "P",
        env = "REDLOCK_PREFIX",
        default_value = "redlock:",
        global = true
    )]
    pub(crate) prefix: String,

    /// Budget per server for connecting and answering (at most 60s); one slow or dead server
    /// costs this, no more
    #[arg(long, value_name = "DUR", env = "REDLOCK_TIMEOUT", default_value = "200ms", value_parser = timeout, global = true)]
    pub(crate) timeout: Duration,

    /// ACL username for servers whose URL names none
    #[arg(long, value_name = "USER", env = "REDLOCK_USERNAME", global = true)]
    pub(crate) username: Option<String>,

    /// Read the password for servers whose URL has none from FILE (safer than a URL in argv);
    /// REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME
    /// and REDLOCK_SENTINEL_PASSWORD from the environment
    #[arg(
        long,
        value_name = "FILE",
        env = "REDLOCK_PASSWORD_FILE",
        global = true
    )]
    pub(crate) password_file: Option<PathBuf>,

    /// Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system's
    #[arg(long, value_name = "FILE", env = "REDLOCK_TLS_CA", global = true)]
    pub(crate) tls_ca: Option<PathBuf>,

    /// Client certificate (PEM) for rediss:// servers that require one; needs --tls-key
    #[arg(
        long,
        value_name = "FILE",
        env = "REDLOCK_TLS_CERT",
        requires = "tls_key",
        global = true
    )]
    pub(crate) tls_cert: Option<PathBuf>,

    /// Private key (PEM) of the --tls-cert client certificate
    #[arg(
        long,
        value_name = "FILE",
        env = "REDLOCK_TLS_KEY",
        requires = "tls_cert",
        global = true
    )]
    pub(crate) tls_key: Option<PathBuf>,

    /// DANGEROUS: do not verify rediss:// servers' certificates, so anyone on the network path
    /// can pose as a server and hand out locks. For testing only; prefer --tls-ca
    #[arg(long, env = "REDLOCK_TLS_INSECURE", global = true)]
    pub(crate) tls_insecure: bool,
}

/// What goes to stderr, and in which form. Results (tokens, tables) always go to stdout.
#[derive(Args, Debug, Clone)]
pub(crate) struct OutputArgs {
    /// Print each step's per-server outcome and latency, and the validity obtained
    #[arg(
        short = 'v',
        long,
        env = "REDLOCK_VERBOSE",
        global = true,
        conflicts_with = "quiet"
    )]
    pub(crate) verbose: bool,

    /// Print errors only: no warnings, no events, nothing for a busy lock (the exit status says
    /// it; a JSON log still gets its `busy` event)
    #[arg(short = 'q', long, env = "REDLOCK_QUIET", global = true)]
    pub(crate) quiet: bool,

    /// Form of stderr lines: text for people, json for log collectors (one object per line)
    #[arg(
        long,
        value_name = "FORMAT",
        env = "REDLOCK_LOG_FORMAT",
        default_value = "text",
        global = true
    )]
    pub(crate) log_format: LogFormat,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogFormat {
    Text,
    Json,
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

    /// Write shell completions or man pages (for packagers)
    #[command(hide = true)]
    Generate(GenerateArgs),
}

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
}

/// How a lock is taken, shared by `acquire` and `exec`.
#[derive(Args, Debug, Clone)]
pub(crate) struct TakeArgs {
    /// Lock name (the key is <PREFIX><NAME>)
    pub(crate) name: String,

    /// How long the lock lives on the servers unless extended or released (at most 7d)
    #[arg(long, value_name = "DUR", env = "REDLOCK_TTL", default_value = "30s", value_parser = ttl)]
    pub(crate) ttl: Duration,

    /// Keep trying for up to DUR (at most 7d) while the lock is busy or unreachable (default:
    /// try once)
    #[arg(short = 'w', long, value_name = "DUR", env = "REDLOCK_WAIT", value_parser = wait)]
    pub(crate) wait: Option<Duration>,

    /// Exit status when the lock is busy (default 75)
    #[arg(short = 'E', long = "conflict-exit-code", value_name = "N", env = "REDLOCK_CONFLICT_EXIT_CODE", value_parser = clap::value_parser!(u8))]
    pub(crate) conflict_exit_code: Option<u8>,

    /// Mean pause between attempts while waiting (randomised ±50%)
    #[arg(long, value_name = "DUR", env = "REDLOCK_RETRY_DELAY", default_value = "200ms", value_parser = retry_delay)]
    pub(crate) retry_delay: Duration,

    /// Also get a fencing number, greater than that of every earlier grant of NAME, for the
    /// protected resource to check (exec's command sees REDLOCK_FENCE; acquire prints it on a
    /// second line, or as "fence" with --json). Costs one more round
    #[arg(long, env = "REDLOCK_FENCING")]
    pub(crate) fence: bool,

    /// Treat NAME as a semaphore of N slots (1 to 1000): up to N holders at once, each in a
    /// slot of its own (exec's command sees REDLOCK_SLOT, 0 to N-1). Every user of the
    /// semaphore must give the same N; the mutex NAME is a different lock
    #[arg(long, value_name = "N", env = "REDLOCK_LIMIT", value_parser = limit, allow_hyphen_values = true)]
    pub(crate) limit: Option<usize>,
}

#[derive(Args, Debug)]
pub(crate) struct AcquireArgs {
    #[command(flatten)]
    pub(crate) take: TakeArgs,

    /// Print one JSON object (name, key, token, ttl_ms, validity_ms, and fence with --fence)
    /// instead of the token
    #[arg(long, env = "REDLOCK_JSON")]
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
        value_parser = token
    )]
    pub(crate) token: Option<String>,

    /// Delete the lock whatever its token (for a stuck lock); prints what it removed, exits 1 if
    /// there was nothing. Deliberately has no environment variable: it must be typed each time
    #[arg(long, conflicts_with = "token")]
    pub(crate) force: bool,

    /// NAME is a semaphore of N slots: release the slot TOKEN holds (with --force: every slot)
    #[arg(long, value_name = "N", env = "REDLOCK_LIMIT", value_parser = limit, allow_hyphen_values = true)]
    pub(crate) limit: Option<usize>,

    /// Keep the lock until DUR (at most 7d) after its acquisition instead of deleting it: the
    /// key then expires on its own. The acquisition time is the one in the token, from the
    /// acquiring host's wall clock. Released at once if DUR has already passed
    #[arg(long, value_name = "DUR", env = "REDLOCK_HOLD_AT_LEAST", value_parser = hold, allow_hyphen_values = true, conflicts_with = "force")]
    pub(crate) hold_at_least: Option<Duration>,
}

#[derive(Args, Debug)]
pub(crate) struct ExtendArgs {
    /// Lock name
    pub(crate) name: String,

    /// The token `acquire` printed
    #[arg(long, value_name = "T", env = "REDLOCK_TOKEN", hide_env_values = true, value_parser = token)]
    pub(crate) token: String,

    /// The new TTL, counted from now (at most 7d)
    #[arg(long, value_name = "DUR", env = "REDLOCK_TTL", default_value = "30s", value_parser = ttl)]
    pub(crate) ttl: Duration,

    /// Print one JSON object instead of the validity
    #[arg(long, env = "REDLOCK_JSON")]
    pub(crate) json: bool,

    /// NAME is a semaphore of N slots: extend the slot TOKEN holds
    #[arg(long, value_name = "N", env = "REDLOCK_LIMIT", value_parser = limit, allow_hyphen_values = true)]
    pub(crate) limit: Option<usize>,
}

#[derive(Args, Debug)]
pub(crate) struct StatusArgs {
    /// Lock name; without it, list every lock under the prefix
    pub(crate) name: Option<String>,

    /// Print JSON for programs
    #[arg(long, env = "REDLOCK_JSON")]
    pub(crate) json: bool,

    /// NAME is a semaphore of N slots: show each slot's holder and TTL
    #[arg(long, value_name = "N", env = "REDLOCK_LIMIT", value_parser = limit, allow_hyphen_values = true)]
    pub(crate) limit: Option<usize>,
}

#[derive(Args, Debug)]
pub(crate) struct ExecArgs {
    #[command(flatten)]
    pub(crate) take: TakeArgs,

    /// After SIGTERM to a command that must stop, wait this long (at most 1h) before SIGKILL
    #[arg(long, value_name = "DUR", env = "REDLOCK_KILL_AFTER", default_value = "5s", value_parser = kill_after)]
    pub(crate) kill_after: Duration,

    /// When the command ends, keep the lock until DUR (at most 7d) after it was acquired instead
    /// of releasing it, so hosts whose start is up to DUR later find it busy. For cron across a
    /// fleet: size it to the spread of the hosts' start times and clocks
    #[arg(long, value_name = "DUR", env = "REDLOCK_HOLD_AT_LEAST", value_parser = hold, allow_hyphen_values = true)]
    pub(crate) hold_at_least: Option<Duration>,

    /// Stop a command still running after DUR (at most 7d) as a lost lock stops it (SIGTERM to
    /// its process group, SIGKILL after --kill-after) and exit 124, as timeout(1) does
    #[arg(long, value_name = "DUR", env = "REDLOCK_MAX_RUNTIME", value_parser = max_runtime, allow_hyphen_values = true)]
    pub(crate) max_runtime: Option<Duration>,

    /// The command and its arguments, run directly (no shell)
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
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

/// The longest TTL a lock may be given: longer is a typo (`99999h`) more often than a plan, and
/// a lock that outlives its holder by years is worse than one that must be extended.
pub(crate) const MAX_TTL: Duration = Duration::from_secs(7 * 24 * 3600);
/// The longest `--wait` (and `--retry-delay`).
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(7 * 24 * 3600);
/// The longest per-server `--timeout`.
pub(crate) const MAX_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest `--kill-after`.
pub(crate) const MAX_KILL_AFTER: Duration = Duration::from_secs(3600);
/// The longest `--hold-at-least`: a hold keeps the key alive as a TTL does, so the same ceiling.
pub(crate) const MAX_HOLD: Duration = MAX_TTL;
/// The longest `--max-runtime`.
pub(crate) const MAX_RUNTIME: Duration = Duration::from_secs(7 * 24 * 3600);

/// The most slots a semaphore may have: every attempt's script walks them, and a semaphore that
/// wide is better served by a queue or a rate limiter.
pub(crate) const MAX_LIMIT: usize = 1000;

/// A semaphore's number of slots, `--limit`: a whole number from 1 to `MAX_LIMIT`.
fn limit(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{text}' is not a number of slots; expected a whole number from 1 to {MAX_LIMIT}"
        )),
    }
}

fn ttl(text: &str) -> Result<Duration, String> {
    at_most(text, duration(text)?, MAX_TTL)
}

fn wait(text: &str) -> Result<Duration, String> {
    at_most(text, duration_or_zero(text)?, MAX_WAIT)
}

fn retry_delay(text: &str) -> Result<Duration, String> {
    at_most(text, duration(text)?, MAX_WAIT)
}

fn timeout(text: &str) -> Result<Duration, String> {
    at_most(text, duration(text)?, MAX_TIMEOUT)
}

fn kill_after(text: &str) -> Result<Duration, String> {
    at_most(text, duration(text)?, MAX_KILL_AFTER)
}

fn hold(text: &str) -> Result<Duration, String> {
    at_most(text, duration(text)?, MAX_HOLD)
}

fn max_runtime(text: &str) -> Result<Duration, String> {
    at_most(text, duration(text)?, MAX_RUNTIME)
}

fn at_most(text: &str, value: Duration, max: Duration) -> Result<Duration, String> {
    if value > max {
        return Err(format!(
            "{} is too long; expected at most {}",
            human::quoted(text),
            humantime::format_duration(max)
        ));
    }
    Ok(value)
}

/// A token as `acquire` printed it: never empty or blank, which would match no lock and hide a
/// script's missing variable behind "not held".
fn token(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err(format!(
            "{text:?} is empty; expected the token `redlock acquire` printed"
        ));
    }
    if text.trim_end().contains('\n') {
        // `TOKEN=$(redlock acquire NAME --fence)` captures the fence's line too.
        return Err(format!(
            "{text:?} has more than one line; expected the token alone (acquire --fence prints the token, then the fence on a second line)"
        ));
    }
    Ok(text.to_string())
}

/// A humantime duration with a unit and above zero: `500ms`, `30s`, `2m`.
pub(crate) fn duration(text: &str) -> Result<Duration, String> {
    let parsed = duration_or_zero(text)?;
    if parsed.is_zero() {
        return Err(format!(
            "{} is zero; expected a positive duration such as 500ms or 30s",
            human::quoted(text)
        ));
    }
    Ok(parsed)
}

/// Like `duration`, but `0s` is allowed (for `--wait`, where it means one attempt).
pub(crate) fn duration_or_zero(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('-') {
        return Err(format!(
            "{} is negative; expected a positive duration such as 500ms or 30s",
            human::quoted(text)
        ));
    }
    if !trimmed.is_empty() && trimmed.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(format!(
            "{} has no unit; expected a duration such as {trimmed}ms or {trimmed}s",
            human::quoted(text)
        ));
    }
    humantime::parse_duration(trimmed).map_err(|e| {
        format!(
            "{} is not a duration ({}); expected e.g. 500ms, 30s, 2m",
            human::quoted(text),
            human::printable(&e.to_string())
        )
    })
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

    #[test]
    fn durations_need_a_unit_and_a_positive_value() {
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert!(duration("30").unwrap_err().contains("no unit"));
        assert!(duration("0s").unwrap_err().contains("zero"));
        assert!(duration("-5s").unwrap_err().contains("negative"));
        assert!(duration("soon").is_err());
        assert_eq!(duration_or_zero("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn durations_have_documented_maxima() {
        assert_eq!(ttl("7d"), Ok(MAX_TTL));
        assert!(ttl("99999999999h").unwrap_err().contains("at most 7days"));
        assert!(ttl("8d").is_err());
        assert!(timeout("61s").unwrap_err().contains("at most 1m"));
        assert!(kill_after("2h").is_err());
        assert_eq!(wait("0s"), Ok(Duration::ZERO));
        assert!(wait("30d").is_err());
        assert_eq!(hold("7d"), Ok(MAX_HOLD));
        assert!(hold("8d").is_err());
        assert!(hold("0s").unwrap_err().contains("zero"));
        assert!(max_runtime("5").unwrap_err().contains("no unit"));
        assert!(max_runtime("8d").unwrap_err().contains("at most 7days"));
    }

    #[test]
    fn limits_are_whole_numbers_from_1_to_the_cap() {
        assert_eq!(limit("3"), Ok(3));
        assert_eq!(limit("1000"), Ok(MAX_LIMIT));
        for bad in ["0", "-1", "three", "1001", "2.5", ""] {
            assert!(limit(bad).unwrap_err().contains("from 1 to 1000"), "{bad}");
        }
    }

    #[test]
    fn blank_tokens_are_refused() {
        assert!(token("").is_err());
        assert!(token(" \t").unwrap_err().contains("expected the token"));
        assert_eq!(token("abc").as_deref(), Ok("abc"));
        assert!(token("abc\n7").unwrap_err().contains("second line"));
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        type Parser = fn(&str) -> Result<Duration, String>;

        /// Every duration flag's parser, its maximum, and whether zero is allowed.
        const FLAGS: [(Parser, Duration, bool); 7] = [
            (duration, Duration::MAX, false),
            (duration_or_zero, Duration::MAX, true),
            (ttl, MAX_TTL, false),
            (wait, MAX_WAIT, true),
            (retry_delay, MAX_WAIT, false),
            (timeout, MAX_TIMEOUT, false),
            (kill_after, MAX_KILL_AFTER, false),
        ];

        /// Any text, and text shaped like a duration (signs, huge numbers, fractions, units,
        /// stray whitespace), so that both accepted and rejected paths are walked.
        fn duration_like() -> impl Strategy<Value = String> {
            prop_oneof![
                any::<String>(),
                "[ \t\n]?-?[0-9]{0,22}(\\.[0-9]{0,4})?[ ]?(ns|us|ms|s|sec|m|min|h|d|w|M|y|x|)( ?[0-9]{1,4}(ms|s|m|h|d)){0,2}[ \n]?",
            ]
        }

        /// A usage error as the brief demands: one line that says what was expected.
        fn one_line_with_expectation(message: &str) -> bool {
            !message.contains(['\n', '\r']) && message.contains("expected")
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(128))]

            #[test]
            fn duration_flags_accept_in_range_or_name_the_value_in_one_line(
                text in duration_like()
            ) {
                for (parse, max, zero_allowed) in FLAGS {
                    match parse(&text) {
                        Ok(value) => {
                            prop_assert!(value <= max, "{text:?} gave {value:?}");
                            prop_assert!(zero_allowed || !value.is_zero(), "{text:?} gave zero");
                        }
                        Err(message) => {
                            prop_assert!(one_line_with_expectation(&message), "{message:?}");
                            prop_assert!(message.contains(&human::quoted(&text)), "{message:?}");
                        }
                    }
                }
            }

            #[test]
            fn a_number_and_a_unit_mean_what_they_say(
                n in 1u64..1_000_000,
                (unit, millis) in prop::sample::select(vec![
                    ("ms", 1u64), ("s", 1_000), ("m", 60_000), ("h", 3_600_000),
                ]),
            ) {
                let text = format!("{n}{unit}");
                prop_assert_eq!(duration(&text), Ok(Duration::from_millis(n * millis)));
            }

            #[test]
            fn a_token_is_taken_as_typed_unless_blank(text in any::<String>()) {
                match token(&text) {
                    Ok(taken) => prop_assert_eq!(taken, text),
                    Err(message) => {
                        prop_assert!(text.trim().is_empty(), "{text:?} refused");
                        prop_assert!(one_line_with_expectation(&message), "{message:?}");
                    }
                }
            }
        }
    }
}
