//! Lua scripts as the servers run them. Every script, and every part that several scripts share
//! (the queue's functions, the limit's, the shared holders'), is a `.lua` file of its own beside
//! the module that owns it; a `Lua` (made by `lua!`) is the script its parts make, its source
//! assembled (assembly.rs) and its SHA1 worked out (sha1.rs) when the binary is built, so a run
//! spends nothing on either. A call (`Invocation`) sends `EVALSHA`; every connection turns a
//! script's first one into an `EVAL` of its source (server/scripts.rs), so a server that never
//! ran it (new, or restarted with an empty script cache) costs no extra round trip.
//!
//! The Rust constants a script names (the reservation's prefix, the shared mark, …) are written
//! once, in Rust. Each part lists the ones it names (`Part::naming`), and the assembled script
//! starts with a prelude that declares each of them as a Lua local, `local RESERVATION = 'next:'`,
//! its value escaped as a Lua literal. The `.lua` files are plain Lua that uses the names: no
//! text is substituted into them, so each reads, and parses, as it runs, and a reviewer never
//! has to picture a template. Not ARGV: every call would carry the constants, and every caller
//! would have to send them. Locals rather than globals: Redis refuses a script that creates a
//! global, and the parts' functions read a local as an upvalue. A name is declared once per
//! script however many of its parts name it (with one value: the build checks it).
//!
//! What goes on the wire: every file opens with a header (what it does, its KEYS, ARGV and
//! return values, the parts it needs), and the comment lines, blank lines and indentation are
//! left out when the binary is built (`lua_part!`, a `const fn` over the included file), so the
//! bytes of an `EVAL` do not grow with the documentation and a run spends nothing on it. Only
//! lines and the spaces that start them go; every line break between two lines of code stays. That keeps the script's meaning as long as no string spans lines (a long
//! bracket `[[…]]`, or a quote continued by a backslash at a line's end) and no comment follows
//! code on its line: the test of every script checks both (lock/every_script.rs).

use redis::{ConnectionLike, ErrorKind, FromRedisValue, RedisResult, ServerErrorKind, ToRedisArgs};
use std::sync::OnceLock;

/// A Rust constant as a script names it: declared `local NAME = value` in front of every script
/// with a part that names it.
#[derive(Clone, Copy)]
pub(crate) struct Constant {
    pub(super) name: &'static str,
    pub(super) value: Value,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Value {
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

/// One piece of a script: a `.lua` file's text (`include_str!`) and the constants it names.
#[derive(Clone, Copy)]
pub(crate) struct Part {
    /// The file as written (the tests read its header).
    #[cfg_attr(not(test), allow(dead_code))]
    lua: &'static str,
    /// `lua` without its comment lines, blank lines and indentation (`lua_part!`).
    pub(super) code: &'static str,
    pub(super) names: &'static [Constant],
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
    /// A part as `lua_part!` makes it: its text and its code.
    pub(crate) const fn built(lua: &'static str, code: &'static str) -> Part {
        Part {
            lua,
            code,
            names: &[],
        }
    }

    /// The code as it goes on the wire.
    #[cfg(test)]
    pub(crate) fn code(&self) -> &'static str {
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
    /// Its parts (the tests check each file).
    #[cfg_attr(not(test), allow(dead_code))]
    parts: &'static [Part],
    /// The source the servers run, and its SHA1, both made when the binary is built (`lua!`).
    source: &'static str,
    hash: &'static str,
    remembered: OnceLock<()>,
}

/// The script made of these parts, in this order (the library parts before the script's own):
/// its source assembled and its SHA1 worked out when the binary is built (`assembled`,
/// `sha1_hex`), so a run spends nothing on either.
macro_rules! lua {
    ($($part:expr),+ $(,)?) => {{
        const PARTS: &[$crate::lock::script::Part] = &[$($part),+];
        const MOST: usize = $crate::lock::assembly::most_bytes(PARTS);
        const BUILT: ([u8; MOST], usize) = $crate::lock::assembly::assembled(PARTS);
        const SOURCE: &str = match std::str::from_utf8(BUILT.0.split_at(BUILT.1).0) {
            Ok(source) => source,
            Err(_) => panic!("a script that is not UTF-8"),
        };
        const HASH: [u8; 40] = $crate::lock::sha1::sha1_hex(SOURCE.as_bytes());
        const HASH_TEXT: &str = match std::str::from_utf8(&HASH) {
            Ok(hash) => hash,
            Err(_) => panic!("a hash that is not hexadecimal"),
        };
        $crate::lock::script::Lua::built(PARTS, SOURCE, HASH_TEXT)
    }};
}
pub(crate) use lua;

impl Lua {
    /// See `lua!`, the one way to make one.
    pub(crate) const fn built(
        parts: &'static [Part],
        source: &'static str,
        hash: &'static str,
    ) -> Lua {
        Lua {
            parts,
            source,
            hash,
            remembered: OnceLock::new(),
        }
    }

    /// Tells the connections (server/scripts.rs) the source to send in place of the hash the
    /// first time, and failure.rs the lines a server's error names: once per process.
    fn remember(&self) {
        self.remembered
            .get_or_init(|| crate::server::scripts::remember(self.hash, self.source));
    }

    /// A call of this script with `key` as its first key.
    pub(crate) fn key<T: ToRedisArgs>(&self, key: T) -> Invocation<'_> {
        let mut invocation = self.prepare_invoke();
        invocation.key(key);
        invocation
    }

    /// A call of this script, its keys and arguments to come.
    pub(crate) fn prepare_invoke(&self) -> Invocation<'_> {
        Invocation {
            lua: self,
            keys: Vec::new(),
            args: Vec::new(),
        }
    }

    /// The SHA1 the servers know the script by.
    #[cfg(test)]
    pub(crate) fn hash(&self) -> &'static str {
        self.hash
    }

    /// The source the servers run, as sent.
    #[cfg(test)]
    pub(crate) fn source(&self) -> &'static str {
        self.source
    }

    #[cfg(test)]
    pub(crate) fn parts(&self) -> &'static [Part] {
        self.parts
    }

    /// A plain `EVAL` carrying the source, for a request that may be written behind one whose
    /// reply is late: an `EVALSHA` the server does not know (restarted, or never ran it) would
    /// need one more round trip that it may not get. One `EVAL` works on any server it reaches.
    pub(crate) fn eval(&self, keys: &[String]) -> redis::Cmd {
        self.remember();
        let mut eval = redis::cmd("EVAL");
        eval.arg(self.source).arg(keys.len()).arg(keys);
        eval
    }
}

/// One call of a script, as `redis::ScriptInvocation` makes it, with the hash made at build
/// time: `EVALSHA` (which a connection's first use turns into an `EVAL` of the source), and
/// after a `NOSCRIPT` (the server forgot it while connected: `SCRIPT FLUSH`), `SCRIPT LOAD` and
/// the `EVALSHA` again.
pub(crate) struct Invocation<'l> {
    lua: &'l Lua,
    keys: Vec<Vec<u8>>,
    args: Vec<Vec<u8>>,
}

impl Invocation<'_> {
    /// Adds `key`, the script's next `KEYS[i]`.
    pub(crate) fn key<T: ToRedisArgs>(&mut self, key: T) -> &mut Self {
        key.write_redis_args(&mut self.keys);
        self
    }

    /// Adds `arg`, the script's next `ARGV[i]`.
    pub(crate) fn arg<T: ToRedisArgs>(&mut self, arg: T) -> &mut Self {
        arg.write_redis_args(&mut self.args);
        self
    }

    /// Runs the script on `con` and reads its reply.
    pub(crate) fn invoke<T: FromRedisValue>(&self, con: &mut dyn ConnectionLike) -> RedisResult<T> {
        self.lua.remember();
        let mut evalsha = redis::cmd("EVALSHA");
        evalsha
            .arg(self.lua.hash)
            .arg(self.keys.len())
            .arg(&*self.keys)
            .arg(&*self.args);
        match evalsha.query(con) {
            Err(err) if err.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                redis::cmd("SCRIPT")
                    .arg("LOAD")
                    .arg(self.lua.source)
                    .query::<String>(con)?;
                evalsha.query(con)
            }
            reply => reply,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_is_its_prelude_then_its_parts_and_its_hash_the_sha1_of_that() {
        const LIBRARY: &[Constant] = &[
            Constant::text("MARK", "r:'\\"),
            Constant::number("MAX", 1024),
        ];
        const OWN: &[Constant] = &[Constant::number("MAX", 1024), Constant::char("SEP", '\x1f')];
        const CODE: &str = "local function f()\nreturn MARK\nend\n";
        static SCRIPT: Lua = lua!(
            Part::built(CODE, CODE).naming(LIBRARY),
            Part::built("", "return {f(), MAX, SEP}\n").naming(OWN),
        );
        assert_eq!(
            SCRIPT.source(),
            "local MARK = 'r:\\039\\092'\nlocal MAX = 1024\nlocal SEP = '\\031'\n\
             local function f()\nreturn MARK\nend\nreturn {f(), MAX, SEP}\n",
            "each constant declared once, quotes, backslashes and control characters as three digits"
        );
        assert_eq!(
            SCRIPT.hash(),
            redis::Script::new(SCRIPT.source()).get_hash()
        );
    }

    #[test]
    fn a_digit_after_an_escape_stays_a_digit() {
        const NAMES: &[Constant] = &[
            Constant::text("FIELD", "\u{1f}5"),
            Constant::number("ZERO", 0),
        ];
        static SCRIPT: Lua = lua!(Part::built("", "return FIELD .. ZERO\n").naming(NAMES));
        assert_eq!(
            SCRIPT.source(),
            "local FIELD = '\\0315'\nlocal ZERO = 0\nreturn FIELD .. ZERO\n"
        );
    }
}
