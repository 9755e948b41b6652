//! What a holder does with its token: release and extend. Both compare the token on every
//! server, and say truthfully what they did when the token holds the lock on only some of them.

use super::nodes::{NodeError, Reply};
use super::queue::{self, HandOver};
use super::quorum::{self, tally, Tally, Verdict};
use super::script::Lua;
use super::target::Target;
use super::{Held, LockError, Redlock};
use crate::clock::BootInstant;
use std::time::Duration;

/// Releases KEYS[1] only if it holds our token (ARGV[1]): hands it to the next waiter in the
/// queue KEYS[2] (queue/mod.rs, step 3), or deletes it. 1 when released, 0 when not ours; a key
/// that is not ours but reserved for this process's own entry (a release that raced its win)
/// is passed on to the next waiter.
fn release_source() -> String {
    format!(
        "{}
if redis.call('get', KEYS[1]) ~= ARGV[1] then
  {}
  return 0
end
{}
return 1",
        queue::lua(),
        queue::PASS_ON_LAST_ARGS,
        queue::HAND_OVER_LAST_ARGS
    )
}

static RELEASE: Lua = Lua::new(release_source);

/// Sets a new TTL only if the key holds our token. It never re-creates a missing key: a lock
/// that expired has had a gap in which someone else may have held it. Returns {1, expiry before,
/// expiry now} (milliseconds on the server's clock, -1 for none) so that a failed extension can
/// be undone, or {0, 0, 0}. TIME is read after the write: scripts on servers before Redis 5 may
/// not write after reading the clock.
static EXTEND: Lua = Lua::new(|| {
    r"
if redis.call('get', KEYS[1]) ~= ARGV[1] then return {0, 0, 0} end
local left = redis.call('pttl', KEYS[1])
redis.call('pexpire', KEYS[1], ARGV[2])
local t = redis.call('time')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local before = -1
if left >= 0 then before = now + left end
return {1, before, now + ARGV[2]}"
        .into()
});

/// Puts back the expiry `ARGV[3]` (-1: none) a failed extension replaced, only if the key still
/// holds our token and the expiry that extension set, `ARGV[2]` (to the millisecond or two that
/// separate the script's clock readings): nobody else's change is undone. An expiry already
/// past deletes the key, as it would have expired by then. It must read the clock before it
/// writes, which servers before Redis 5 allow only after `redis.replicate_commands()`.
static RESTORE: Lua = Lua::new(|| {
    r"
if redis.replicate_commands then redis.replicate_commands() end
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
local t = redis.call('time')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
if math.abs(now + redis.call('pttl', KEYS[1]) - ARGV[2]) > 2 then return 0 end
if tonumber(ARGV[3]) < 0 then
  redis.call('persist', KEYS[1])
else
  redis.call('pexpireat', KEYS[1], ARGV[3])
end
return 1"
        .into()
});

/// Result of a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Released {
    pub(crate) deleted: usize,
    pub(crate) failures: Vec<(String, NodeError)>,
}

impl Redlock {
    /// Compare-and-delete of `key` (one of `target`'s) on every server, handing it to the next
    /// waiter. Waits for every server (up to the timeout) so that a one-shot `release` does not
    /// exit before its deletes went out.
    pub(crate) fn release(
        &mut self,
        target: &Target,
        key: &str,
        token: &str,
    ) -> Result<Released, LockError> {
        let hand_over = HandOver::new(target, self.nodes.timeout(), self.waited_as.as_deref());
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let mut invocation = RELEASE.script().key(key);
            invocation.key(&hand_over.queue).arg(token);
            let deleted: i64 = hand_over.args(&mut invocation).invoke(con)?;
            Ok(deleted == 1)
        });
        self.observe("release", key, &replies, started, None, |deleted| {
            (
                if *deleted {
                    "deleted"
                } else {
                    "not held by this token"
                }
                .into(),
                *deleted,
            )
        });
        let outcome = tally(&replies, |deleted| *deleted);
        let failures = self.failures(&replies);
        match outcome.verdict(self.nodes.len()) {
            Verdict::Yes => Ok(Released {
                deleted: outcome.yes,
                failures,
            }),
            Verdict::No => Err(LockError::NotHeld {
                acted: outcome.yes,
                undone: 0,
            }),
            Verdict::Unknown => {
                let did = format!("deleted on {}", outcome.yes);
                Err(self.undecided(&replies, &outcome, &did))
            }
        }
    }

    /// Compare-and-PEXPIRE to `ttl` on every server. Counts only with a quorum and positive
    /// validity measured from the start of this round. A failed extension deletes nothing, and
    /// puts back the expiry it replaced on the servers where it did extend, so that a minority
    /// success leaves no longer TTL behind than the holder had (see `restore`).
    pub(crate) fn extend(
        &mut self,
        key: &str,
        token: &str,
        ttl: Duration,
    ) -> Result<Held, LockError> {
        let ttl_ms = ttl.as_millis() as u64;
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let (extended, before, set): (i64, i64, i64) = EXTEND
                .script()
                .key(key)
                .arg(token)
                .arg(ttl_ms)
                .invoke(con)?;
            Ok((extended == 1).then_some(Extended { before, set }))
        });
        let outcome = tally(&replies, Option::is_some);
        let validity = outcome
            .quorum_reached_at(self.quorum())
            .and_then(|at| quorum::validity(ttl, at.since(started)));
        self.observe("extend", key, &replies, started, validity, |extended| {
            (
                if extended.is_some() {
                    "extended"
                } else {
                    "not held by this token"
                }
                .into(),
                extended.is_some(),
            )
        });
        let verdict = outcome.verdict(self.nodes.len());
        if let (Verdict::Yes, Some(validity)) = (&verdict, validity) {
            return Ok(Held::granted(
                key,
                token,
                ttl,
                (validity, started),
                outcome.yes,
            ));
        }
        let undone = self.restore(key, token, &replies);
        let did = format!("extended on {} (put back on {undone})", outcome.yes);
        Err(match verdict {
            Verdict::No => LockError::NotHeld {
                acted: outcome.yes,
                undone,
            },
            Verdict::Yes => LockError::Unavailable {
                detail: format!(
                    "the servers took longer than the {ttl_ms} ms ttl to answer; {did} of {} servers",
                    self.nodes.len()
                ),
            },
            Verdict::Unknown => self.undecided(&replies, &outcome, &did),
        })
    }

    /// After a failed extension: on each server that did extend, puts back the expiry the key
    /// had before, if the key still holds our token and the expiry we set (compare-and-restore).
    ///
    /// Why this is safe: it touches only our own key, and only as this extension left it, and
    /// puts back exactly the expiry it had before, the one the holder still counts on (a failed
    /// extension gives it no new validity): the servers end as if the extension had never been
    /// asked for. Someone else's key, a key that expired meanwhile (and may be someone else's
    /// now), or ours after any later change (another extension with the same token) is left
    /// alone. Where the restore does not get through, the key keeps what the extension set, as
    /// it did before this existed: never worse. One server at a time, since each has its own
    /// values; they all just answered, so this is quick. Returns on how many servers it did.
    fn restore(&mut self, key: &str, token: &str, replies: &[Reply<Option<Extended>>]) -> usize {
        let mut undone = 0;
        for (index, reply) in replies.iter().enumerate() {
            let Ok(Some(extended)) = &reply.result else {
                continue;
            };
            let mut target = vec![false; replies.len()];
            target[index] = true;
            let replies = self.nodes.round_on(&target, |con| {
                let restored: i64 = RESTORE
                    .script()
                    .key(key)
                    .arg(token)
                    .arg(extended.set)
                    .arg(extended.before)
                    .invoke(con)?;
                Ok(restored == 1)
            });
            undone += replies
                .iter()
                .flatten()
                .filter(|reply| matches!(reply.result, Ok(true)))
                .count();
        }
        undone
    }

    /// Neither verdict: says what the servers that answered did, and which did not answer.
    /// `did` says what the yes votes did and on how many servers.
    pub(super) fn undecided<T>(
        &self,
        replies: &[Reply<T>],
        outcome: &Tally,
        did: &str,
    ) -> LockError {
        if outcome.answered() < self.quorum() {
            return match self.unavailable(replies, outcome.answered()) {
                LockError::Unavailable { detail } if outcome.yes > 0 => LockError::Unavailable {
                    detail: format!("{detail}; {did}"),
                },
                other => other,
            };
        }
        let failures = self.reasons(replies);
        LockError::Unavailable {
            detail: format!(
                "no quorum either way: {did}, not held by this token on {}, no answer from {} ({}); {} of {} needed to tell",
                outcome.no,
                failures.len(),
                failures.join("; "),
                self.quorum(),
                self.nodes.len(),
            ),
        }
    }
}

/// What one server's successful extension replaced, as expiry times in milliseconds on that
/// server's own clock; `before` is -1 when the key had no expiry.
struct Extended {
    before: i64,
    set: i64,
}
