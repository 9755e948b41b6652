//! redlock: a distributed lock on N independent Redis servers, for scripts, crontabs and CI.

mod cli;
mod clock;
mod config;
mod dispatch;
mod doctor;
mod exec;
mod exit;
mod generate;
mod give_back;
#[cfg(all(target_env = "musl", feature = "dlmalloc"))]
mod heap;
mod help;
mod history;
mod human;
mod info;
mod latch;
mod lock;
mod oneshot;
mod progress;
mod report;
mod retry;
mod schedule;
mod schema;
mod server;
mod signals;
mod status;
mod take;
mod token;
mod usage;

use report::Reporter;

/// The static musl build's allocator (heap.rs; Cargo.toml says why not musl's own).
#[cfg(all(target_env = "musl", feature = "dlmalloc"))]
#[global_allocator]
static ALLOCATOR: heap::Heap = heap::Heap::new();
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match usage::parse() {
        Ok(cli) => cli,
        Err(code) => return code,
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
