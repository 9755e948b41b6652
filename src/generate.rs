//! `redlock generate completions|man DIR`: shell completions and man pages, made by the binary
//! from its own clap definitions so they never drift from `--help`. The results are committed
//! under `completions/` and `man/`; a test regenerates them and fails when they are stale.

use crate::cli::{Cli, GenerateArgs, Generated};
use crate::exit::{self, Outcome};
use clap::CommandFactory;
use clap_complete::Shell;
use std::path::Path;

pub(crate) fn run(args: &GenerateArgs) -> anyhow::Result<Outcome> {
    std::fs::create_dir_all(&args.dir).map_err(|e| cannot_write(&args.dir, &e))?;
    match args.what {
        Generated::Completions => completions(&args.dir)?,
        Generated::Man => man(&args.dir)?,
    }
    Ok(Outcome::Success)
}

fn completions(dir: &Path) -> anyhow::Result<()> {
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let mut command = Cli::command();
        clap_complete::generate_to(shell, &mut command, "redlock", dir)
            .map_err(|e| cannot_write(dir, &e))?;
    }
    Ok(())
}

fn man(dir: &Path) -> anyhow::Result<()> {
    let mut top = Cli::command();
    // Propagates the global options into every subcommand, so each page lists them.
    top.build();
    write_page(dir, "redlock.1", top.clone())?;
    for sub in top.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("redlock-{}", sub.get_name());
        let page = sub
            .clone()
            .name(name.clone())
            .display_name(name.clone())
            .version(top.get_version().unwrap_or_default().to_string());
        write_page(dir, &format!("{name}.1"), page)?;
    }
    Ok(())
}

fn write_page(dir: &Path, file: &str, command: clap::Command) -> anyhow::Result<()> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut page)
        .map_err(|e| cannot_write(dir, &e))?;
    let path = dir.join(file);
    std::fs::write(&path, page).map_err(|e| cannot_write(&path, &e))?;
    Ok(())
}

fn cannot_write(path: &Path, err: &std::io::Error) -> anyhow::Error {
    exit::fail(
        Outcome::Software,
        format!(
            "cannot write {}: {err}; expected a writable directory",
            path.display()
        ),
    )
}
