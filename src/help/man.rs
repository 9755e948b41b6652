//! The man pages, `redlock(1)` and one per subcommand: NAME and OPTIONS as clap_mangen writes
//! them from the clap definitions, and SYNOPSIS (clap_mangen's leaves out the options' values),
//! DESCRIPTION, ENVIRONMENT, DEPLOYMENT (the contract the servers must keep), EXIT STATUS,
//! EXAMPLES and SEE ALSO written here from the same definitions and tables as `--help`'s text.

use super::notes::CONTRACT;
use super::pages::{Page, Variable};
use super::roff::{escape, item};
use crate::cli::Cli;
use clap::{ArgAction, CommandFactory};
use clap_mangen::Man;
use std::io::Write;

/// Every page, as its file name (`redlock.1`, `redlock-exec.1`…) and roff text.
pub(crate) fn pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    // `redlock help` has no page of its own: each page is the help.
    // Every build shares the pages: they carry the version, not the target `--version` names.
    let mut top = crate::cli::whole(Cli::command())
        .disable_help_subcommand(true)
        .version(env!("CARGO_PKG_VERSION"));
    // Propagates the global options into every subcommand, so each page lists them.
    top.build();
    let version = top.get_version().unwrap_or_default().to_string();
    Page::ALL
        .iter()
        .map(|&page| {
            let command = match page.command() {
                None => top.clone(),
                Some(name) => {
                    let full = format!("redlock-{name}");
                    top.find_subcommand(name)
                        .expect("every page is a subcommand")
                        .clone()
                        .name(full.clone())
                        .display_name(full)
                        .version(version.clone())
                }
            };
            let file = format!("{}.1", command.get_name());
            Ok((file, render(&top, command, page)?))
        })
        .collect()
}

fn render(top: &clap::Command, command: clap::Command, page: Page) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let about = command.get_long_about().or(command.get_about());
    let about = about.map(|about| about.to_string());
    let man = Man::new(command.clone());
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    out.write_all(synopsis(&command).as_bytes())?;
    out.write_all(description(about.as_deref().unwrap_or_default(), page).as_bytes())?;
    man.render_options_section(&mut out)?;
    if page == Page::Top {
        man.render_subcommands_section(&mut out)?;
    }
    out.write_all(environment(top, &command, page).as_bytes())?;
    out.write_all(contract().as_bytes())?;
    out.write_all(exit_status(page).as_bytes())?;
    out.write_all(examples(page).as_bytes())?;
    out.write_all(see_also(page).as_bytes())?;
    man.render_version_section(&mut out)?;
    Ok(out)
}

/// The command line's shape: the command, each option with its value (`[--ttl DUR]`, a
/// repeatable one followed by `...`), then its arguments (`--` before a trailing command) or
/// its subcommand.
fn synopsis(command: &clap::Command) -> String {
    let bold = |text: &str| format!("\\fB{}\\fR", escape(text));
    let italic = |text: &str| format!("\\fI{}\\fR", escape(text));
    let value = |arg: &clap::Arg| -> String {
        let names = arg.get_value_names().map(|names| {
            let names: Vec<&str> = names.iter().map(|name| name.as_str()).collect();
            names.join(" ")
        });
        names.unwrap_or_else(|| arg.get_id().as_str().to_uppercase())
    };
    let name = command.get_bin_name().unwrap_or(command.get_name());
    let mut parts = vec![bold(name)];
    let shown: Vec<&clap::Arg> = command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .collect();
    for arg in shown.iter().filter(|arg| !arg.is_positional()) {
        let mut flag = match (arg.get_short(), arg.get_long()) {
            (Some(short), Some(long)) => format!(
                "{}|{}",
                bold(&format!("-{short}")),
                bold(&format!("--{long}"))
            ),
            (Some(short), None) => bold(&format!("-{short}")),
            (None, Some(long)) => bold(&format!("--{long}")),
            (None, None) => continue,
        };
        if arg.get_action().takes_values() {
            let optional = arg
                .get_num_args()
                .is_some_and(|range| range.min_values() == 0);
            let shown = italic(&value(arg));
            // Unbreakable spaces: an option and its value stay on one line.
            flag = if optional {
                format!("{flag}\\ [{shown}]")
            } else {
                format!("{flag}\\ {shown}")
            };
        }
        let mut part = if arg.is_required_set() {
            flag
        } else {
            format!("[{flag}]")
        };
        if matches!(arg.get_action(), ArgAction::Append) {
            part.push_str("...");
        }
        parts.push(part);
    }
    for arg in shown.iter().filter(|arg| arg.is_positional()) {
        if arg.is_last_set() {
            parts.push(bold("--"));
        }
        let mut part = italic(&value(arg));
        if arg
            .get_num_args()
            .is_some_and(|range| range.max_values() > 1)
        {
            part.push_str("...");
        }
        parts.push(if arg.is_required_set() {
            part
        } else {
            format!("[{part}]")
        });
    }
    if command.has_subcommands() {
        let name = command.get_subcommand_value_name().unwrap_or("COMMAND");
        parts.push(italic(name));
    }
    // Neither hyphenated (an option is never split across lines) nor justified (which would
    // stretch the spaces between unbreakable options).
    format!(".SH SYNOPSIS\n.nh\n.ad l\n{}\n.ad\n.hy\n", parts.join(" "))
}

fn description(about: &str, page: Page) -> String {
    let mut roff = format!(".SH DESCRIPTION\n{}\n", escape(about));
    if let Some(notes) = page.notes() {
        roff.push_str(&format!(
            ".SS \"{}\"\n{}\n",
            notes.heading,
            escape(notes.intro)
        ));
        for (term, text) in (notes.rows)() {
            roff.push_str(&item(&term, &text));
        }
        roff.push_str(&format!(".PP\n{}\n", escape(notes.outro)));
    }
    roff
}

/// The variables of the page's options, those redlock reads besides, and (for `exec`) those the
/// command gets.
fn environment(top: &clap::Command, command: &clap::Command, page: Page) -> String {
    let mut roff = String::from(
        ".SH ENVIRONMENT\nEach option can be given by a variable instead; the command line wins.\n",
    );
    for (name, option) in option_variables(top, command, page) {
        roff.push_str(&item(&name, &format!("sets {option}")));
    }
    let reads: Vec<&Variable> = page.reads().collect();
    if !reads.is_empty() {
        roff.push_str(".PP\nredlock also reads:\n");
        roff.push_str(&variables(reads.into_iter()));
    }
    if !page.gives().is_empty() {
        roff.push_str(".PP\n\\fBredlock exec\\fR gives COMMAND:\n");
        roff.push_str(&variables(page.gives().iter()));
    }
    roff
}

/// `(REDLOCK_TTL, "--ttl")` for each option of the page with a variable; on the top page, each
/// subcommand's options too, with the subcommands that take them.
fn option_variables(
    top: &clap::Command,
    command: &clap::Command,
    page: Page,
) -> Vec<(String, String)> {
    let flag = |arg: &clap::Arg| format!("--{}", arg.get_long().unwrap_or_default());
    let env = |arg: &clap::Arg| arg.get_env().map(|env| env.to_string_lossy().into_owned());
    let mut found: Vec<(String, String)> = command
        .get_arguments()
        .filter_map(|arg| Some((env(arg)?, flag(arg))))
        .collect();
    if page == Page::Top {
        let mut own: Vec<(String, String, Vec<&str>)> = Vec::new();
        for sub in Page::ALL.iter().filter_map(|page| page.command()) {
            let sub_command = top
                .find_subcommand(sub)
                .expect("every page is a subcommand");
            for arg in sub_command
                .get_arguments()
                .filter(|arg| !arg.is_global_set())
            {
                let Some(name) = env(arg) else { continue };
                match own.iter_mut().find(|(known, ..)| *known == name) {
                    Some((.., commands)) => commands.push(sub),
                    None => own.push((name, flag(arg), vec![sub])),
                }
            }
        }
        found.extend(
            own.into_iter()
                .map(|(name, flag, commands)| (name, format!("{flag} ({})", commands.join(", ")))),
        );
    }
    found
}

fn variables<'a>(variables: impl Iterator<Item = &'a Variable>) -> String {
    variables
        .map(|variable| item(variable.name, variable.meaning))
        .collect()
}

/// The deployment contract, on every page.
fn contract() -> String {
    let notes = &CONTRACT;
    let mut roff = format!(".SH DEPLOYMENT\n{}\n", escape(notes.intro));
    for (term, text) in (notes.rows)() {
        roff.push_str(&item(&term, &text));
    }
    roff.push_str(&format!(".PP\n{}\n", escape(notes.outro)));
    roff
}

fn exit_status(page: Page) -> String {
    let mut roff = String::from(".SH \"EXIT STATUS\"\n");
    for (label, meaning) in crate::exit::statuses(page.command()) {
        roff.push_str(&item(&label, meaning));
    }
    roff
}

fn examples(page: Page) -> String {
    let mut roff = String::from(".SH EXAMPLES\n");
    for example in page.examples() {
        roff.push_str(".PP\n.RS 4\n.nf\n");
        if let Some(says) = example.says {
            roff.push_str(&format!("# {}\n", escape(says)));
        }
        roff.push_str(&format!("{}\n.fi\n.RE\n", escape(example.line)));
    }
    roff
}

fn see_also(page: Page) -> String {
    let pages = Page::ALL
        .iter()
        .filter(|&&other| other != page)
        .map(|other| match other.command() {
            None => "redlock".to_string(),
            Some(name) => format!("redlock-{name}"),
        })
        .chain(["flock".to_string()])
        .map(|name| format!("\\fB{}\\fR(1)", escape(&name)))
        .collect::<Vec<_>>();
    format!(".SH \"SEE ALSO\"\n{}\n", pages.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_has_the_sections_of_a_man_page() {
        for (file, page) in pages().unwrap() {
            let page = String::from_utf8(page).unwrap();
            for section in [
                ".SH NAME",
                ".SH SYNOPSIS",
                ".SH DESCRIPTION",
                ".SH OPTIONS",
                ".SH ENVIRONMENT",
                ".SH \"EXIT STATUS\"",
                ".SH EXAMPLES",
                ".SH \"SEE ALSO\"",
            ] {
                assert!(page.contains(section), "{file}: {section}");
            }
            assert!(page.contains("\\fBflock\\fR(1)"), "{file}");
            assert!(page.contains("\\fBREDLOCK_SERVERS\\fR"), "{file}");
            // `redlock help` is no page of its own.
            assert!(!page.contains("redlock\\-help("), "{file}");
        }
    }

    #[test]
    fn every_synopsis_gives_each_option_its_value() {
        let mut top = crate::cli::whole(Cli::command());
        top.build();
        let pages = pages().unwrap();
        for page in Page::ALL {
            let (file, command) = match page.command() {
                None => ("redlock.1".to_string(), &top),
                Some(name) => (
                    format!("redlock-{name}.1"),
                    top.find_subcommand(name).unwrap(),
                ),
            };
            let (_, text) = pages.iter().find(|(name, _)| *name == file).unwrap();
            let text = String::from_utf8_lossy(text);
            let synopsis = text.split(".SH SYNOPSIS\n").nth(1).unwrap();
            let synopsis = synopsis.split(".SH ").next().unwrap();
            let mut valued = 0;
            for arg in command.get_arguments().filter(|arg| !arg.is_positional()) {
                let Some(long) = arg.get_long() else { continue };
                let flag = format!("\\fB{}\\fR", escape(&format!("--{long}")));
                assert!(synopsis.contains(&flag), "{file}: {flag}");
                let names = arg
                    .get_value_names()
                    .filter(|_| arg.get_action().takes_values());
                if let Some(names) = names {
                    valued += 1;
                    let value = format!("{flag}\\ \\fI{}\\fR", names[0]);
                    let optional = format!("{flag}\\ [\\fI{}\\fR]", names[0]);
                    assert!(
                        synopsis.contains(&value) || synopsis.contains(&optional),
                        "{file}: {value}"
                    );
                }
            }
            assert!(valued >= 5, "{file}");
        }
        let exec = &pages
            .iter()
            .find(|(file, _)| file == "redlock-exec.1")
            .unwrap()
            .1;
        let exec = String::from_utf8_lossy(exec);
        assert!(exec.contains("[\\fB\\-s\\fR|\\fB\\-\\-server\\fR\\ \\fIURL\\fR]..."));
        assert!(exec.contains(" \\fINAME\\fR \\fB\\-\\-\\fR \\fICOMMAND\\fR...\n"));
    }

    #[test]
    fn the_exec_page_says_what_the_command_gets() {
        let pages = pages().unwrap();
        let (_, exec) = pages
            .iter()
            .find(|(file, _)| file == "redlock-exec.1")
            .unwrap();
        let exec = String::from_utf8_lossy(exec);
        for name in ["NAME", "KEY", "TOKEN", "FENCE", "SLOT"] {
            assert!(exec.contains(&format!("\\fBREDLOCK_{name}\\fR")), "{name}");
        }
        assert!(
            exec.contains("\\fBREDLOCK_TTL\\fR\nsets \\-\\-ttl"),
            "{exec}"
        );
    }
}
