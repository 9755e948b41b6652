//! The latch's protocol as the servers run it: the scripts that read a latch and that create it
//! or count it down, and the message a count-down publishes for the latch's waiters. This file
//! is the only text of both; `parse_heard` reads the message the script writes.

use crate::lock::keys::{LATCH_COUNT, SEPARATOR};
use crate::lock::script::Lua;

/// A Lua string literal of `text`, control characters written as `\ddd` (the field and the
/// separator are control characters, which a script's source had better show).
fn literal(text: &str) -> String {
    let mut out = String::from("'");
    for byte in text.bytes() {
        if byte < 0x20 || byte == b'\'' || byte == b'\\' {
            out.push_str(&format!("\\{byte}"));
        } else {
            out.push(byte as char);
        }
    }
    out.push('\'');
    out
}

/// `latch_find(key)`: the latch's count, nil when the key does not exist, or false and the
/// key's type when another client keeps something else there (a hash without the count field
/// included). `latch_reply(tag, key, count, created)`: what every script returns:
/// `{tag, count, pttl, created, fields}`, `fields` the hash flattened (the count field among
/// them) for a latch, or the foreign type alone.
fn common() -> String {
    format!(
        r"
local function latch_find(key)
  local kind = redis.call('type', key).ok
  if kind == 'none' then return nil end
  if kind ~= 'hash' then return false, kind end
  local count = redis.call('hget', key, {count})
  if not count then return false, 'hash' end
  return tonumber(count)
end
local function latch_reply(tag, key, count, created)
  return {{tag, count, redis.call('pttl', key), created, redis.call('hgetall', key)}}
end",
        count = literal(LATCH_COUNT)
    )
}

/// KEYS: the latch. Returns `{'ok', count, pttl, 0, fields}`, `{'absent', 0, 0, 0, {}}` or
/// `{'foreign', 0, 0, 0, {type}}`.
pub(super) static READ: Lua = Lua::new(|| {
    format!(
        r"{}
local count, kind = latch_find(KEYS[1])
if count == nil then return {{'absent', 0, 0, 0, {{}}}} end
if not count then return {{'foreign', 0, 0, 0, {{kind}}}} end
return latch_reply('ok', KEYS[1], count, 0)",
        common()
    )
});

/// KEYS: the latch. ARGV: the count to create it with (0: never create), its TTL in ms, the id
/// to count down ('' for none), that id's record, the latch's channel.
///
/// Creates the latch when it is missing and a count is given; refuses (`other`, writing
/// nothing) when it exists with another count than a given one; then records the id unless it
/// is already there (a retry keeps its first record) and, for a new id, publishes the message
/// `parse_heard` reads. Nothing here extends the latch's TTL. Returns `latch_reply` with tag
/// `ok`, `other`, `absent` (missing, and no count to create it with) or `foreign`.
pub(super) static TOUCH: Lua = Lua::new(|| {
    format!(
        r"{}
local key, want, id = KEYS[1], tonumber(ARGV[1]), ARGV[3]
local count, kind = latch_find(key)
if count == false then return {{'foreign', 0, 0, 0, {{kind}}}} end
local created = 0
if count == nil then
  if want == 0 then return {{'absent', 0, 0, 0, {{}}}} end
  redis.call('hset', key, {field}, want)
  redis.call('pexpire', key, ARGV[2])
  count, created = want, 1
elseif want > 0 and count ~= want then
  return {{'other', count, redis.call('pttl', key), 0, {{}}}}
end
if id ~= '' and redis.call('hsetnx', key, id, ARGV[4]) == 1 then
  local held = redis.call('hlen', key) - 1
  redis.call('publish', ARGV[5], count .. {sep} .. held .. {sep} .. id .. {sep} .. ARGV[4])
end
return latch_reply('ok', key, count, created)",
        common(),
        field = literal(LATCH_COUNT),
        sep = literal(&SEPARATOR.to_string()),
    )
});

/// What one count-down announced: on a latch of `count`, the server now holds `held` ids, and
/// `id` (recorded as `record`) is new among them. Never the listeners' `done` (it starts with a
/// digit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Heard {
    pub(crate) count: u32,
    pub(crate) held: usize,
    pub(crate) id: String,
    pub(crate) record: String,
}

/// The message `TOUCH` publishes, taken apart; `None` for anything else.
pub(crate) fn parse_heard(payload: &[u8]) -> Option<Heard> {
    let text = std::str::from_utf8(payload).ok()?;
    let mut parts = text.splitn(4, SEPARATOR);
    let count = parts.next()?.parse().ok()?;
    let held = parts.next()?.parse().ok()?;
    let id = parts.next().filter(|id| !id.is_empty())?.to_string();
    let record = parts.next()?.to_string();
    Some(Heard {
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
    fn control_characters_are_escaped_in_the_scripts() {
        assert_eq!(literal("\u{1f}count"), "'\\31count'");
        assert_eq!(literal("a'b\\"), "'a\\39b\\92'");
    }

    #[test]
    fn a_published_count_down_is_read_back() {
        let payload = format!("3{SEPARATOR}2{SEPARATOR}host-a{SEPARATOR}abc:host:1:2");
        assert_eq!(
            parse_heard(payload.as_bytes()),
            Some(Heard {
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
