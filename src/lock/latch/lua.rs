//! The latch's protocol as the servers run it: the scripts that read a latch, that check, create
//! or count it down, and that take back what a refused run wrote (lua/), and the message a
//! count-down publishes for the latch's waiters. touch.lua is the only text of both;
//! `parse_heard` reads the message it writes.

use crate::lock::keys::{LATCH_COUNT, SEPARATOR};
use crate::lock::script::{lua, lua_part, Constant, Lua, Part};

/// What every latch script reads a latch with and answers (lua/functions.lua).
const FUNCTIONS: Part =
    lua_part!("lua/functions.lua").naming(&[Constant::text("LATCH_COUNT", LATCH_COUNT)]);

/// Reads a latch (lua/read.lua).
pub(super) static READ: Lua = lua!(FUNCTIONS, lua_part!("lua/read.lua"));

/// Checks a latch, creates it or counts it down (lua/touch.lua), and publishes what
/// `parse_heard` reads.
pub(super) static TOUCH: Lua = lua!(
    FUNCTIONS,
    crate::lock::list::INDEX,
    lua_part!("lua/touch.lua").naming(&[
        Constant::text("LATCH_COUNT", LATCH_COUNT),
        Constant::char("SEPARATOR", SEPARATOR),
    ]),
);

/// Takes back what a refused run wrote on a server (lua/withdraw.lua).
pub(super) static WITHDRAW: Lua = lua!(
    FUNCTIONS,
    lua_part!("lua/withdraw.lua").naming(&[Constant::text("LATCH_COUNT", LATCH_COUNT)]),
);

/// The scripts above by name, for the test of every script (lock/every_script.rs).
#[cfg(test)]
pub(crate) fn scripts() -> [(&'static str, &'static Lua); 3] {
    [
        ("latch READ", &READ),
        ("latch TOUCH", &TOUCH),
        ("latch WITHDRAW", &WITHDRAW),
    ]
}

/// What one count-down announced: on a latch of `count`, the server now holds `held` ids, and
/// `id` (recorded as `record`) is new among them. Never the listeners' `done` (it starts with a
/// digit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LatchHeard {
    pub(crate) count: u32,
    pub(crate) held: usize,
    pub(crate) id: String,
    pub(crate) record: String,
}

/// The message `TOUCH` publishes, taken apart; `None` for anything else.
pub(crate) fn parse_heard(payload: &[u8]) -> Option<LatchHeard> {
    let text = std::str::from_utf8(payload).ok()?;
    let mut parts = text.splitn(4, SEPARATOR);
    let count = parts.next()?.parse().ok()?;
    let held = parts.next()?.parse().ok()?;
    let id = parts.next().filter(|id| !id.is_empty())?.to_string();
    let record = parts.next()?.to_string();
    Some(LatchHeard {
        count,
        held,
        id,
        record,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_count_down_is_read_back() {
        let payload = format!("3{SEPARATOR}2{SEPARATOR}host-a{SEPARATOR}abc:host:1:2");
        assert_eq!(
            parse_heard(payload.as_bytes()),
            Some(LatchHeard {
                count: 3,
                held: 2,
                id: "host-a".into(),
                record: "abc:host:1:2".into()
            })
        );
        for other in [
            "done",
            "go",
            "",
            "3\u{1f}x\u{1f}a\u{1f}r",
            "3\u{1f}1\u{1f}\u{1f}r",
        ] {
            assert_eq!(parse_heard(other.as_bytes()), None, "{other:?}");
        }
    }
}
