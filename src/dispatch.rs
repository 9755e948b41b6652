//! From the parsed command line to the subcommand that handles it: the validated configuration
//! is built here, once, and each subcommand gets it with the run's reporter.

use crate::cli::{Cli, Command};
use crate::config::Config;
use crate::exit::Outcome;
use crate::report::Reporter;

pub(crate) fn run(cli: Cli, reporter: Reporter) -> anyhow::Result<Outcome> {
    if let Command::Generate(args) = &cli.command {
        return crate::generate::run(args);
    }
    let config = Config::from_args(&cli.servers)?;
    if let Command::Doctor(args) = &cli.command {
        // Its findings say what the warnings would.
        return crate::doctor::run(&config, args, cli.output.verbose);
    }
    for warning in &config.warnings {
        reporter.warn(warning);
    }
    match cli.command {
        Command::Acquire(args) => crate::oneshot::acquire(&config, reporter, &args),
        Command::Release(args) => crate::oneshot::release(&config, reporter, &args),
        Command::Extend(args) => crate::oneshot::extend(&config, reporter, &args),
        Command::Status(args) => crate::status::run(&config, reporter, &args),
        Command::History(args) => crate::history::run(&config, reporter, &args),
        Command::Exec(args) => crate::exec::run(&config, reporter, &args),
        Command::Latch(args) => crate::latch::run(&config, reporter, &args),
        Command::Doctor(args) => crate::doctor::run(&config, &args, cli.output.verbose),
        Command::Generate(args) => crate::generate::run(&args),
    }
}
