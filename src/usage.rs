//! From the command line as typed to a parsed `Cli`, or to the exit that ends the run there:
//! `--help`, `--version` and `redlock help [COMMAND]` print and succeed; a bare `redlock` prints
//! the help and is still a usage error; any other mistake is one line on stderr and exit 64.
//!
//! A flock(1) habit (`-n`, `-w 10`, `-c CMD`, `-x`, `-s` with no server URL after it, `flock FILE
//! COMMAND`…) fails as any mistake does, but its line names the redlock way, as docs/guide.md's
//! "Coming from flock" table does.

use crate::cli::Cli;
use crate::exit::Outcome;
use crate::human;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, FromArgMatches};
use std::ffi::OsString;
use std::process::ExitCode;

/// flock(1)'s options that redlock has no use for, and what to write instead.
const FLOCK: &[(&[&str], &str)] = &[
    (
        &["-n", "--nb", "--nonblock"],
        "redlock tries once unless --wait is given, so leave it out",
    ),
    (
        &["-w", "--wait"],
        "--wait goes after the subcommand and needs a unit: redlock exec NAME --wait 10s -- COMMAND",
    ),
    (
        &["-c", "--command"],
        "redlock runs a shell command as: redlock exec NAME -- sh -c CMD",
    ),
    (
        &["-x", "-e", "--exclusive"],
        "a redlock lock is exclusive unless --shared is given, so leave it out",
    ),
    (&["-s", "--shared"], SHARED),
    (
        &["-u", "--unlock"],
        "redlock releases a lock with: redlock release NAME --token TOKEN",
    ),
    (
        &["-o", "--close"],
        "redlock exec's COMMAND holds no lock file descriptor, so leave it out",
    ),
    (
        &["-F", "--no-fork"],
        "redlock exec stays beside COMMAND to renew the lock, so leave it out",
    ),
];

/// What flock's `-s` (a shared lock) becomes. Its `-s` only reaches `shared_lock` below: redlock's
/// `-s` names a server, so clap takes what follows it for a URL.
const SHARED: &str =
    "a shared lock is --shared, after the subcommand: redlock exec NAME --shared -- COMMAND";

/// The parsed command line, or the status the run ends with (having printed why).
pub(crate) fn parse() -> Result<Cli, ExitCode> {
    let args: Vec<OsString> = std::env::args_os().collect();
    let typed: Vec<String> = args
        .iter()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    if let Some(message) = shared_lock(&typed) {
        return Err(usage_error(&message));
    }
    let width = crate::help::width();
    // The pages' text after the options is laid out only when a help page is shown: every
    // other run would pay for wrapping it (a tenth of a millisecond) for nothing.
    let parse = |mut command: clap::Command| {
        let parsed = command
            .try_get_matches_from_mut(&args)
            .and_then(|mut matches| Cli::from_arg_matches_mut(&mut matches));
        // Tearing clap's definition down would cost a fifth of parsing; the process keeps a
        // few kilobytes instead.
        std::mem::forget(command);
        parsed
    };
    let parsed = match parse(Cli::command().term_width(width)) {
        Err(err) if shows_help(err.kind()) => parse(crate::help::command(width)),
        parsed => parsed,
    };
    match parsed {
        Ok(cli) => Ok(cli),
        Err(err) if !err.use_stderr() => {
            // --help, --version and `redlock help`: print as clap does and succeed.
            let _ = err.print();
            Err(ExitCode::SUCCESS)
        }
        Err(err) if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // Bare `redlock`: the help is what the user needs, but it is still a usage error.
            let _ = err.print();
            Err(ExitCode::from(Outcome::Usage.code()))
        }
        Err(err) => Err(usage_error(&message(&err, &typed))),
    }
}

/// Whether clap's answer is a help page (which carries the pages' text).
fn shows_help(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    )
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("redlock: {}", human::printable(message));
    ExitCode::from(Outcome::Usage.code())
}

/// clap's error in one line, with the redlock spelling when the mistake is a flock habit.
fn message(err: &clap::Error, typed: &[String]) -> String {
    let line = one_line(&err.render().to_string());
    let context = |kind| match err.get(kind) {
        Some(ContextValue::String(text)) => Some(text.as_str()),
        _ => None,
    };
    let hint = match err.kind() {
        ErrorKind::UnknownArgument => context(ContextKind::InvalidArg)
            .and_then(|arg| flock_option(arg).or_else(|| command_without_separator(arg, typed))),
        ErrorKind::ValueValidation => {
            let (Some(arg), Some(value)) = (
                context(ContextKind::InvalidArg),
                context(ContextKind::InvalidValue),
            ) else {
                return line;
            };
            if let Some(message) = bare_number(arg, value) {
                return message;
            }
            None
        }
        ErrorKind::InvalidSubcommand => match err.get(ContextKind::SuggestedSubcommand) {
            Some(ContextValue::Strings(similar)) if !similar.is_empty() => {
                Some(format!("did you mean '{}'?", similar.join("' or '")))
            }
            // `flock FILE COMMAND` (but `redlock help NAME` is only a typo).
            _ if typed.get(1).is_some_and(|word| word == "help") => None,
            _ => context(ContextKind::InvalidSubcommand).map(|name| {
                format!("to run COMMAND under lock '{name}': redlock exec {name} -- COMMAND")
            }),
        },
        _ => None,
    };
    match hint {
        Some(hint) => format!("{line}; {hint}"),
        None => line,
    }
}

fn flock_option(arg: &str) -> Option<String> {
    FLOCK
        .iter()
        .find(|(spellings, _)| spellings.contains(&arg))
        .map(|(_, hint)| hint.to_string())
}

/// `redlock exec NAME ./job.sh`: the command must follow `--`, which flock does not need.
fn command_without_separator(arg: &str, typed: &[String]) -> Option<String> {
    let exec = typed.iter().any(|word| word == "exec");
    (exec && !arg.starts_with('-'))
        .then(|| format!("the command goes after --: redlock exec NAME -- {arg}"))
}

/// `-w 10`: flock counts seconds; a redlock duration carries its unit, always.
fn bare_number(arg: &str, value: &str) -> Option<String> {
    let flag = arg.strip_suffix(" <DUR>")?;
    let number = value.trim();
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let aside = if flag == "--timeout" {
        " (the time each server may take; flock's --timeout is --wait here)"
    } else {
        ""
    };
    Some(format!(
        "invalid value {} for '{arg}': durations need a unit: {flag} {number}s{aside}",
        human::quoted(value)
    ))
}

/// flock's `-s` (a shared lock): `-s` with no server URL after it, before any `--`. A value
/// with `:` or a leading `/` is taken for a URL or socket path and left to the URL checks.
fn shared_lock(typed: &[String]) -> Option<String> {
    let own = typed.iter().skip(1).take_while(|word| *word != "--");
    let words: Vec<&String> = own.collect();
    let at = words.iter().position(|word| *word == "-s")?;
    let found = match words.get(at + 1) {
        Some(value) if value.contains(':') || value.starts_with('/') => return None,
        Some(value) if !value.starts_with('-') => human::quoted(value),
        _ => "nothing".to_string(),
    };
    Some(format!(
        "'-s' is --server URL in redlock, not flock's shared lock: expected e.g. -s redis://HOST:6379, found {found}; {SHARED}"
    ))
}

/// clap's report spans several lines (the error, its details, usage, a hint); scripts get one
/// line: the error and its details, without the `error:` tag.
fn one_line(report: &str) -> String {
    report
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches("error: ")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message a command line gets, as `parse` prints it.
    fn says(line: &str) -> String {
        let typed: Vec<String> = std::iter::once("redlock")
            .chain(line.split_whitespace())
            .map(String::from)
            .collect();
        if let Some(message) = shared_lock(&typed) {
            return message;
        }
        let err = crate::help::command(80)
            .try_get_matches_from(&typed)
            .expect_err(line);
        message(&err, &typed)
    }

    #[test]
    fn flock_options_name_the_redlock_way() {
        let cases = [
            ("-n job true", "redlock tries once unless --wait is given"),
            ("exec --nonblock job -- true", "tries once unless --wait"),
            ("exec job -c make", "exec NAME -- sh -c CMD"),
            ("exec -x job -- true", "exclusive unless --shared"),
            ("exec -e job -- true", "exclusive unless --shared"),
            ("-w 10 exec job -- true", "redlock exec NAME --wait 10s"),
            ("exec job --unlock", "redlock release NAME --token"),
        ];
        for (line, hint) in cases {
            let message = says(line);
            assert!(message.contains(hint), "{line}: {message}");
            assert!(!message.contains('\n'), "{line}: {message}");
        }
    }

    #[test]
    fn a_duration_without_a_unit_is_shown_with_one() {
        assert_eq!(
            says("exec -w 10 job -- true"),
            "invalid value '10' for '--wait <DUR>': durations need a unit: --wait 10s"
        );
        assert!(says("--timeout 2 status").contains("--timeout 2s (the time each server"));
        assert!(says("exec --ttl 1.5 job -- true").contains("--ttl 1.5s"));
        // A duration wrong in another way keeps the parser's own message.
        assert!(says("exec -w soon job -- true").contains("is not a duration"));
    }

    #[test]
    fn dash_s_without_a_url_is_flocks_shared_lock() {
        for line in [
            "-s job exec x -- true",
            "exec -s job -- true",
            "exec job -s -- true",
        ] {
            let message = says(line);
            assert!(
                message.contains("not flock's shared lock"),
                "{line}: {message}"
            );
            assert!(message.contains("--shared"), "{line}: {message}");
        }
        assert!(says("exec -s job -- true").contains("found 'job';"));
        assert!(says("exec job -s -- true").contains("found nothing;"));
        let typed = |line: &str| -> Vec<String> {
            std::iter::once("redlock")
                .chain(line.split_whitespace())
                .map(String::from)
                .collect()
        };
        for line in [
            "-s redis://h:1 exec job -- true",
            "-s /run/redis.sock status",
            "exec job -- sort -s",
        ] {
            assert_eq!(shared_lock(&typed(line)), None, "{line}");
        }
    }

    #[test]
    fn flocks_file_then_command_becomes_exec() {
        assert!(says("job ./backup.sh").contains("redlock exec job -- COMMAND"));
        assert!(says("exce job -- true").contains("'exec'?"));
        assert!(says("exec job ./backup.sh")
            .contains("goes after --: redlock exec NAME -- ./backup.sh"));
    }

    /// docs/guide.md's "Coming from flock" table names every flock spelling answered here.
    #[test]
    fn the_documented_table_lists_every_flock_option() {
        let doc = include_str!("../docs/guide.md");
        let section = doc
            .split("## Coming from flock")
            .nth(1)
            .expect("docs/guide.md has a Coming from flock section");
        let section = section.split("\n## ").next().unwrap_or_default();
        // The words of its `code` spans.
        let words: Vec<&str> = section
            .split('`')
            .skip(1)
            .step_by(2)
            .flat_map(str::split_whitespace)
            .collect();
        for (spellings, _) in FLOCK {
            for spelling in *spellings {
                assert!(words.contains(spelling), "{spelling}");
            }
        }
    }
}
