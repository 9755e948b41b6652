//! Semaphores (`--limit N`): up to N holders of a name at once, as N slots that are each an
//! ordinary Redlock mutex on a key of its own. A holder takes any free slot.
//!
//! Why slots and not a count per server: counting holders per server (admit while a server has
//! fewer than N, win with a quorum) is not safe for N >= 2. With servers A, B, C and N = 2,
//! holders admitted on {A, B}, {B, C} and {A, C} leave 2 holders on every server and 3 in all.
//! A slot, in contrast, is a mutex with Redlock's own guarantee: at most one holder, so at most
//! N in all.
//!
//! One round per attempt whatever N: each server runs a script that tries the slots in one
//! order and SETs (NX PX) the first free one, answering which. The order is the same on every
//! server of a round (so servers that agree on which slots are free pick the same one) and is
//! rotated by a random offset on every attempt (so no slot is always tried first, and a slot
//! held for long does not make every waiter queue behind it).
//!
//! Split outcomes. The servers may disagree: one had slot 0 taken (a leftover, or a contender
//! that reached it first) and set slot 1, while the others set slot 0. We win slot s only if a
//! quorum set s, with validity left: then slot s was granted exactly as a mutex is. Each server
//! sets at most one slot per round, so at most one slot can reach a quorum. Every other slot we
//! may have set (on a server that set another slot, or that did not answer) is deleted by
//! compare-and-delete, as a failed mutex attempt is; if that delete is lost, the key expires
//! with its TTL and, being on a minority, never made anyone a holder. When no slot reaches a
//! quorum the attempt fails like a busy mutex, and a waiting acquire tries again.
//!
//! Waiting: a semaphore's waiters queue as a mutex's do (wait.rs), in one queue for the whole
//! semaphore (`scripts::queue_key` of any slot is the semaphore's), so the release of any slot
//! hands that slot to the first of them (`next:<waiter id>`), which the slot script takes over.
//!
//! Keys: `<prefix><NAME>␟slots:<slot>` (␟ = 0x1F, see fence.rs), slots numbered from 0, and the
//! queue `<prefix><NAME>␟slots␟queue`. The mutex NAME (`<prefix><NAME>`) is a different key: a
//! mutex and a semaphore of the same name do not exclude each other.

use super::fence::{fence_key, script, SEPARATOR};
use super::inspect::key_state;
use super::nodes::Reply;
use super::wait::Waiter;
use super::{quorum, scripts, tally, Held, LockError, Redlock, Seen, ServerState};
use crate::clock::BootInstant;
use redis::Script;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

/// The semaphore's own key (never set itself): the stem of its slot keys and release channel.
pub(crate) fn semaphore_key(lock_key: &str) -> String {
    format!("{lock_key}{SEPARATOR}slots")
}

pub(crate) fn slot_key(semaphore: &str, slot: usize) -> String {
    format!("{semaphore}:{slot}")
}

/// The semaphore key and slot number of a slot key; `None` for any other key.
pub(crate) fn split_slot_key(key: &str) -> Option<(&str, usize)> {
    let (semaphore, slot) = key.rsplit_once(':')?;
    if !semaphore.ends_with(&format!("{SEPARATOR}slots"))
        || !slot.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some((semaphore, slot.parse().ok()?))
}

impl Held {
    /// The key this grant holds, for a grant of `key`: the key itself, or a semaphore's slot.
    pub(crate) fn key_in(&self, key: &str) -> String {
        self.slot
            .map_or_else(|| key.to_string(), |slot| slot_key(key, slot))
    }
}

/// KEYS[1..n]: the slots in this attempt's order, then (with ARGV[4] = '1') their counters, and
/// last the semaphore's queue of waiters. ARGV: token, ttl ms, n, fenced, and as for a mutex
/// (`scripts::ACQUIRE`) the waiter's id, arrival, lease and whether it may be queued.
/// {i, false, 0, counter, -1} when slot i (1-based in KEYS) was set, was handed to this waiter
/// by a release (`next:<id>`), or already holds our token (a request repeated on a fresh
/// connection after the first one landed: it must not take a second slot); else {0, value,
/// pttl, 0, rank}: the slot that frees soonest, for the waiter's schedule, and the waiter's place
/// in the queue, which it joins as it would a mutex's.
const ACQUIRE_SLOT: &str = r"
if redis.replicate_commands then redis.replicate_commands() end
local n = tonumber(ARGV[3])
local queue = KEYS[#KEYS]
local function value_of(key)
  if redis.call('type', key).ok == 'string' then return redis.call('get', key) end
  return false
end
local soonest, holder, won = -1, false, 0
for i = 1, n do
  if redis.call('set', KEYS[i], ARGV[1], 'NX', 'PX', ARGV[2]) then won = i break end
  local value = value_of(KEYS[i])
  if value == ARGV[1] then won = i break end
  if ARGV[5] ~= '' and value == 'next:' .. ARGV[5] then
    redis.call('set', KEYS[i], ARGV[1], 'PX', ARGV[2])
    won = i
    break
  end
  local pttl = redis.call('pttl', KEYS[i])
  if pttl >= 0 and (soonest < 0 or pttl < soonest) then soonest, holder = pttl, value end
end
if won > 0 then
  if ARGV[8] == '1' then redis.call('zrem', queue, ARGV[5]) end
  local counter = 0
  if ARGV[4] == '1' then counter = tonumber(redis.call('hget', KEYS[n + won], 'fence')) or 0 end
  return {won, false, 0, counter, -1}
end
local rank = -1
if ARGV[5] ~= '' then
  local now = redis.call('time')
  now = now[1] * 1000 + math.floor(now[2] / 1000)
  redis.call('zadd', queue, 'NX', math.min(tonumber(ARGV[6]), now), ARGV[5])
  if redis.call('pttl', queue) < tonumber(ARGV[7]) / 2 then redis.call('pexpire', queue, ARGV[7]) end
  rank = redis.call('zrank', queue, ARGV[5])
end
return {0, holder, soonest, 0, rank}";

/// Deletes our token (ARGV[1]) from whichever KEYS hold it. It wakes nobody: like a failed
/// mutex attempt's cleanup (`scripts::cleanup_eval`), what it removes never was a grant.
const RELEASE_SLOTS: &str = r"
local deleted = 0
for i = 1, #KEYS do
  if redis.call('type', KEYS[i]).ok == 'string' and redis.call('get', KEYS[i]) == ARGV[1] then
    redis.call('del', KEYS[i])
    deleted = deleted + 1
  end
end
return deleted";

/// Every slot's type, value (strings only) and pttl, in KEYS order.
const INSPECT_SLOTS: &str = r"
local out = {}
for i = 1, #KEYS do
  local kind = redis.call('type', KEYS[i]).ok
  local value = false
  if kind == 'string' then value = redis.call('get', KEYS[i]) end
  out[i] = {kind, value, redis.call('pttl', KEYS[i])}
end
return out";

/// One server's answer to a slot attempt.
struct SlotVote {
    /// The slot this server set for us.
    slot: Option<usize>,
    /// When none: the holder and remaining TTL of the slot that frees soonest.
    value: Option<String>,
    pttl: i64,
    counter: u64,
    /// Our place in this server's queue of the semaphore's waiters, when we are queued there.
    rank: Option<u64>,
}

impl Redlock {
    /// One attempt at any of the `slots` slots of `semaphore` (see the module comment).
    pub(super) fn attempt_slots(
        &mut self,
        semaphore: &str,
        token: &str,
        ttl: Duration,
        slots: usize,
        waiter: Option<&Waiter>,
    ) -> (Result<Held, LockError>, Seen) {
        let offset = random_below(slots);
        let order: Vec<usize> = (0..slots).map(|i| (offset + i) % slots).collect();
        let mut keys: Vec<String> = order.iter().map(|&s| slot_key(semaphore, s)).collect();
        let fenced = self.grant.fence;
        if fenced {
            let counters: Vec<String> = keys.iter().map(|key| fence_key(key)).collect();
            keys.extend(counters);
        }
        keys.push(scripts::queue_key(semaphore));
        let (id, stamp, lease, queued) = Waiter::script_args(waiter);
        let ttl_ms = ttl.as_millis() as u64;
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let mut invocation = script_acquire().prepare_invoke();
            for key in &keys {
                invocation.key(key);
            }
            invocation
                .arg(token)
                .arg(ttl_ms)
                .arg(slots)
                .arg(if fenced { "1" } else { "0" })
                .arg(id)
                .arg(stamp)
                .arg(lease)
                .arg(if queued { "1" } else { "0" });
            let (index, value, pttl, counter, rank): (usize, Option<String>, i64, u64, i64) =
                invocation.invoke(con)?;
            Ok(SlotVote {
                slot: index.checked_sub(1).and_then(|i| order.get(i).copied()),
                value,
                pttl,
                counter,
                rank: u64::try_from(rank).ok(),
            })
        });
        // Each server set at most one slot, so at most one can have a quorum.
        let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
        for reply in &replies {
            if let Ok(SlotVote {
                slot: Some(slot), ..
            }) = &reply.result
            {
                *counts.entry(*slot).or_default() += 1;
            }
        }
        let quorum = self.quorum();
        let winner = counts
            .iter()
            .find(|(_, count)| **count >= quorum)
            .map(|(slot, _)| *slot);
        let outcome = tally(&replies, |vote| vote.slot.is_some() && vote.slot == winner);
        let validity = outcome
            .quorum_reached_at(quorum)
            .and_then(|at| quorum::validity(ttl, at.since(started)));
        self.observe(
            "acquire",
            semaphore,
            &replies,
            started,
            validity,
            |vote| match vote.slot {
                Some(slot) => (format!("set slot {slot}"), Some(slot) == winner),
                None => ("refused (every slot taken)".into(), false),
            },
        );
        let answered = replies.iter().filter(|r| r.result.is_ok()).count();
        let result = match (winner, validity) {
            (Some(slot), Some(validity)) => {
                let mut held = Held::granted(token, ttl, validity, started, outcome.yes);
                held.slot = Some(slot);
                if fenced {
                    let counters: Vec<Option<u64>> = replies
                        .iter()
                        .map(|reply| match &reply.result {
                            Ok(vote) if vote.slot == Some(slot) => Some(vote.counter),
                            _ => None,
                        })
                        .collect();
                    self.write_fence(&slot_key(semaphore, slot), held, &counters)
                } else {
                    Ok(held)
                }
            }
            (Some(_), None) => Err(LockError::Unavailable {
                detail: format!(
                    "the servers took too long to answer; no validity left of the {ttl_ms} ms ttl"
                ),
            }),
            (None, _) if answered < quorum => Err(self.unavailable(&replies, answered)),
            (None, _) => Err(LockError::Busy {
                holder: Some(format!("someone in each of its {slots} slots")),
            }),
        };
        // Delete what we set and did not win: other slots on the servers that said so, and
        // after a failure the winner's too, and everything on the servers that did not answer
        // (they may have set any slot). After a success those are left alone: asking a down
        // server again would cost another full timeout on every grant while it is down, and
        // what it may hold for us is on a minority and expires with the TTL, as a failed
        // mutex attempt's leftovers do.
        let kept = result.as_ref().ok().and_then(|held| held.slot);
        let targets: Vec<bool> = replies
            .iter()
            .map(|reply| match &reply.result {
                Ok(vote) => vote.slot.is_some() && vote.slot != kept,
                Err(_) => kept.is_none(),
            })
            .collect();
        let strays: Vec<String> = (0..slots)
            .filter(|&slot| Some(slot) != kept)
            .map(|slot| slot_key(semaphore, slot))
            .collect();
        self.delete_token(&targets, &strays, token);
        let mut seen = seen(&replies);
        seen.round = started.elapsed();
        (result, seen)
    }

    /// Compare-and-delete of `token` in any of `keys`, on the `targets` servers. Like a mutex
    /// attempt's cleanup (`release_on`) it follows the attempt on the same connections, a late
    /// one included, as a plain `EVAL`: it needs no script cache and no extra round trip.
    fn delete_token(&mut self, targets: &[bool], keys: &[String], token: &str) {
        if !targets.contains(&true) || keys.is_empty() {
            return;
        }
        self.nodes.round_on(targets, |con| {
            let mut eval = redis::cmd("EVAL");
            eval.arg(RELEASE_SLOTS).arg(keys.len()).arg(keys);
            let deleted: i64 = eval.arg(token).query(con)?;
            Ok(deleted)
        });
    }

    /// Which of the `slots` slots `token` holds: the one most servers show it in.
    pub(crate) fn find_slot(
        &mut self,
        semaphore: &str,
        slots: usize,
        token: &str,
    ) -> Result<usize, LockError> {
        let states = self.inspect_slots(semaphore, slots);
        let mut best: Option<(usize, usize)> = None;
        for (slot, servers) in states.iter().enumerate() {
            let holding = servers
                .iter()
                .filter(|state| {
                    matches!(&state.state, Ok(super::KeyState::Present { token: t, .. }) if t == token)
                })
                .count();
            if holding > 0 && best.is_none_or(|(_, most)| holding > most) {
                best = Some((slot, holding));
            }
        }
        if let Some((slot, _)) = best {
            return Ok(slot);
        }
        let answered = states.first().map_or(0, |servers| {
            servers.iter().filter(|s| s.state.is_ok()).count()
        });
        if answered >= self.quorum() {
            Err(LockError::NotHeld {
                acted: 0,
                undone: 0,
            })
        } else {
            Err(LockError::Unavailable {
                detail: format!(
                    "no quorum: {answered} of {} servers answered, {} needed",
                    self.nodes.len(),
                    self.quorum()
                ),
            })
        }
    }

    /// What every server knows about every slot: one list of server states per slot.
    pub(crate) fn inspect_slots(&mut self, semaphore: &str, slots: usize) -> Vec<Vec<ServerState>> {
        let keys: Vec<String> = (0..slots).map(|slot| slot_key(semaphore, slot)).collect();
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let mut invocation = script_inspect().prepare_invoke();
            for key in &keys {
                invocation.key(key);
            }
            let found: Vec<(String, Option<String>, i64)> = invocation.invoke(con)?;
            Ok(found)
        });
        self.observe("inspect", semaphore, &replies, started, None, |found| {
            let held = found.iter().filter(|(kind, _, _)| kind != "none").count();
            (format!("{held} of {slots} slots taken"), held > 0)
        });
        (0..slots)
            .map(|slot| {
                self.servers()
                    .iter()
                    .zip(&replies)
                    .map(|(server, reply)| ServerState {
                        server: server.display.clone(),
                        master: reply.result.is_ok().then(|| server.master()).flatten(),
                        state: match &reply.result {
                            Ok(found) => Ok(found
                                .get(slot)
                                .map_or(super::KeyState::Absent, |(kind, value, pttl)| {
                                    key_state(kind, value.clone(), *pttl)
                                })),
                            Err(err) => Err(err.clone()),
                        },
                        latency: reply.latency,
                    })
                    .collect()
            })
            .collect()
    }
}

/// What the refusing servers showed: the holder of the slot freeing soonest, its TTL (the
/// shortest), and our best place in the servers' queues.
fn seen(replies: &[Reply<SlotVote>]) -> Seen {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut seen = Seen::default();
    for vote in replies
        .iter()
        .filter_map(|reply| reply.result.as_ref().ok())
    {
        seen.rank = match (seen.rank, vote.rank) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if vote.slot.is_some() {
            continue;
        }
        if let Some(value) = &vote.value {
            *counts.entry(value).or_default() += 1;
        }
        if let Ok(ms) = u64::try_from(vote.pttl) {
            let left = Duration::from_millis(ms);
            seen.ttl = Some(seen.ttl.map_or(left, |t| t.min(left)));
        }
    }
    seen.holder = counts
        .into_iter()
        .max_by_key(|(_, count)| *count)
        .map(|(token, _)| token.to_string());
    seen
}

fn script_acquire() -> &'static Script {
    static SCRIPT: OnceLock<Script> = OnceLock::new();
    script(&SCRIPT, ACQUIRE_SLOT)
}

fn script_inspect() -> &'static Script {
    static SCRIPT: OnceLock<Script> = OnceLock::new();
    script(&SCRIPT, INSPECT_SLOTS)
}

/// A uniformly random number in [0, n).
fn random_below(n: usize) -> usize {
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    (u64::from_le_bytes(bytes) % n.max(1) as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_keys_are_recognised_and_never_a_lock_name() {
        let semaphore = semaphore_key("redlock:deploy");
        assert_eq!(semaphore, "redlock:deploy\u{1f}slots");
        let key = slot_key(&semaphore, 12);
        assert_eq!(split_slot_key(&key), Some((semaphore.as_str(), 12)));
        assert_eq!(split_slot_key("redlock:deploy:12"), None);
        assert_eq!(split_slot_key(&fence_key(&key)), None);
        // Freeing any slot serves the semaphore's waiters.
        assert_eq!(scripts::queue_key(&key), scripts::queue_key(&semaphore));
        assert_eq!(scripts::wake_prefix(&key), scripts::wake_prefix(&semaphore));
    }
}
