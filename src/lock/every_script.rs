//! Every Lua script of the lock, listed for the tests that hold them all to script.rs's rules:
//! each assembles, each file says what it is, nothing on the wire depends on the comments left
//! out, and every name a script uses is one its prelude declares.

use super::script::{Lua, Part};
use super::{attempt, fence, history, holder, inspect, keep, latch, list, shared, withdraw};
use std::path::Path;

fn every_script() -> Vec<(&'static str, &'static Lua)> {
    let mut all: Vec<(&'static str, &'static Lua)> = vec![
        ("ACQUIRE", &attempt::ACQUIRE),
        ("shared ACQUIRE", &shared::ACQUIRE),
        ("RELEASE", &holder::RELEASE),
        ("shared RELEASE", &shared::RELEASE),
        ("EXTEND", &holder::EXTEND),
        ("shared EXTEND", &shared::EXTEND),
        ("RESTORE", &holder::RESTORE),
        ("shared RESTORE", &shared::RESTORE),
        ("KEEP", &keep::KEEP),
        ("WITHDRAW", &withdraw::WITHDRAW),
        ("WRITE_FENCE", &fence::WRITE_FENCE),
        ("INSPECT", &inspect::INSPECT),
        ("READERS", &list::READERS),
        ("FORCE_RELEASE", &inspect::FORCE_RELEASE),
        ("HISTORY READ", &history::READ),
        ("HISTORY APPEND", &history::APPEND),
    ];
    all.extend(latch::scripts());
    all
}

/// Every part of every script, once each.
fn every_part() -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::new();
    for (_, lua) in every_script() {
        for part in lua.parts() {
            if !parts.iter().any(|known| known.text() == part.text()) {
                parts.push(*part);
            }
        }
    }
    parts
}

/// The code of a line with its quoted strings left out (the scripts quote with `'` only).
fn unquoted(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\'' {
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '\'' => break,
                    _ => {}
                }
            }
            out.push_str("''");
        } else {
            out.push(c);
        }
    }
    out
}

/// The names in upper case a line of code uses (Lua's own and the scripts' are lower case):
/// the prelude's constants, and KEYS and ARGV.
fn constants(line: &str) -> Vec<String> {
    unquoted(line)
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| {
            word.starts_with(|c: char| c.is_ascii_uppercase())
                && word.chars().all(|c| !c.is_ascii_lowercase())
                && *word != "KEYS"
                && *word != "ARGV"
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn every_script_assembles_without_comments_or_indentation() {
    for (name, lua) in every_script() {
        let source = lua.source();
        let last = source.lines().last().unwrap_or_default();
        assert!(last.starts_with("return "), "{name} ends with {last:?}");
        assert!(!source.contains("--"), "{name}: a comment reaches the wire");
        for line in source.lines() {
            assert!(!line.is_empty(), "{name}: a blank line reaches the wire");
            assert!(!line.starts_with(char::is_whitespace), "{name}: {line}");
        }
        assert_eq!(
            lua.hash(),
            redis::Script::new(source).get_hash(),
            "{name}: the hash made at build time is the SHA1 of its source"
        );
    }
}

#[test]
fn the_build_strips_each_file_as_the_run_time_would() {
    for part in every_part() {
        let first = part.text().lines().next().unwrap_or_default();
        let code = part.code();
        assert_eq!(code, strip_lines(part.text()), "{first}");
        assert!(code.len() < part.text().len(), "{first}: its header went");
    }
}

#[test]
fn every_file_opens_with_its_header() {
    for part in every_part() {
        let header: Vec<&str> = part
            .text()
            .lines()
            .take_while(|line| line.starts_with("--"))
            .collect();
        let first = header.first().copied().unwrap_or_default();
        assert!(first.len() > 3, "a file opens without a header: {first:?}");
        for field in ["-- KEYS: ", "-- ARGV: ", "-- Returns: ", "-- Needs: "] {
            assert!(
                header.iter().any(|line| line.starts_with(field)),
                "{first}: no {field:?}"
            );
        }
    }
}

#[test]
fn no_string_or_comment_spans_lines_so_stripping_keeps_the_meaning() {
    for part in every_part() {
        let text = part.text();
        let first = text.lines().next().unwrap_or_default();
        assert!(!text.contains("[[") && !text.contains("[="), "{first}");
        for line in text.lines() {
            assert!(!line.ends_with('\\'), "{first}: {line}");
            let code = line.trim_start();
            if !code.starts_with("--") {
                assert!(!unquoted(code).contains("--"), "{first}: {line}");
            }
        }
    }
}

#[test]
fn every_name_a_script_uses_is_declared_and_every_declared_name_used() {
    for (name, lua) in every_script() {
        let source = lua.source();
        let declared: Vec<&str> = source
            .lines()
            .map_while(|line| line.strip_prefix("local "))
            .filter_map(|line| line.split_once(" = ").map(|(name, _)| name))
            .filter(|name| name.chars().all(|c| !c.is_ascii_lowercase()))
            .collect();
        for line in source.lines().skip(declared.len()) {
            for used in constants(line) {
                assert!(
                    declared.contains(&used.as_str()),
                    "{name}: {used} undeclared"
                );
            }
        }
    }
    for part in every_part() {
        let first = part.text().lines().next().unwrap_or_default();
        let code: Vec<String> = part
            .text()
            .lines()
            .filter(|line| !line.trim_start().starts_with("--"))
            .flat_map(constants)
            .collect();
        for named in part.names() {
            assert!(
                code.iter().any(|used| used == named),
                "{first}: {named} unused"
            );
        }
    }
}

#[test]
fn every_lua_file_is_part_of_a_listed_script() {
    fn walk(dir: &Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("src/lock") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "lua") {
                found.push(std::fs::read_to_string(&path).expect("a .lua file"));
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lock"),
        &mut files,
    );
    let parts = every_part();
    assert_eq!(
        files.len(),
        parts.len(),
        "a .lua file no listed script takes"
    );
    for text in files {
        let first = text.lines().next().unwrap_or_default().to_string();
        assert!(parts.iter().any(|part| part.text() == text), "{first}");
    }
}

/// The history is information only (history.rs): only the scripts that give a lock back record
/// a run (and the append that corrects a run found lost by its give-back, which touches nothing
/// else), each as its very last step before it returns, and no other script names it.
#[test]
fn only_the_give_backs_record_a_run_and_as_their_last_step() {
    for (name, lua) in every_script() {
        let source = lua.source();
        let calls: Vec<usize> = source
            .lines()
            .enumerate()
            .filter(|(_, line)| line.starts_with("history_record("))
            .map(|(at, _)| at)
            .collect();
        let gives_back = ["RELEASE", "shared RELEASE", "KEEP", "HISTORY APPEND"].contains(&name);
        assert_eq!(!calls.is_empty(), gives_back, "{name}");
        let lines: Vec<&str> = source.lines().collect();
        for at in calls {
            assert!(
                lines
                    .get(at + 1)
                    .is_some_and(|next| next.starts_with("return ")),
                "{name}: something follows the recording"
            );
        }
        if !gives_back && name != "HISTORY READ" {
            assert!(!source.contains("history"), "{name} names the history");
        }
    }
}

/// What `strip` makes of `lua`, done at run time: the reference the build is held to.
fn strip_lines(lua: &str) -> String {
    let mut code = String::new();
    for line in lua.lines() {
        let line = line.trim_start_matches([' ', '\t']);
        if !line.is_empty() && !line.starts_with("--") {
            code.push_str(line);
            code.push('\n');
        }
    }
    code
}
