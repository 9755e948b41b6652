//! The project's Markdown as GitHub reads it: README.md and docs/*.md, each file's headings and
//! their anchors, and the relative links between them. Text only: no server, no renderer.

use std::collections::BTreeSet;
use std::path::Path;

/// A documentation file's text, by its path from the crate root (`docs/json.md`).
pub fn doc(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|err| panic!("{}: {err}", full.display()))
}

/// Every Markdown file a reader is sent to: README.md, then docs/*.md, by path from the root.
pub fn doc_files() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ is readable")
        .map(|entry| entry.expect("docs/ is readable").file_name())
        .map(|name| name.to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    files.sort();
    files.insert(0, "README.md".to_string());
    files
}

/// GitHub's anchor for a heading: lowercase, punctuation but `-` and `_` dropped, spaces to `-`.
pub fn slug(title: &str) -> String {
    title
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines of `text` outside fenced code blocks, with their line numbers (from 1): a `#` in a
/// shell block is a comment, not a heading, and a `](` in one is no link.
pub fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((number + 1, line));
        }
    }
    lines
}

/// The anchors of a file's headings, as GitHub makes them: a repeated heading's anchor gets
/// `-1`, `-2`… in order.
pub fn anchors(text: &str) -> BTreeSet<String> {
    let mut anchors = BTreeSet::new();
    for (_, line) in prose(text) {
        let hashes = line.len() - line.trim_start_matches('#').len();
        let Some(title) = line[hashes..].strip_prefix(' ') else {
            continue;
        };
        if !(1..=6).contains(&hashes) {
            continue;
        }
        let base = slug(title.trim());
        let mut anchor = base.clone();
        let mut repeat = 0;
        while anchors.contains(&anchor) {
            repeat += 1;
            anchor = format!("{base}-{repeat}");
        }
        anchors.insert(anchor);
    }
    anchors
}

/// The targets of a file's inline links that stay in the repository (not `http…`, `mailto:`),
/// with the line each starts on: `guide.md`, `doctor.md#findings`, `#exit-status`. A link's text
/// may run across lines; its target never does.
pub fn relative_links(text: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    for (number, line) in prose(text) {
        for (at, _) in line.match_indices("](") {
            let rest = &line[at + 2..];
            let Some(end) = rest.find(')') else {
                continue;
            };
            let target = &rest[..end];
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            links.push((number, target.to_string()));
        }
    }
    links
}
