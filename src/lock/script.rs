//! Lua scripts as the servers run them. Every script, and every part that several scripts share
//! (the queue's functions, the limit's, the shared holders'), is a `.lua` file of its own beside
//! the module that owns it; a `Lua` is the script its parts make, put together (and hashed by
//! `redis::Script`) the first time a process runs it. A call sends `EVALSHA`, and after a
//! `NOSCRIPT` `SCRIPT LOAD` and the `EVALSHA` again (`redis::ScriptInvocation`); every
//! connection turns a script's first one into an `EVAL` of its source (server/scripts.rs), so a
//! server that never ran it (new, or restarted with an empty script cache) costs no extra round
//! trip.
//!
//! The Rust constants a script names (the reservation's prefix, the shared mark, …) are written
//! once, in Rust. Each part lists the ones it names (`Part::naming`), and the script starts with
//! a prelude that declares each of them as a Lua local, `local RESERVATION = 'next:'`, its value
//! escaped as a Lua literal. The `.lua` files are plain Lua that uses the names: no text is
//! substituted into them, so each reads, and parses, as it runs, and a reviewer never has to
//! picture a template. Not ARGV: every call would carry the constants, and every caller would
//! have to send them. Locals rather than globals: Redis refuses a script that creates a global,
//! and the parts' functions read a local as an upvalue. A name is declared once per script
//! however many of its parts name it (with one value: the test of every script checks it).
//!
//! What goes on the wire: every file opens with a header (what it does, its KEYS, ARGV and
//! return values, the parts it needs), and the comment lines, blank lines and indentation are
//! left out (`Part::code`), so the bytes of an `EVAL` do not grow with the documentation. Only
//! lines and the spaces that start them go; every line break between two lines of code stays.
//! That keeps the script's meaning as long as no string spans lines (a long bracket `[[…]]`, or
//! a quote continued by a backslash at a line's end) and no comment follows code on its line:
//! the test of every script checks both (lock/every_script.rs).

use redis::{Script, ScriptInvocation, ToRedisArgs};
use std::sync::OnceLock;

/// A Rust constant as a script names it: declared `local NAME = value` in front of every script
/// with a part that names it.
#[derive(Clone, Copy)]
pub(crate) struct Constant {
    name: &'static str,
    value: Value,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Value {
    Text(&'static str),
    Char(char),
    Number(usize),
}

impl Constant {
    pub(crate) const fn text(name: &'static str, value: &'static str) -> Constant {
        Constant {
            name,
            value: Value::Text(value),
        }
    }

    pub(crate) const fn char(name: &'static str, value: char) -> Constant {
        Constant {
            name,
            value: Value::Char(value),
        }
    }

    pub(crate) const fn number(name: &'static str, value: usize) -> Constant {
        Constant {
            name,
            value: Value::Number(value),
        }
    }
}

impl Value {
    /// The value as a Lua literal: text and characters quoted, control characters, quotes and
    /// backslashes written as `\ddd` (three digits always: Lua reads up to three after a
    /// backslash, so `\31` followed by a digit would be another byte).
    fn literal(self) -> String {
        let text = match self {
            Value::Number(n) => return n.to_string(),
            Value::Char(c) => c.to_string(),
            Value::Text(text) => text.to_string(),
        };
        let mut quoted = String::from("'");
        for c in text.chars() {
            if c < '\u{20}' || c == '\'' || c == '\\' {
                quoted.push_str(&format!("\\{:03}", c as u32));
            } else {
                quoted.push(c);
            }
        }
        quoted + "'"
    }
}

/// One piece of a script: a `.lua` file's text (`include_str!`) and the constants it names.
#[derive(Clone, Copy)]
pub(crate) struct Part {
    lua: &'static str,
    names: &'static [Constant],
}

impl Part {
    pub(crate) const fn new(lua: &'static str) -> Part {
        Part { lua, names: &[] }
    }

    /// The same part, naming `names` (the prelude declares them).
    pub(crate) const fn naming(self, names: &'static [Constant]) -> Part {
        Part { names, ..self }
    }

    /// The code as it goes on the wire: the file without its comment lines, blank lines and the
    /// spaces that start each line. Only whole lines go, and each line kept ends with one line
    /// break.
    pub(crate) fn code(&self) -> String {
        let mut code = String::new();
        for line in self.lua.lines() {
            let line = line.trim_start_matches([' ', '\t']);
            if !line.is_empty() && !line.starts_with("--") {
                code.push_str(line);
                code.push('\n');
            }
        }
        code
    }

    /// The part's text as written, header included.
    #[cfg(test)]
    pub(crate) fn text(&self) -> &'static str {
        self.lua
    }

    /// The names of the constants it names.
    #[cfg(test)]
    pub(crate) fn names(&self) -> impl Iterator<Item = &'static str> {
        self.names.iter().map(|constant| constant.name)
    }
}

/// The script made of these parts, in this order (the library parts before the script's own).
pub(crate) struct Lua {
    parts: &'static [Part],
    /// Its source and the `redis::Script` of it, made by its first use.
    built: OnceLock<(String, Script)>,
}

impl Lua {
    pub(crate) const fn new(parts: &'static [Part]) -> Lua {
        Lua {
            parts,
            built: OnceLock::new(),
        }
    }

    /// The source and its script, made the first time: the prelude (each constant the parts
    /// name, once, as a Lua local), then each part's code.
    fn built(&self) -> &(String, Script) {
        self.built.get_or_init(|| {
            let mut declared: Vec<Constant> = Vec::new();
            let mut source = String::new();
            for constant in self.parts.iter().flat_map(|part| part.names) {
                match declared.iter().find(|known| known.name == constant.name) {
                    Some(known) => assert_eq!(
                        known.value, constant.value,
                        "two parts give {} two values",
                        constant.name
                    ),
                    None => {
                        let literal = constant.value.literal();
                        source.push_str(&format!("local {} = {literal}\n", constant.name));
                        declared.push(*constant);
                    }
                }
            }
            for part in self.parts {
                source.push_str(&part.code());
            }
            let script = Script::new(&source);
            (source, script)
        })
    }

    /// A call of this script with `key` as its first key.
    pub(crate) fn key<T: ToRedisArgs>(&'static self, key: T) -> ScriptInvocation<'static> {
        let mut invocation = self.prepare_invoke();
        invocation.key(key);
        invocation
    }

    /// A call of this script, its keys and arguments to come. The connections (server/scripts.rs)
    /// learn the source to send in place of the hash the first time, and failure.rs the lines a
    /// server's error names.
    pub(crate) fn prepare_invoke(&'static self) -> ScriptInvocation<'static> {
        let (source, script) = self.built();
        crate::server::scripts::remember(script.get_hash(), source);
        script.prepare_invoke()
    }

    /// A plain `EVAL` carrying the source, for a request that may be written behind one whose
    /// reply is late: an `EVALSHA` the server does not know (restarted, or never ran it) would
    /// need one more round trip that it may not get. One `EVAL` works on any server it reaches.
    pub(crate) fn eval(&'static self, keys: &[String]) -> redis::Cmd {
        let (source, script) = self.built();
        crate::server::scripts::remember(script.get_hash(), source);
        let mut eval = redis::cmd("EVAL");
        eval.arg(source.as_str()).arg(keys.len()).arg(keys);
        eval
    }

    /// The source the servers run, as sent.
    #[cfg(test)]
    pub(crate) fn source(&self) -> &str {
        &self.built().0
    }

    #[cfg(test)]
    pub(crate) fn parts(&self) -> &'static [Part] {
        self.parts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_is_its_prelude_then_its_parts() {
        const LIBRARY: &[Constant] = &[
            Constant::text("MARK", "r:'\\"),
            Constant::number("MAX", 1024),
        ];
        const OWN: &[Constant] = &[Constant::number("MAX", 1024), Constant::char("SEP", '\x1f')];
        static SCRIPT: Lua = Lua::new(&[
            Part::new("-- f\nlocal function f()\n  return MARK\n\nend\n").naming(LIBRARY),
            Part::new("return {f(), MAX, SEP}").naming(OWN),
        ]);
        assert_eq!(
            SCRIPT.source(),
            "local MARK = 'r:\\039\\092'\nlocal MAX = 1024\nlocal SEP = '\\031'\n\
             local function f()\nreturn MARK\nend\nreturn {f(), MAX, SEP}\n",
            "each constant declared once, quotes, backslashes and control characters as three \
             digits; no comment, blank line or indentation"
        );
    }

    #[test]
    fn a_digit_after_an_escape_stays_a_digit() {
        const NAMES: &[Constant] = &[
            Constant::text("FIELD", "\u{1f}5"),
            Constant::number("ZERO", 0),
        ];
        static SCRIPT: Lua = Lua::new(&[Part::new("return FIELD .. ZERO\n").naming(NAMES)]);
        assert_eq!(
            SCRIPT.source(),
            "local FIELD = '\\0315'\nlocal ZERO = 0\nreturn FIELD .. ZERO\n"
        );
    }
}
