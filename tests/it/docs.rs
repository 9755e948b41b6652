//! The documentation's links hold: every relative link in README.md and docs/*.md names a file
//! that exists and, after `#`, an anchor of one of that file's headings (GitHub's rule). So a
//! section moved or renamed cannot leave a reader at a dead link. Text only, no server:
//! `cargo test --test it docs::`.

use crate::support::markdown::{anchors, doc, doc_files, relative_links};
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
