//! redlock: a distributed lock on N independent Redis servers, for scripts, crontabs and CI.

mod cli;
mod clock;
mod config;
mod dispatch;
mod exec;
mod exit;
mod generate;
mod hold;
mod human;
mod latch;
mod lock;
mod oneshot;
mod progress;
mod report;
mod schedule;
mod server;
mod signals;
mod status;
mod take;
mod token;

use clap::Parser;
use exit::Outcome;
use report::Reporter;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // --help and --version: print as clap does and succeed.
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err)
            if err.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            // Bare `redlock`: the help is what the user needs, but it is still a usage error.
            let _ = err.print();
            return ExitCode::from(Outcome::Usage.code());
        }
        Err(err) => {
            eprintln!("redlock: {}", one_line(&err.render().to_string()));
            return ExitCode::from(Outcome::Usage.code());
        }
    };
    let reporter = Reporter::from_args(&cli.output);
    match dispatch::run(cli, reporter) {
        Ok(outcome) => ExitCode::from(outcome.code()),
        Err(err) => {
            let (code, has_message) = exit::code_of(&err);
            if has_message {
                reporter.error(&format!("{err:#}"), code);
            }
            ExitCode::from(code)
        }
    }
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
