//! What `-h`, `--help` and the man pages say besides the options, written once for all three so
//! that they cannot drift. `pages` holds each page's examples and environment, `notes` what
//! explains a page (lock states, findings, the deployment contract); the exit statuses are
//! `exit`'s table; `text` lays them out after the options at the terminal's width (`-h` a
//! screen: a few examples and where the rest is; `--help` everything), `brief` keeps each option
//! of `-h` to its line, and `man` writes the man pages' sections (in `roff`). This file attaches
//! the text to the command line clap parses.

mod brief;
pub(crate) mod man;
mod notes;
mod pages;
mod roff;
mod text;

use crate::cli::Cli;
use clap::CommandFactory;
use pages::Page;

/// The width `--help` is laid out for: the terminal's (that of stdout, stderr or stdin, as clap
/// asks), else `COLUMNS`, else 100; and never more than 100, so that a line can be read at a
/// glance on a wide terminal.
pub(crate) fn width() -> usize {
    const MAX: usize = 100;
    let terminal = [
        rustix::termios::tcgetwinsize(std::io::stdout()),
        rustix::termios::tcgetwinsize(std::io::stderr()),
        rustix::termios::tcgetwinsize(std::io::stdin()),
    ]
    .into_iter()
    .find_map(|size| size.ok().filter(|size| size.ws_col > 0))
    .map(|size| usize::from(size.ws_col));
    let columns = || {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&c| c > 0)
    };
    terminal.or_else(columns).unwrap_or(MAX).min(MAX)
}

/// The command line as clap parses it, with each page's help text attached after its options
/// (`-h`'s and `--help`'s), laid out for `width` columns.
pub(crate) fn command(width: usize) -> clap::Command {
    let mut command = crate::cli::whole(Cli::command()).term_width(width);
    for page in Page::ALL {
        let short = text::after_short_help(page, width);
        let long = text::after_help(page, width);
        let attach = |command: clap::Command| command.after_help(short).after_long_help(long);
        command = match page.command() {
            None => attach(command),
            Some(name) => command.mut_subcommand(name, attach),
        };
    }
    brief::notes_in_texts(command)
}
