//! The import graph between a crate's source files, read from their text (house.rs checks it
//! has no circle).
//!
//! How a `use` becomes an arrow: `src/main.rs` is `crate`, `src/a.rs` or `src/a/mod.rs` is
//! `crate::a`, `src/a/b.rs` is `crate::a::b`. Every `use` (groups, `self`, `super`, `crate`,
//! `as`, globs, re-exports) outside a file's unit tests is expanded to its paths; a path
//! is resolved to the deepest module that has a file, and a name that module imports rather than
//! defines is followed to where it is defined, so a parent's `pub(crate) use child::Name` makes
//! `use super::Name` an arrow to the child, not a circle through the parent. `mod x;` is not an
//! import (a parent names its children), and paths into other crates are not arrows.

use std::collections::{BTreeMap, BTreeSet};

/// One `use` declaration: where it stands (`src/x.rs:12`), its text on one line (without its
/// `;`), and the paths it names.
pub struct Use {
    pub place: String,
    pub text: String,
    pub leaves: Vec<Leaf>,
}

/// One path a `use` names, as written (`super::b::Name`, a glob ending in `*`), and the name it
/// binds in the file (`None` for a glob or `as _`).
#[derive(Debug, PartialEq)]
pub struct Leaf {
    pub path: Vec<String>,
    pub name: Option<String>,
}

/// The `use` declarations of a file but its unit tests: a `#[cfg(test)] mod tests {` ends the
/// reading, and a `#[cfg(test)] use` is skipped (what only the tests import is no arrow of the
/// house). Other test-only items (a `mod x;`, a helper) are read on past, not cut at.
pub fn uses(file: &str, text: &str) -> Vec<Use> {
    let mut found = Vec::new();
    let mut open: Option<(usize, String)> = None;
    let (mut under_test, mut test_only) = (false, false);
    for (index, raw) in text.lines().enumerate() {
        // A `use` holds no string literal, so `//` here starts a comment.
        let line = raw.split("//").next().unwrap_or_default().trim();
        if line.is_empty() || line.starts_with("#[") {
            under_test |= line == "#[cfg(test)]";
            continue;
        }
        let test_item = std::mem::take(&mut under_test);
        if test_item && line.contains("mod ") && line.ends_with('{') {
            break;
        }
        match &mut open {
            Some((_, declaration)) => {
                declaration.push(' ');
                declaration.push_str(line);
            }
            None if use_body(line).is_some() => {
                open = Some((index + 1, line.to_string()));
                test_only = test_item;
            }
            None => continue,
        }
        let Some((number, declaration)) = open.take_if(|(_, text)| text.contains(';')) else {
            continue;
        };
        let declaration = declaration.split(';').next().unwrap_or_default();
        let body = use_body(declaration).unwrap_or_default();
        // A line of text that merely begins with "use" (in a string or a comment) is no path.
        let is_path = |c: char| c.is_alphanumeric() || "_:{},* ".contains(c);
        if !test_only && body.chars().all(is_path) {
            let text = declaration.split_whitespace().collect::<Vec<_>>().join(" ");
            let leaves = leaves(&body.replace("::", " "));
            let place = format!("{file}:{number}");
            found.push(Use {
                place,
                text,
                leaves,
            });
        }
    }
    found
}

/// What follows `use` on a line that starts a `use` declaration (`pub(crate) use` included).
fn use_body(line: &str) -> Option<&str> {
    let mut rest = line;
    if let Some(after) = rest.strip_prefix("pub") {
        rest = after.trim_start();
        if rest.starts_with('(') {
            rest = rest[rest.find(')')? + 1..].trim_start();
        }
    }
    let after = rest.strip_prefix("use")?;
    after.starts_with(char::is_whitespace).then(|| after.trim())
}

/// The leaves of a use tree with its `::` already spaces: `a {b, c {d as e, self}}`.
fn leaves(tree: &str) -> Vec<Leaf> {
    let spaced = tree
        .replace('{', " { ")
        .replace('}', " } ")
        .replace(',', " , ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let mut found = Vec::new();
    expand(&tokens, &mut 0, &[], &mut found);
    found
}

/// Expands one tree from `tokens[*at]` under `prefix`, leaving `*at` past it.
fn expand(tokens: &[&str], at: &mut usize, prefix: &[String], found: &mut Vec<Leaf>) {
    let mut path = prefix.to_vec();
    while let Some(&token) = tokens.get(*at) {
        *at += 1;
        match token {
            "{" => {
                while tokens.get(*at).is_some_and(|&t| t != "}") {
                    expand(tokens, at, &path, found);
                    if tokens.get(*at) == Some(&",") {
                        *at += 1;
                    }
                }
                *at += 1;
                return;
            }
            "*" => {
                path.push("*".into());
                found.push(Leaf { path, name: None });
                return;
            }
            "as" => {
                let alias = tokens.get(*at).copied().unwrap_or("_");
                *at += 1;
                return found.push(leaf(path, Some(alias)));
            }
            "," | "}" => {
                *at -= 1;
                break;
            }
            segment => path.push(segment.to_string()),
        }
    }
    found.push(leaf(path, None));
}

/// A plain leaf: `a::b::self` is `a::b`; it binds its last segment unless renamed.
fn leaf(mut path: Vec<String>, alias: Option<&str>) -> Leaf {
    if path.last().is_some_and(|last| last == "self") {
        path.pop();
    }
    let name = alias.map(str::to_string).or_else(|| path.last().cloned());
    let name = name.filter(|name| name != "_");
    Leaf { path, name }
}

/// The module path of a source file: `src/a/b.rs` and `src/a/b/mod.rs` are `["a", "b"]`.
fn module_of(file: &str) -> Vec<String> {
    let inner = file.trim_start_matches("src/").trim_end_matches(".rs");
    let mut path: Vec<String> = inner.split('/').map(str::to_string).collect();
    if matches!(path.as_slice(), [only] if only == "main" || only == "lib")
        || path.last().is_some_and(|last| last == "mod")
    {
        path.pop();
    }
    path
}

/// The files, their modules, what each `use` binds, and the arrows between files.
pub struct Graph {
    pub files: Vec<String>,
    modules: BTreeMap<Vec<String>, usize>,
    bound: Vec<BTreeMap<String, Vec<String>>>,
    /// (from, to) -> the first `use` that makes the arrow, as `place: text;`.
    pub arrows: BTreeMap<(usize, usize), String>,
}

/// How many re-exports deep a name is followed before giving up (a loop is no real program).
const DEPTH: usize = 16;

impl Graph {
    pub fn new(sources: &[(String, String)]) -> Graph {
        let files: Vec<String> = sources.iter().map(|(file, _)| file.clone()).collect();
        let modules = files
            .iter()
            .enumerate()
            .map(|(i, f)| (module_of(f), i))
            .collect();
        let uses: Vec<Vec<Use>> = sources
            .iter()
            .map(|(file, text)| uses(file, text))
            .collect();
        let bound = uses
            .iter()
            .map(|file| {
                let leaves = file.iter().flat_map(|one| &one.leaves);
                let named = leaves.filter_map(|l| Some((l.name.clone()?, l.path.clone())));
                named.collect()
            })
            .collect();
        let mut graph = Graph {
            files,
            modules,
            bound,
            arrows: BTreeMap::new(),
        };
        for (from, file) in uses.iter().enumerate() {
            for one in file {
                for leaf in &one.leaves {
                    let Some(to) = graph.target(from, &leaf.path, DEPTH) else {
                        continue;
                    };
                    if to != from {
                        let why = format!("{}: {};", one.place, one.text);
                        graph.arrows.entry((from, to)).or_insert(why);
                    }
                }
            }
        }
        graph
    }

    /// The file a path written in file `from` leads to; `None` for another crate.
    fn target(&self, from: usize, written: &[String], depth: usize) -> Option<usize> {
        let path = self.absolute(from, written, depth)?;
        let deepest = (0..=path.len())
            .rev()
            .find(|&n| self.modules.contains_key(&path[..n]))?;
        let file = self.modules[&path[..deepest]];
        match path.get(deepest).map(String::as_str) {
            None | Some("*") => Some(file),
            Some(name) => match self.bound[file].get(name) {
                // The module only re-exports the name: the arrow goes where it is defined.
                Some(again) if depth > 0 => {
                    let onward = [again.as_slice(), &path[deepest + 1..]].concat();
                    self.target(file, &onward, depth - 1)
                }
                _ => Some(file),
            },
        }
    }

    /// A path written in file `from`, from the crate root: `crate`, `self`, `super`, a child
    /// module of `from` (2018 paths) or a name `from` imports; `None` for another crate.
    fn absolute(&self, from: usize, written: &[String], depth: usize) -> Option<Vec<String>> {
        let mut module = module_of(&self.files[from]);
        let (first, rest) = written.split_first()?;
        match first.as_str() {
            "crate" => return Some(rest.to_vec()),
            "self" | "super" => {
                let mut at = 0;
                while let Some(segment) = written.get(at).filter(|s| *s == "self" || *s == "super")
                {
                    if segment == "super" {
                        module.pop()?;
                    }
                    at += 1;
                }
                module.extend_from_slice(&written[at..]);
                return Some(module);
            }
            _ => {}
        }
        module.push(first.clone());
        if self.modules.contains_key(&module) {
            module.extend_from_slice(rest);
            return Some(module);
        }
        let again = self.bound[from]
            .get(first)
            .filter(|again| depth > 0 && *again != written)?;
        self.absolute(from, &[again.as_slice(), rest].concat(), depth - 1)
    }

    /// The circles: each set of 2+ files that all reach each other, with the arrows inside it.
    pub fn circles(&self) -> Vec<String> {
        let reach: Vec<BTreeSet<usize>> = (0..self.files.len()).map(|i| self.reach(i)).collect();
        let mut seen = BTreeSet::new();
        let mut circles = Vec::new();
        for start in 0..self.files.len() {
            let members: Vec<usize> = (0..self.files.len())
                .filter(|&other| reach[start].contains(&other) && reach[other].contains(&start))
                .collect();
            if members.len() < 2 || !seen.insert(members.clone()) {
                continue;
            }
            let names: Vec<&str> = members.iter().map(|&i| self.files[i].as_str()).collect();
            let mut text = format!("circle of {} files: {}", members.len(), names.join(", "));
            for ((from, to), why) in &self.arrows {
                if members.contains(from) && members.contains(to) {
                    let (a, b) = (&self.files[*from], &self.files[*to]);
                    text.push_str(&format!("\n  {a} -> {b}  ({why})"));
                }
            }
            circles.push(text);
        }
        circles
    }

    /// The files reachable from `start` by one arrow or more.
    fn reach(&self, start: usize) -> BTreeSet<usize> {
        let mut reached = BTreeSet::new();
        let mut todo = vec![start];
        while let Some(at) = todo.pop() {
            for &(_, to) in self.arrows.range((at, 0)..(at + 1, 0)).map(|(key, _)| key) {
                if reached.insert(to) {
                    todo.push(to);
                }
            }
        }
        reached
    }
}
