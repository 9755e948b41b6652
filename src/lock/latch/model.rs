//! What a latch is, as the rounds, the view and the wait share it: its name and keys, the shape
//! it is created with, one server's copy of it, and what the count-down script answered.

use crate::lock::keys::{LatchKeys, LATCH_COUNT};
use std::collections::BTreeMap;
use std::time::Duration;

/// The largest count a latch may have: each count-down's reply and each read carry every id.
pub(crate) const MAX_COUNT: u32 = 1000;

/// A latch: its name as the user typed it, and its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Latch {
    pub(crate) name: String,
    pub(crate) keys: LatchKeys,
}

/// What `set` (or `done`/`wait` with `--count`) asks a missing latch to be created with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) count: u32,
    pub(crate) ttl: Duration,
}

/// One server's copy of a latch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LatchCopy {
    pub(crate) count: u32,
    /// What was left of its TTL when the server answered; `None`: it never expires (someone
    /// removed the TTL by hand).
    pub(crate) ttl: Option<Duration>,
    /// Each id counted down there, with its record (a token: who, and when).
    pub(crate) ids: BTreeMap<String, String>,
}

/// What one server has at a latch's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    Absent,
    /// Another client keeps a key of this type there (or a hash without a count).
    Foreign(String),
    Latch(LatchCopy),
}

/// What a server answered to `TOUCH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Touched {
    /// What it has now (the latch, with the id if one was given, when it had or made one),
    /// and what this request wrote there.
    Found(Found, Made),
    /// The latch exists there with another count than the one given; nothing was written.
    Other(LatchCopy),
}

/// What one `TOUCH` wrote on a server: what a refused run takes back (lua/withdraw.lua).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Made {
    /// It created the latch there.
    pub(super) created: bool,
    /// It recorded the id there (the id was not there before).
    pub(super) recorded: bool,
}

impl Made {
    /// What `touch.lua` says it wrote: 1 created, plus 2 recorded.
    fn from_bits(bits: i64) -> Made {
        Made {
            created: bits & 1 != 0,
            recorded: bits & 2 != 0,
        }
    }

    /// Both requests' writes on one server.
    pub(super) fn and(self, other: Made) -> Made {
        Made {
            created: self.created || other.created,
            recorded: self.recorded || other.recorded,
        }
    }
}

/// A script's reply: `{tag, count, pttl, made, fields}` (lua.rs).
pub(super) type ScriptReply = (String, i64, i64, i64, Vec<String>);

pub(super) fn touched(reply: ScriptReply) -> redis::RedisResult<Touched> {
    let (tag, count, pttl, made, fields) = reply;
    let copy = |fields: Vec<String>| -> redis::RedisResult<LatchCopy> {
        let count = u32::try_from(count).map_err(|_| unexpected())?;
        let ttl = u64::try_from(pttl).ok().map(Duration::from_millis);
        let mut ids = BTreeMap::new();
        let mut pairs = fields.into_iter();
        while let (Some(field), Some(record)) = (pairs.next(), pairs.next()) {
            if field != LATCH_COUNT {
                ids.insert(field, record);
            }
        }
        Ok(LatchCopy { count, ttl, ids })
    };
    Ok(match tag.as_str() {
        "ok" => Touched::Found(Found::Latch(copy(fields)?), Made::from_bits(made)),
        "other" => Touched::Other(copy(Vec::new())?),
        "absent" => Touched::Found(Found::Absent, Made::default()),
        "foreign" => Touched::Found(
            Found::Foreign(fields.into_iter().next().unwrap_or_default()),
            Made::default(),
        ),
        _ => return Err(unexpected()),
    })
}

pub(super) fn unexpected() -> redis::RedisError {
    redis::RedisError::from((
        redis::ErrorKind::UnexpectedReturnType,
        "unexpected reply to the latch script",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(tag: &str, fields: &[&str]) -> ScriptReply {
        let fields = fields.iter().map(|f| f.to_string()).collect();
        (tag.into(), 3, 5000, 2, fields)
    }

    #[test]
    fn a_latch_reply_is_its_count_ttl_and_ids_without_the_count_field() {
        let found = touched(reply("ok", &[LATCH_COUNT, "3", "host-a", "rec-a"])).unwrap();
        let recorded = Made {
            created: false,
            recorded: true,
        };
        let Touched::Found(Found::Latch(copy), made) = found else {
            panic!("{found:?}");
        };
        assert_eq!(made, recorded);
        assert_eq!(
            Made::from_bits(3).and(Made::default()),
            Made::from_bits(1).and(made)
        );
        assert_eq!(copy.count, 3);
        assert_eq!(copy.ttl, Some(Duration::from_secs(5)));
        assert_eq!(copy.ids.len(), 1);
        assert_eq!(copy.ids["host-a"], "rec-a");
        assert_eq!(
            touched(reply("foreign", &["string"])).unwrap(),
            Touched::Found(Found::Foreign("string".into()), Made::default())
        );
        assert_eq!(
            touched(reply("absent", &[])).unwrap(),
            Touched::Found(Found::Absent, Made::default())
        );
        assert!(matches!(
            touched(reply("other", &[])).unwrap(),
            Touched::Other(LatchCopy { count: 3, .. })
        ));
        assert!(touched(reply("what", &[])).is_err());
    }
}
