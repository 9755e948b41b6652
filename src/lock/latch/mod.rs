//! A countdown latch on N independent servers: `set` makes latch NAME expect COUNT distinct ids,
//! `done` counts one id down, `wait` returns once COUNT distinct ids are counted. For "run the
//! report after the three ETL jobs on three hosts are done".
//!
//! On each server a latch is one hash (`keys::LatchKeys`): its count in the `␟count` field, and
//! one field per id counted down holding that count-down's record, a token made for it (who:
//! host and pid; when: its wall clock). The hash lives for the latch's TTL from its creation on
//! that server; nothing extends it.
//!
//! Why the latch never opens early and never misses a count-down:
//! 1. **Only a count-down writes an id.** The one script that adds a field (lua.rs, `TOUCH`)
//!    adds the id its `done` was given, and only if absent (`HSETNX`). So every id any server
//!    shows was counted down by a `done` run with it, whatever servers are down, stopped, slow or
//!    restarted empty; and an id counted down twice (a retried job) is one field, counted once.
//! 2. **`done` exits 0 only once its id is recorded on a quorum.** The replies of one round
//!    count (rounds.rs); a server that already had the id counts as recorded.
//! 3. **A waiter opens on the union over a quorum.** It needs a quorum of servers holding the
//!    latch with one count C (a minority holding another count, a stale latch of the same name,
//!    cannot lower it), and the ids it has seen from those servers, together, numbering at least
//!    C (view.rs). Any two quorums share a server, so the union over any quorum includes every
//!    id whose `done` exited 0: a count-down that reached a quorum is never missed. And by (1)
//!    the union holds only ids that were counted down: a minority down adds nothing, a server
//!    restarted empty shows fewer ids, never more, so the latch opens only after C distinct ids
//!    ran `done`. (A `done` that reached some servers but not a quorum exits 69 and may still
//!    have opened the latch: its job did finish, and running it again counts nothing twice.)
//! 4. **Waking costs one message per count-down, not a read per waiter.** A `done` that records
//!    a new id publishes, on the latch's channel, the count, how many ids that server now holds,
//!    the id and its record (`Heard`). A waiter subscribes before its second read, adds what it
//!    hears to that server's copy, and reads again only when a server says it holds more ids
//!    than the waiter saw from it (a message was lost). So a thousand waiters cost one PUBLISH
//!    per count-down per server, and no reads. A notification only adds an id a server
//!    recorded; a periodic re-read (`RECHECK`) and a read when the latch expires are the
//!    safety net for lost ones (wait.rs).
//! 5. **Expiry and repair.** A waiter that saw the latch on a quorum and then sees it on fewer
//!    (expired, or lost) stops with 75 and says so. A `done` that finds the latch missing on
//!    some servers (restarted empty) and present on others re-creates it there with the count
//!    the others hold and the shortest TTL they have left, so a repair never outlives the latch.
//!    A `done` on a latch no server that answered knows is an error, not a silent create,
//!    unless it was given `--count` (then it is `set` and `done` in one round).
//!
//! - lua.rs: the scripts and the message; rounds.rs: set, done, read and list, one round each;
//!   view.rs: what the servers showed, merged, and its verdict; wait.rs: waiting for it to open.

mod lua;
mod rounds;
mod view;
mod wait;

pub(crate) use lua::Heard;
pub(crate) use rounds::{LatchError, Listed};
pub(crate) use view::{CountedId, Counting, LatchState};
pub(crate) use wait::{LatchWait, LatchWake, Waited};

use super::keys::{LatchKeys, LATCH_COUNT};
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
enum Touched {
    /// What it has now (the latch, with the id if one was given, when it had or made one),
    /// and whether this round created the latch there.
    Found(Found, bool),
    /// The latch exists there with another count than the one given; nothing was written.
    Other(LatchCopy),
}

/// A script's reply: `{tag, count, pttl, created, fields}` (lua.rs).
type ScriptReply = (String, i64, i64, i64, Vec<String>);

fn touched(reply: ScriptReply) -> redis::RedisResult<Touched> {
    let (tag, count, pttl, created, fields) = reply;
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
        "ok" => Touched::Found(Found::Latch(copy(fields)?), created == 1),
        "other" => Touched::Other(copy(Vec::new())?),
        "absent" => Touched::Found(Found::Absent, false),
        "foreign" => Touched::Found(
            Found::Foreign(fields.into_iter().next().unwrap_or_default()),
            false,
        ),
        _ => return Err(unexpected()),
    })
}

fn unexpected() -> redis::RedisError {
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
        (tag.into(), 3, 5000, 0, fields)
    }

    #[test]
    fn a_latch_reply_is_its_count_ttl_and_ids_without_the_count_field() {
        let found = touched(reply("ok", &[LATCH_COUNT, "3", "host-a", "rec-a"])).unwrap();
        let Touched::Found(Found::Latch(copy), false) = found else {
            panic!("{found:?}");
        };
        assert_eq!(copy.count, 3);
        assert_eq!(copy.ttl, Some(Duration::from_secs(5)));
        assert_eq!(copy.ids.len(), 1);
        assert_eq!(copy.ids["host-a"], "rec-a");
        assert_eq!(
            touched(reply("foreign", &["string"])).unwrap(),
            Touched::Found(Found::Foreign("string".into()), false)
        );
        assert_eq!(
            touched(reply("absent", &[])).unwrap(),
            Touched::Found(Found::Absent, false)
        );
        assert!(matches!(
            touched(reply("other", &[])).unwrap(),
            Touched::Other(LatchCopy { count: 3, .. })
        ));
        assert!(touched(reply("what", &[])).is_err());
    }
}
