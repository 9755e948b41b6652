//! The house rules, checked on the source tree itself: every `src/**/*.rs` under 400 lines, and
//! no import circle between source files (files that import, through `use` lines and however
//! indirectly, from each other; `support/imports.rs` says how a `use` becomes an arrow). It reads
//! `src/` as text, starts no server and takes milliseconds: `cargo test --test it house::`.

use crate::support::imports::{uses, Graph, Leaf};
use std::path::Path;

/// The rule's bound: a file this long is a signal to split it by concept.
const LIMIT: usize = 400;

/// Every `.rs` file under `src/`: its path from the crate root (with `/`) and its text, sorted.
fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let mut dirs = vec![root.join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
            let path = entry.expect("src/ is readable").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file is UTF-8");
                let relative = path.strip_prefix(root).expect("under the crate root");
                let parts: Vec<_> = relative.iter().map(|p| p.to_string_lossy()).collect();
                files.push((parts.join("/"), text));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_source_file_is_under_400_lines() {
    let files = sources();
    assert!(files.len() > 10, "src/ was read: {} files", files.len());
    let over: Vec<String> = files
        .iter()
        .map(|(path, text)| (path, text.lines().count()))
        .filter(|&(_, lines)| lines >= LIMIT)
        .map(|(path, lines)| format!("  {path}: {lines} lines"))
        .collect();
    assert!(
        over.is_empty(),
        "source files of {LIMIT} lines or more (split each by concept, a room per idea):\n{}",
        over.join("\n")
    );
}

#[test]
fn no_two_modules_import_each_other() {
    let files = sources();
    let graph = Graph::new(&files);
    assert!(
        graph.arrows.len() > 50,
        "imports were read: {}",
        graph.arrows.len()
    );
    let circles = graph.circles();
    assert!(
        circles.is_empty(),
        "import circles between source files (each file below imports, through the others, \
         from itself):\n{}",
        circles.join("\n")
    );
}

/// A small tree in memory, as `sources` gives one: (path, text) pairs, sorted.
fn tree(files: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut files: Vec<_> = files
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    files.sort();
    files
}

#[test]
fn a_grouped_use_is_expanded_to_its_paths() {
    let text = "pub(crate) use crate::{\n    a, // why\n    b::{c, d as e, self},\n    f::*,\n};";
    let got = &uses("src/x.rs", text)[0];
    let leaf = |path: &str, name: Option<&str>| Leaf {
        path: path.split("::").map(str::to_string).collect(),
        name: name.map(str::to_string),
    };
    let want = [
        leaf("crate::a", Some("a")),
        leaf("crate::b::c", Some("c")),
        leaf("crate::b::d", Some("e")),
        leaf("crate::b", Some("b")),
        leaf("crate::f::*", None),
    ];
    assert_eq!(got.leaves, want);
    assert_eq!(got.place, "src/x.rs:1");
    assert_eq!(
        got.text,
        "pub(crate) use crate::{ a, b::{c, d as e, self}, f::*, }"
    );
}

#[test]
fn a_circle_through_a_child_path_is_found_and_tests_are_not_read() {
    let files = tree(&[
        (
            "src/main.rs",
            "mod a;\nmod b;\nuse b::Thing;\nuse std::fmt;",
        ),
        (
            "src/a/mod.rs",
            "mod inner;\n#[cfg(test)]\nuse crate::c::Gone;\nuse inner::Helper;",
        ),
        (
            "src/a/inner.rs",
            "use super::super::b::{\n    Other as O,\n};",
        ),
        ("src/b.rs", "use crate::a::Api;\n"),
        (
            "src/c.rs",
            "use crate::b;\n#[cfg(test)]\nmod tests {\n    use crate::a::inner::Helper;\n}",
        ),
    ]);
    let graph = Graph::new(&files);
    let circles = graph.circles();
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert!(circles[0].starts_with("circle of 3 files: src/a/inner.rs, src/a/mod.rs, src/b.rs"));
    assert!(circles[0].contains("src/b.rs -> src/a/mod.rs  (src/b.rs:1: use crate::a::Api;)"));
    assert!(circles[0].contains("(src/a/inner.rs:1: use super::super::b::{ Other as O, };)"));
    assert!(!circles[0].contains("main.rs") && !circles[0].contains("c.rs"));
}

#[test]
fn a_name_a_parent_only_re_exports_leads_to_the_child_that_defines_it() {
    let files = tree(&[
        ("src/main.rs", "mod p;\nuse p::Tool;"),
        (
            "src/p/mod.rs",
            "mod a;\n#[cfg(test)]\nmod checks;\nmod b;\npub(crate) use a::Api as Face;\npub(crate) use b::Tool;",
        ),
        ("src/p/a.rs", "use super::Tool;\nuse redis::Value;\n"),
        ("src/p/b.rs", "pub(crate) struct Tool;\n"),
        ("src/q.rs", "use crate::p::Face;\n"),
    ]);
    let graph = Graph::new(&files);
    assert!(graph.circles().is_empty(), "{:?}", graph.circles());
    let arrows: Vec<(&str, &str)> = graph
        .arrows
        .keys()
        .map(|&(from, to)| (graph.files[from].as_str(), graph.files[to].as_str()))
        .collect();
    let want = [
        ("src/main.rs", "src/p/b.rs"),
        ("src/p/a.rs", "src/p/b.rs"),
        ("src/p/mod.rs", "src/p/a.rs"),
        ("src/p/mod.rs", "src/p/b.rs"),
        ("src/q.rs", "src/p/a.rs"),
    ];
    assert_eq!(arrows, want);
}
