//! What tells `-h` from `--help` besides the text after the options: `-h` gives each option on
//! one line, with its default but without the `[env: …]` and `[possible values: …]` that
//! `--help` and the man pages show under it (the option's own line names the values).
//!
//! clap shows an option's variable, default and possible values in both, and nothing it offers
//! hides one of them from `-h` alone: with the variable, most options of `exec -h` took two or
//! three lines, and the page four screens. So for every option with a variable the help page
//! writes those notes into the option's own two texts, as clap lays them out (after the text on
//! the line in `-h`; under it, one per line, in `--help`), and asks clap not to add them again.
//! Only the command that shows a help page is changed: parsing, the man pages (which give each
//! variable a sentence of their own) and the completions use the definitions as they are.

use clap::builder::StyledStr;
use clap::{Arg, Command};

/// `command` and every subcommand under it, each option with a variable made as above.
pub(super) fn notes_in_texts(command: Command) -> Command {
    command
        .mut_args(notes_in_text)
        .mut_subcommands(notes_in_texts)
}

fn notes_in_text(arg: Arg) -> Arg {
    let Some(variable) = arg
        .get_env()
        .map(|name| name.to_string_lossy().into_owned())
    else {
        return arg;
    };
    if arg.is_hide_env_set() {
        return arg;
    }
    // `[env: NAME=value]` with the value set now, as clap writes it, or `[env: NAME]` where
    // the values are hidden (a token, the server URLs with their passwords).
    let env = if arg.is_hide_env_values_set() {
        format!("[env: {variable}]")
    } else {
        let value = std::env::var_os(&variable).unwrap_or_default();
        format!("[env: {variable}={}]", value.to_string_lossy())
    };
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|value| value.to_string_lossy().into_owned())
        .collect();
    let default = (!defaults.is_empty() && !arg.is_hide_default_value_set())
        .then(|| format!("[default: {}]", defaults.join(" ")));
    let takes_values = arg.get_action().takes_values();
    let possible: Vec<String> = match arg.get_value_parser().possible_values() {
        Some(values) if takes_values && !arg.is_hide_possible_values_set() => values
            .filter(|value| !value.is_hide_set())
            .map(|value| value.get_name().to_string())
            .collect(),
        _ => Vec::new(),
    };
    let possible =
        (!possible.is_empty()).then(|| format!("[possible values: {}]", possible.join(", ")));
    let text = |text: Option<&StyledStr>| text.map(ToString::to_string).unwrap_or_default();
    let short = text(arg.get_help().or(arg.get_long_help()));
    let long = text(arg.get_long_help().or(arg.get_help()));
    let short = std::iter::once(short)
        .chain(default.clone())
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let notes: Vec<String> = std::iter::once(env)
        .chain(default.clone())
        .chain(possible.clone())
        .collect();
    let long = format!("{long}\n\n{}", notes.join("\n"));
    let arg = arg.help(short).long_help(long).hide_env(true);
    // clap refuses these two on an option that takes no value.
    let arg = if default.is_none() {
        arg
    } else {
        arg.hide_default_value(true)
    };
    if possible.is_none() {
        arg
    } else {
        arg.hide_possible_values(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The help clap renders, each line without its trailing blanks.
    fn rendered(arg: Arg, long: bool) -> String {
        let mut command = notes_in_texts(Command::new("t").term_width(200).arg(arg));
        let help = if long {
            command.render_long_help()
        } else {
            command.render_help()
        };
        let help = help.to_string();
        help.lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_variable_and_values_are_in_the_long_help_only_and_the_default_in_both() {
        let arg = || {
            Arg::new("format")
                .long("format")
                .env("BRIEF_TEST_UNSET")
                .default_value("text")
                .value_parser(["text", "json"])
                .help("Lines as text or json")
                .long_help("Lines as text or json, for people or programs")
        };
        let short = rendered(arg(), false);
        assert!(
            short.contains("--format <format>  Lines as text or json [default: text]\n"),
            "{short}"
        );
        assert!(
            !short.contains("env:") && !short.contains("possible"),
            "{short}"
        );
        let long = rendered(arg(), true);
        let notes = "          Lines as text or json, for people or programs\n\n          \
                     [env: BRIEF_TEST_UNSET=]\n          [default: text]\n          \
                     [possible values: text, json]\n";
        assert!(long.contains(notes), "{long}");
        // Each note once: clap adds none of its own.
        assert_eq!(long.matches("[default: text]").count(), 1, "{long}");
    }

    #[test]
    fn hidden_values_stay_hidden_and_options_without_a_variable_are_left_alone() {
        let secret = Arg::new("token")
            .long("token")
            .env("BRIEF_TEST_UNSET")
            .hide_env_values(true)
            .help("The token");
        let long = rendered(secret, true);
        assert!(long.contains("[env: BRIEF_TEST_UNSET]"), "{long}");
        let plain = Arg::new("force")
            .long("force")
            .action(clap::ArgAction::SetTrue)
            .help("Delete it");
        let plain = notes_in_text(plain);
        assert_eq!(
            plain.get_help().map(ToString::to_string).as_deref(),
            Some("Delete it")
        );
        assert!(plain.get_long_help().is_none());
    }
}
