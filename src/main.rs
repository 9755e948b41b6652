//! redlock: a distributed lock on N independent Redis servers, for scripts, crontabs and CI.

mod cli;
mod clock;
mod commands;
mod config;
mod exec;
#[allow(dead_code)] // exec (next) uses the rest of the table
mod exit;
#[allow(dead_code)] // exec (next) uses renewal deadlines and wake-ups
mod lock;
mod progress;
mod server;
#[allow(dead_code)] // exec (next) unblocks signals in its child
mod signals;
mod status;
mod token;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // --help and --version: print as clap does and succeed.
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err) => {
            // clap's own report spans several lines; scripts get one, naming the bad value.
            let rendered = err.render().to_string();
            let line = rendered.lines().next().unwrap_or("invalid arguments");
            eprintln!("redlock: {}", line.trim_start_matches("error: "));
            return ExitCode::from(exit::USAGE);
        }
    };
    match commands::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let (code, has_message) = exit::code_of(&err);
            if has_message {
                eprintln!("redlock: {err:#}");
            }
            ExitCode::from(code)
        }
    }
}
