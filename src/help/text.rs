//! The text after the options: `--help`'s, each section under its heading, tables with a
//! hanging indent, and every line wrapped to the width clap lays the options out at (clap would
//! wrap this text too, but with no hanging indent, so a table's second lines would start at its
//! left edge); and `-h`'s, a few examples and what `--help` adds.

use super::notes::CONTRACT;
use super::pages::{Example, Page, Variable};

/// How many of a page's examples `-h` shows: the first ones, which are the commonest.
const SHORT_EXAMPLES: usize = 3;

/// What `-h` shows after `page`'s options: its first examples, and what `--help` and the man
/// page add (a screen's worth: the options' full text, the notes and the exit statuses are
/// `--help`'s).
pub(super) fn after_short_help(page: Page, width: usize) -> String {
    let shown = page.examples().iter().take(SHORT_EXAMPLES);
    let examples = shown
        .map(|shown| example(shown, width))
        .collect::<Vec<_>>()
        .join("\n");
    let (help, man) = match page.command() {
        None => ("redlock --help".to_string(), "redlock".to_string()),
        Some(name) => (format!("redlock {name} --help"), format!("redlock-{name}")),
    };
    let mut adds = vec!["each option in full (TLS and passwords too)"];
    let notes = page.notes().map(|notes| notes.heading.to_lowercase());
    adds.extend(notes.as_deref());
    if page == Page::Top || !page.gives().is_empty() {
        adds.push("the environment");
    }
    adds.push("the exit statuses");
    let last = adds.pop().unwrap_or_default();
    let more = format!(
        "{help} adds {} and {last}; man {man} has it all.",
        adds.join(", ")
    );
    format!("Examples:\n{examples}\n\n{}", wrap(&more, width, "", ""))
}

/// An example as both pages show it: what it does as a comment, if anything, then the line.
fn example(example: &Example, width: usize) -> String {
    match example.says {
        Some(says) => format!("{}\n  {}", wrap(says, width, "  # ", "  # "), example.line),
        None => format!("  {}", example.line),
    }
}

/// What `--help` shows after `page`'s options, in lines of at most `width` columns (but for a
/// command line in an example, which is never broken).
pub(super) fn after_help(page: Page, width: usize) -> String {
    let mut sections = Vec::new();
    let contract = (page == Page::Doctor).then_some(&CONTRACT);
    for notes in page.notes().into_iter().chain(contract) {
        let rows = (notes.rows)();
        let rows = rows
            .iter()
            .map(|(term, text)| (term.clone(), text.as_str()));
        sections.push(format!(
            "{}:\n{}\n{}\n{}",
            notes.heading,
            wrap(notes.intro, width, "  ", "  "),
            table(rows, width),
            wrap(notes.outro, width, "  ", "  ")
        ));
    }
    let examples: Vec<String> = page
        .examples()
        .iter()
        .map(|shown| example(shown, width))
        .collect();
    sections.push(format!("Examples:\n{}", examples.join("\n")));
    match page {
        Page::Top => sections.push(format!(
            "Environment (besides each option's own variable):\n{}",
            variables(page.reads(), width)
        )),
        Page::Exec => sections.push(format!(
            "Environment of COMMAND:\n{}",
            variables(page.gives().iter(), width)
        )),
        _ => {}
    }
    let statuses = crate::exit::statuses(page.command());
    sections.push(format!("Exit status:\n{}", table(statuses, width)));
    sections.join("\n\n")
}

fn variables<'a>(variables: impl Iterator<Item = &'a Variable>, width: usize) -> String {
    table(
        variables.map(|variable| (variable.name.to_string(), variable.meaning)),
        width,
    )
}

/// Two columns, `  term  text`, the text wrapped under itself; when the terms are too wide to
/// leave the text a readable column, each text goes under its term instead.
fn table<'a>(rows: impl Iterator<Item = (String, &'a str)>, width: usize) -> String {
    let rows: Vec<(String, &str)> = rows.collect();
    let term_width = rows
        .iter()
        .map(|(term, _)| term.chars().count())
        .max()
        .unwrap_or(0);
    let indent = " ".repeat(2 + term_width + 2);
    let beside = indent.len() + 30 <= width;
    rows.iter()
        .map(|(term, text)| {
            if beside {
                let first = format!("  {term:<term_width$}  ");
                wrap(text, width, &first, &indent)
            } else {
                format!("  {term}\n{}", wrap(text, width, "        ", "        "))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` in lines of at most `width` columns, the first line starting with `first` and the
/// others with `rest`. A word longer than a line has a line of its own.
pub(super) fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = rest.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_lines_fit_and_keep_their_indent() {
        let text = "the command was found but could not be executed (the lock was released)";
        let wrapped = wrap(text, 30, "  126  ", "       ");
        assert!(
            wrapped.lines().all(|line| line.chars().count() <= 30),
            "{wrapped}"
        );
        assert!(wrapped.starts_with("  126  the command"), "{wrapped}");
        assert!(wrapped
            .lines()
            .skip(1)
            .all(|line| line.starts_with("       ")));
        assert_eq!(
            wrapped
                .split_whitespace()
                .skip(1)
                .collect::<Vec<_>>()
                .join(" "),
            text
        );
    }

    #[test]
    fn every_page_fits_80_columns_but_for_its_example_lines() {
        for page in Page::ALL {
            let examples: Vec<&str> = page.examples().iter().map(|e| e.line).collect();
            let text = after_help(page, 80);
            for line in text.lines() {
                let example = examples.iter().any(|e| line.trim() == *e);
                assert!(example || line.chars().count() <= 80, "{page:?}: {line}");
            }
            assert!(text.contains("Exit status:\n  0 "), "{page:?}");
        }
        for example in Page::ALL.iter().flat_map(|page| page.examples()) {
            assert!(example.line.chars().count() <= 76, "{}", example.line);
        }
    }

    #[test]
    fn narrow_terminals_put_the_text_under_long_terms() {
        let text = after_help(Page::Exec, 40);
        assert!(
            text.contains("  REDLOCK_TOKEN\n        the token"),
            "{text}"
        );
        assert!(text.lines().all(|line| line.chars().count() <= 40
            || Page::Exec.examples().iter().any(|e| line.trim() == e.line)));
    }
}
