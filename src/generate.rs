//! `redlock generate completions|man|json|schema DIR`: shell completions and man pages, made by
//! the binary from its own clap definitions and help text (`help`) so they never drift from
//! `--help`, and docs/json.md made from the document structs (`schema::render`). The results
//! are committed under `completions/`, `man/` and `docs/`; a test regenerates them and fails
//! when they are stale. `schema` writes docs/json.md's tables as data, for the test that checks
//! real documents against them.

use crate::cli::{Cli, GenerateArgs, Generated};
use crate::exit::{self, Outcome};
use crate::schema::render;
use clap::CommandFactory;
use clap_complete::Shell;
use std::path::Path;

pub(crate) fn run(args: &GenerateArgs) -> anyhow::Result<Outcome> {
    std::fs::create_dir_all(&args.dir).map_err(|e| cannot_write(&args.dir, &e))?;
    match args.what {
        Generated::Completions => completions(&args.dir)?,
        Generated::Man => man(&args.dir)?,
        Generated::Json => write(&args.dir.join("json.md"), &render::markdown())?,
        Generated::Schema => write(&args.dir.join("schema.json"), &render::data()?)?,
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

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).map_err(|e| cannot_write(path, &e))
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
