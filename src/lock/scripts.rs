//! The Lua scripts that make release and extend safe: nobody deletes or extends a lock whose
//! token it does not present. `redis::Script` sends `EVALSHA` and falls back to `EVAL` on
//! `NOSCRIPT`, so a restarted server (empty script cache) costs one extra round trip, once.

use redis::Script;
use std::sync::OnceLock;

/// `SET key token NX PX ttl`, and when the key is taken, what it holds and for how long, in the
/// same round trip: {1, nil, 0, -1, nil, counter} when set, else {0, value (strings only), pttl, rank,
/// type (other types only)}. A script
/// rather than a pipeline because a pipeline is several replies, and the client waits its full
/// read timeout for each one from a stopped server.
///
/// `SET … NX GET` (Redis 7.0+) sets and reads in one command; older servers reject NX with GET,
/// and then a plain SET NX and a GET do the same in two. A waiter reads the server's clock and
/// then writes, which servers before Redis 5 allow only after `redis.replicate_commands()`.
///
/// With a waiter id (ARGV[3]), a refused waiter joins the lock's queue (KEYS[2], a sorted set of
/// waiter ids scored by arrival: the waiter's own clock, never later than the server's, so that
/// every server sorts the same waiters the same way) and learns its rank. Each refused waiter
/// keeps the queue alive for at least half its lease (ARGV[5] ms, longer than its longest pause)
/// without ever shortening another's; a waiter that finds it gone joins again with the same
/// arrival time, so its place survives. A winner leaves the queue (ARGV[6] = '1' when it
/// may be in it). The queue only decides whom a release notifies: see `RELEASE`.
///
/// With `--fence`, KEYS[3] is the lock's fencing counter (see fence.rs): a grant also returns
/// its value, read atomically with the SET, as the sixth element (0 otherwise).
const ACQUIRE: &str = r"
if redis.replicate_commands then redis.replicate_commands() end
local set, value, kind = false, false, false
local old = redis.pcall('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2], 'GET')
if type(old) == 'table' and old.err then
  if string.find(old.err, 'WRONGTYPE', 1, true) then
    kind = redis.call('type', KEYS[1]).ok
  elseif redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    set = true
  else
    kind = redis.call('type', KEYS[1]).ok
    if kind == 'string' then value, kind = redis.call('get', KEYS[1]), false end
  end
else
  set, value = old == false, old
end
if not set and ARGV[3] ~= '' and value == 'next:' .. ARGV[3] then
  -- A release handed the lock to us (see `wake_next`): take it over.
  set = redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
if set then
  if ARGV[6] == '1' then redis.call('zrem', KEYS[2], ARGV[3]) end
  local counter = 0
  if KEYS[3] then counter = tonumber(redis.call('hget', KEYS[3], 'fence')) or 0 end
  return {1, false, 0, -1, false, counter}
end
local rank = -1
if ARGV[3] ~= '' then
  local now = redis.call('time')
  now = now[1] * 1000 + math.floor(now[2] / 1000)
  redis.call('zadd', KEYS[2], 'NX', math.min(tonumber(ARGV[4]), now), ARGV[3])
  if redis.call('pttl', KEYS[2]) < tonumber(ARGV[5]) / 2 then
    redis.call('pexpire', KEYS[2], ARGV[5])
  end
  rank = redis.call('zrank', KEYS[2], ARGV[3])
end
return {0, value, redis.call('pttl', KEYS[1]), rank, kind, 0}";

/// Hands the lock to the first waiter in the queue KEYS[2] that is still listening on its
/// channel ($prefix followed by its id): wakes it, takes it out of the queue, and leaves in the
/// key the placeholder `next:<waiter id>` for $reserve ms, which only that waiter's SET may
/// replace (`ACQUIRE`), so that a newcomer does not overtake it. One wake-up per release,
/// whatever the crowd. A waiter that crashed or left has no subscriber, so PUBLISH reaches
/// nobody and the next one is tried; a few at most, so a release stays cheap. With nobody to
/// hand it to, or with no reservation ($reserve = 0: a failed attempt's cleanup, which must not
/// wake anyone, least of all the waiter that made it), the key is deleted.
///
/// The placeholder is a lock held by nobody for a bounded time: it can only refuse others, so
/// exclusion is untouched, and the waiter it names still needs a quorum of its own SETs.
macro_rules! hand_over {
    ($prefix:literal, $reserve:literal) => {
        concat!(
            "
local handed = false
for _ = 1, tonumber(",
            $reserve,
            ") > 0 and 8 or 0 do
  local head = redis.call('zpopmin', KEYS[2])
  if not head[1] then break end
  if redis.call('publish', ",
            $prefix,
            " .. head[1], 'go') > 0 then
    redis.call('set', KEYS[1], 'next:' .. head[1], 'PX', ",
            $reserve,
            ")
    handed = true
    break
  end
end
if not handed then redis.call('del', KEYS[1]) end"
        )
    };
}

/// Releases the key only if it holds our token: hands it to the next waiter (`hand_over`, with
/// ARGV[2] the channel prefix and ARGV[3] the reservation in ms), or deletes it.
const RELEASE: &str = concat!(
    r"
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end",
    hand_over!("ARGV[2]", "ARGV[3]"),
    "
return 1"
);

/// Sets a new TTL only if the key holds our token. It never re-creates a missing key: a lock
/// that expired has had a gap in which someone else may have held it. Returns {1, expiry before,
/// expiry now} (milliseconds on the server's clock, -1 for none) so that a failed extension can
/// be undone, or {0, 0, 0}. TIME is read after the write: scripts on servers before Redis 5 may
/// not write after reading the clock.
const EXTEND: &str = r"
if redis.call('get', KEYS[1]) ~= ARGV[1] then return {0, 0, 0} end
local left = redis.call('pttl', KEYS[1])
redis.call('pexpire', KEYS[1], ARGV[2])
local t = redis.call('time')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local before = -1
if left >= 0 then before = now + left end
return {1, before, now + ARGV[2]}";

/// Puts back the expiry `ARGV[3]` (-1: none) a failed extension replaced, only if the key still
/// holds our token and the expiry that extension set, `ARGV[2]` (to the millisecond or two that
/// separate the script's clock readings): nobody else's change is undone. An expiry already
/// past deletes the key, as it would have expired by then. It must read the clock before it
/// writes, which servers before Redis 5 allow only after `redis.replicate_commands()`.
const RESTORE: &str = r"
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
return 1";

/// `--hold-at-least`: swaps our token (ARGV[1]) for the kept value (ARGV[2]) with a PX of what
/// is left of the hold (ARGV[3] ms), only if the key holds our token. ARGV[4], when positive, is
/// the PTTL we expect the key to have when this runs at once; a key with less left shows by how
/// much this request arrived late, and the hold is shortened by as much (see `crate::hold`).
/// A hold with nothing left is a release (`hand_over`, with ARGV[5] the channel prefix and
/// ARGV[6] the reservation). Returns 1 when kept, 2 when released, 0 when the key is not ours.
/// Its writes depend on the clock (the PTTL), so it asks servers before Redis 5 to replicate
/// them as effects, not as the script.
const KEEP: &str = concat!(
    r"
if redis.replicate_commands then redis.replicate_commands() end
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
local px = tonumber(ARGV[3])
local expected = tonumber(ARGV[4])
if expected > 0 then
  local pttl = redis.call('pttl', KEYS[1])
  if pttl >= 0 and pttl < expected then px = px - (expected - pttl) end
end
if px > 0 then
  redis.call('set', KEYS[1], ARGV[2], 'PX', px)
  return 1
end",
    hand_over!("ARGV[5]", "ARGV[6]"),
    "
return 2"
);

/// What one server knows about a key, in one round trip: type, value (strings only), PTTL.
const INSPECT: &str = r"
local kind = redis.call('type', KEYS[1]).ok
local value = false
if kind == 'string' then value = redis.call('get', KEYS[1]) end
return {kind, value, redis.call('pttl', KEYS[1])}";

/// Removes the key whatever its value (`release --force`), handing it to the next waiter like a
/// release (ARGV[1] the channel prefix, ARGV[2] the reservation in ms). Returns {removed, value
/// (strings only), type}.
const FORCE_RELEASE: &str = concat!(
    r"
local kind = redis.call('type', KEYS[1]).ok
local value = false
if kind == 'string' then value = redis.call('get', KEYS[1]) end
local removed = redis.call('exists', KEYS[1])
if removed == 1 then",
    hand_over!("ARGV[1]", "ARGV[2]"),
    "
end
return {removed, value, kind}"
);

macro_rules! cached_script {
    ($name:ident, $source:ident) => {
        pub(crate) fn $name() -> &'static Script {
            static SCRIPT: OnceLock<Script> = OnceLock::new();
            SCRIPT.get_or_init(|| Script::new($source))
        }
    };
}

cached_script!(acquire, ACQUIRE);
cached_script!(release, RELEASE);
cached_script!(extend, EXTEND);
cached_script!(restore, RESTORE);
cached_script!(keep, KEEP);
cached_script!(inspect, INSPECT);
cached_script!(force_release, FORCE_RELEASE);

/// The compare-and-delete as a plain `EVAL` carrying its source, for a failed attempt's cleanup:
/// it may be written behind a SET whose reply is late, and an `EVALSHA` the server does not know
/// (restarted, or never released anything) would need one more round trip that the cleanup may
/// not get. One `EVAL` works on any server it reaches. It wakes nobody: the attempt it cleans up
/// after failed, and the lock it leaves may well be held elsewhere.
pub(crate) fn cleanup_eval(key: &str, token: &str) -> redis::Cmd {
    let mut eval = redis::cmd("EVAL");
    eval.arg(RELEASE)
        .arg(2)
        .arg(key)
        .arg(queue_key(key))
        .arg(token)
        .arg(wake_prefix(key))
        .arg(0);
    eval
}

/// The queue of waiters for lock `key`. Lock names cannot contain control characters, so no
/// lock's key (under any prefix without one) is ever a queue, and no application key is likely
/// to end in `\x1fqueue`.
pub(crate) fn queue_key(key: &str) -> String {
    format!("{}\x1fqueue", waiters_of(key))
}

/// Whose waiters a release of `key` serves: the lock's own, or for a semaphore's slot the whole
/// semaphore's, so that freeing any slot wakes the first of those waiting for any slot.
fn waiters_of(key: &str) -> &str {
    super::semaphore::split_slot_key(key).map_or(key, |(semaphore, _)| semaphore)
}

/// How long a release keeps the lock for the waiter it woke (`hand_over`): time for it to hear
/// and answer (half a round's budget; at least 20 ms), after which anyone may take it again.
pub(crate) fn reservation(timeout: std::time::Duration) -> u64 {
    (timeout.as_millis() as u64 / 2).max(20)
}

/// Prefix of the pub/sub channels on which waiters of `key` are woken, one per waiter: the
/// channel is this prefix followed by the waiter's id.
pub(crate) fn wake_prefix(key: &str) -> String {
    format!("{}\x1fwake\x1f", waiters_of(key))
}
