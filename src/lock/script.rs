//! Lua scripts as the servers run them. Every script, and every part that several scripts share
//! (the queue's functions, the limit's, the shared holders'), is a `.lua` file of its own beside
//! the module that owns it; a `Lua` is the list of the parts its script is made of, assembled
//! once per process on first use and cached. `redis::Script` sends `EVALSHA`; every connection
//! turns a script's first one into an `EVAL` of its source (server/scripts.rs), so a server that
//! never ran it (new, or restarted with an empty script cache) costs no extra round trip.
//!
//! The Rust constants a script names (the reservation's prefix, the shared mark, …) are written
//! once, in Rust. Each part lists the ones it names (`Part::naming`), and the assembled script
//! starts with a prelude that declares each of them as a Lua local, `local RESERVATION = 'next:'`,
//! its value escaped as a Lua literal. The `.lua` files are plain Lua that uses the names: no
//! text is substituted into them, so each reads, and parses, as it runs, and a reviewer never
//! has to picture a template. Not ARGV: every call would carry the constants, and every caller
//! would have to send them. Locals rather than globals: Redis refuses a script that creates a
//! global, and the parts' functions read a local as an upvalue. A name is declared once per
//! script however many of its parts name it (with one value: `assemble` checks it).
//!
//! What goes on the wire: every file opens with a header (what it does, its KEYS, ARGV and
//! return values, the parts it needs), and the comment lines, blank lines and indentation are
//! left out when the binary is built (`lua_part!`, a `const fn` over the included file), so the
//! bytes of an `EVAL` do not grow with the documentation and a run spends nothing on it: it only
//! puts the prelude and the stripped parts together. Only lines and the spaces that start them go; every line break between two
//! lines of code stays. That keeps the script's meaning as long as no string spans lines (a long
//! bracket `[[…]]`, or a quote continued by a backslash at a line's end) and no comment follows
//! code on its line: the test of every script checks both (lock/every_script.rs).

use redis::Script;
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

    /// The prelude's line for this constant.
    fn local(&self) -> String {
        let value = match self.value {
            Value::Text(text) => literal(text),
            Value::Char(c) => literal(&c.to_string()),
            Value::Number(n) => n.to_string(),
        };
        format!("local {} = {value}\n", self.name)
    }
}

/// One piece of a script: a `.lua` file's text (`include_str!`) and the constants it names.
#[derive(Clone, Copy)]
pub(crate) struct Part {
    lua: &'static str,
    /// `lua` without its comment lines, blank lines and indentation, when the build made it
    /// (`lua_part!`); else left out as the script is assembled.
    code: Option<&'static str>,
    names: &'static [Constant],
}

/// The `Part` of a `.lua` file beside the module that names it, its code stripped at build time.
macro_rules! lua_part {
    ($path:literal) => {{
        const RAW: &str = include_str!($path);
        const STRIPPED: ([u8; RAW.len()], usize) = $crate::lock::script::strip(RAW.as_bytes());
        const CODE: &str = match std::str::from_utf8(STRIPPED.0.split_at(STRIPPED.1).0) {
            Ok(code) => code,
            Err(_) => panic!("a .lua file that is not UTF-8"),
        };
        $crate::lock::script::Part::built(RAW, CODE)
    }};
}
pub(crate) use lua_part;

/// `raw` without its comment lines, blank lines and the spaces that start each line, and how
/// long that is: what `lua_part!` makes of a file when the binary is built. Only whole lines
/// go, and each line kept ends with one line break.
pub(crate) const fn strip<const N: usize>(raw: &[u8]) -> ([u8; N], usize) {
    let mut out = [0u8; N];
    let (mut len, mut at) = (0, 0);
    while at < raw.len() {
        let mut start = at;
        while start < raw.len() && (raw[start] == b' ' || raw[start] == b'\t') {
            start += 1;
        }
        let mut end = start;
        while end < raw.len() && raw[end] != b'\n' {
            end += 1;
        }
        let mut code_end = end;
        if code_end > start && raw[code_end - 1] == b'\r' {
            code_end -= 1;
        }
        let comment = code_end >= start + 2 && raw[start] == b'-' && raw[start + 1] == b'-';
        if code_end > start && !comment {
            let mut i = start;
            while i < code_end {
                out[len] = raw[i];
                len += 1;
                i += 1;
            }
            out[len] = b'\n';
            len += 1;
        }
        at = end + 1;
    }
    (out, len)
}

impl Part {
    /// A part whose code is stripped as the script is assembled (tests' own parts).
    #[cfg(test)]
    pub(crate) const fn new(lua: &'static str) -> Part {
        Part {
            lua,
            code: None,
            names: &[],
        }
    }

    /// A part as `lua_part!` makes it: its text and its code.
    pub(crate) const fn built(lua: &'static str, code: &'static str) -> Part {
        Part {
            lua,
            code: Some(code),
            names: &[],
        }
    }

    /// The code as it goes on the wire.
    #[cfg(test)]
    pub(crate) fn code(&self) -> Option<&'static str> {
        self.code
    }

    /// The same part, naming `names` (the prelude declares them).
    pub(crate) const fn naming(self, names: &'static [Constant]) -> Part {
        Part { names, ..self }
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

pub(crate) struct Lua {
    parts: &'static [Part],
    cell: OnceLock<(String, Script)>,
}

impl Lua {
    /// A script made of `parts`, in this order (the library parts before the script's own).
    pub(crate) const fn new(parts: &'static [Part]) -> Lua {
        Lua {
            parts,
            cell: OnceLock::new(),
        }
    }

    fn built(&self) -> &(String, Script) {
        self.cell.get_or_init(|| {
            let source = assemble(self.parts);
            let script = Script::new(&source);
            // The source a first use sends in place of the hash (server/scripts.rs): the one
            // the hash is of.
            crate::server::scripts::remember(script.get_hash(), &source);
            (source, script)
        })
    }

    pub(crate) fn script(&self) -> &Script {
        &self.built().1
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

    /// A plain `EVAL` carrying the source, for a request that may be written behind one whose
    /// reply is late: an `EVALSHA` the server does not know (restarted, or never ran it) would
    /// need one more round trip that it may not get. One `EVAL` works on any server it reaches.
    pub(crate) fn eval(&self, keys: &[String]) -> redis::Cmd {
        let mut eval = redis::cmd("EVAL");
        eval.arg(&self.built().0).arg(keys.len()).arg(keys);
        eval
    }
}

/// The source of a script of `parts`: the prelude, then each part without its comments, blank
/// lines and indentation.
fn assemble(parts: &[Part]) -> String {
    let mut declared: Vec<Constant> = Vec::new();
    for constant in parts.iter().flat_map(|part| part.names) {
        match declared.iter().find(|known| known.name == constant.name) {
            Some(known) => assert_eq!(
                known.value, constant.value,
                "two parts give {} two values",
                constant.name
            ),
            None => declared.push(*constant),
        }
    }
    let mut source: String = declared.iter().map(Constant::local).collect();
    for part in parts {
        match part.code {
            Some(code) => source.push_str(code),
            None => source.push_str(&strip_lines(part.lua)),
        }
    }
    source
}

/// A Lua string literal of `text`, control characters written as `\ddd` (the field and the
/// separator are control characters, which a script's source had better show).
/// What `strip` makes of `lua`, at run time.
pub(super) fn strip_lines(lua: &str) -> String {
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

fn literal(text: &str) -> String {
    let mut out = String::from("'");
    for byte in text.bytes() {
        if byte < 0x20 || byte == b'\'' || byte == b'\\' {
            // Three digits always: Lua reads up to three after a backslash, so `\31` followed
            // by a digit would be another byte.
            out.push_str(&format!("\\{byte:03}"));
        } else {
            out.push(byte as char);
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_in_the_scripts() {
        assert_eq!(literal("\u{1f}count"), "'\\031count'");
        assert_eq!(literal("a'b\\"), "'a\\039b\\092'");
        assert_eq!(
            literal("\u{1f}5"),
            "'\\0315'",
            "a digit after an escape stays a digit"
        );
    }

    #[test]
    fn a_script_is_its_prelude_then_its_parts_without_comments() {
        const LIBRARY: &[Constant] = &[Constant::text("MARK", "r:"), Constant::number("MAX", 8)];
        const OWN: &[Constant] = &[Constant::number("MAX", 8), Constant::char("SEP", '\x1f')];
        let library =
            Part::new("-- A library.\n\nlocal function f()\n  return MARK\nend\n").naming(LIBRARY);
        let own = Part::new("-- Its header.\n--\nreturn {f(), MAX, SEP}\n").naming(OWN);
        assert_eq!(
            assemble(&[library, own]),
            "local MARK = 'r:'\nlocal MAX = 8\nlocal SEP = '\\031'\n\
             local function f()\nreturn MARK\nend\nreturn {f(), MAX, SEP}\n"
        );
    }
}
