//! The documentation's links hold: every relative link in README.md and docs/*.md names a file
//! that exists and, after `#`, an anchor of one of that file's headings (GitHub's rule). So a
//! section moved or renamed cannot leave a reader at a dead link. And what they name of the
//! source holds too: every `src/…` path in backticks exists, and every function
//! docs/architecture.md names (`name()`, `Type::name()`) is defined under src/ and every test it
//! names under tests/, so a map of the house goes stale loudly. Text only, no server:
//! `cargo test --test it docs::`.

use crate::support::markdown::{anchors, doc, doc_files, prose, relative_links};
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// `target` as seen from the file `from` (both from the crate root), `..` resolved.
fn resolve(from: &str, target: &str) -> String {
    let mut path: PathBuf = Path::new(from).parent().unwrap_or(Path::new("")).into();
    for part in Path::new(target).components() {
        match part {
            Component::ParentDir => {
                path.pop();
            }
            Component::CurDir => {}
            part => path.push(part),
        }
    }
    path.to_string_lossy().into_owned()
}

#[test]
fn every_relative_link_reaches_a_file_and_a_heading() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in doc_files() {
        for (line, target) in relative_links(&doc(&file)) {
            checked += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let path = if path.is_empty() {
                file.clone()
            } else {
                resolve(&file, path)
            };
            if !root.join(&path).exists() {
                broken.push(format!("{file}:{line}: {target}: no file {path}"));
            } else if !anchor.is_empty() {
                let is_markdown = path.ends_with(".md");
                if !is_markdown || !anchors(&doc(&path)).contains(anchor) {
                    broken.push(format!(
                        "{file}:{line}: {target}: no heading #{anchor} in {path}"
                    ));
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} links found: is the link reader broken?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_follow_github() {
    let text = "# JSON output\n## `acquire --json`\n```sh\n# a comment\n```\n\
                ### `per_server` entry\n## Did last night's job run?\n## Findings\n## Findings\n";
    let found: Vec<String> = anchors(text).into_iter().collect();
    assert_eq!(
        found,
        [
            "acquire---json",
            "did-last-nights-job-run",
            "findings",
            "findings-1",
            "json-output",
            "per_server-entry",
        ]
    );
}

/// The spans of `text` in backticks, outside fenced code blocks, with their line numbers.
fn code_spans(text: &str) -> Vec<(usize, &str)> {
    let mut spans = Vec::new();
    for (number, line) in prose(text) {
        let mut parts = line.split('`');
        parts.next();
        while let (Some(span), Some(_)) = (parts.next(), parts.next()) {
            spans.push((number, span));
        }
    }
    spans
}

/// Every file under `dir` (from the crate root), recursively, by path from the root.
fn files_under(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("src/ is readable").path();
        if path.is_dir() {
            files_under(&path, found);
        } else {
            found.push(path);
        }
    }
}

/// What the Rust under `dir` (`src` or `tests`) defines, by name: its functions, and what a
/// path may be qualified by (a type, a trait, a module, a file or a folder).
fn defined_in(dir: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    files_under(&root.join(dir), &mut files);
    let (mut functions, mut qualifiers) = (BTreeSet::new(), BTreeSet::new());
    let ident = |rest: &str| -> String {
        rest.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for file in files
        .iter()
        .filter(|file| file.extension() == Some("rs".as_ref()))
    {
        for part in file.strip_prefix(root).unwrap().iter() {
            let part = part.to_string_lossy();
            qualifiers.insert(part.trim_end_matches(".rs").to_string());
        }
        let text = std::fs::read_to_string(file).unwrap();
        for word in ["fn", "struct", "enum", "trait", "type", "mod"] {
            for (at, _) in text.match_indices(&format!("{word} ")) {
                let before = text[..at].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let name = ident(&text[at + word.len() + 1..]);
                if name.is_empty() {
                    continue;
                }
                if word == "fn" {
                    functions.insert(name);
                } else {
                    qualifiers.insert(name);
                }
            }
        }
    }
    (functions, qualifiers)
}

#[test]
fn every_source_path_and_function_the_docs_name_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (functions, qualifiers) = defined_in("src");
    let (tests, _) = defined_in("tests");
    let mut missing = Vec::new();
    let mut functions_named = 0;
    for file in doc_files() {
        let text = doc(&file);
        for (line, span) in code_spans(&text) {
            if span.starts_with("src/") && !span.contains(' ') && !root.join(span).exists() {
                missing.push(format!("{file}:{line}: no file {span}"));
            }
            let is_word = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
            // A test named by its sentence, as the safety table does.
            let is_test_name = span.matches('_').count() >= 4 && span.chars().all(is_word);
            if file == "docs/architecture.md" && is_test_name && !tests.contains(span) {
                missing.push(format!("{file}:{line}: no test {span} in tests/"));
            }
            let Some(path) = span.strip_suffix("()") else {
                continue;
            };
            let is_path = path.split("::").all(|part| {
                !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_')
            });
            if file != "docs/architecture.md" || !is_path {
                continue;
            }
            functions_named += 1;
            let mut parts: Vec<&str> = path.split("::").collect();
            let function = parts.pop().unwrap();
            if !functions.contains(function) {
                missing.push(format!("{file}:{line}: no fn {function} in src/"));
            }
            for part in parts.into_iter().filter(|part| !qualifiers.contains(*part)) {
                missing.push(format!(
                    "{file}:{line}: {span}: no type, module or file {part} in src/"
                ));
            }
        }
    }
    assert!(
        functions_named > 20,
        "only {functions_named} functions found in docs/architecture.md: is the reader broken?"
    );
    assert!(
        missing.is_empty(),
        "the docs name what src/ lacks:\n{}",
        missing.join("\n")
    );
}

#[test]
fn code_spans_are_read_outside_fences_only() {
    let text = "a `src/x.rs` and `f()`\n```sh\n`not this`\n```\n``";
    assert_eq!(code_spans(text), [(1, "src/x.rs"), (1, "f()"), (5, "")]);
}
