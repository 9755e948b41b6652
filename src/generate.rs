//! `redlock generate completions|man DIR`: shell completions and man pages, made by the binary
//! from its own clap definitions and help text (`help`) so they never drift from `--help`. The
//! results are committed under `completions/` and `man/`; a test regenerates them and fails when
//! they are stale.

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
        let mut command = crate::cli::whole(Cli::command());
        clap_complete::generate_to(shell, &mut command, "redlock", dir)
            .map_err(|e| cannot_write(dir, &e))?;
    }
    Ok(())
}

fn man(dir: &Path) -> anyhow::Result<()> {
    for (file, page) in crate::help::man::pages().map_err(|e| cannot_write(dir, &e))? {
        let path = dir.join(file);
        std::fs::write(&path, page).map_err(|e| cannot_write(&path, &e))?;
    }
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
