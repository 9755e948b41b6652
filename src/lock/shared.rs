//! Shared locks (`--shared`): any number of shared holders of a lock at once, or one exclusive
//! holder, never both, as `flock -s` and Redisson's read-write lock give, on N servers.
//!
//! How the holders are recorded, on each server. An exclusive holder is today's lock: the key
//! `<prefix><NAME>` holds its token. Shared holders share one value in that same key,
//! `keys::SHARED`, and each has an entry in the sorted set `keys::readers` (its token, scored by
//! when it expires on the server's clock); the key and the set expire with the last of them. A
//! shared grant on a server (`ACQUIRE`) adds an entry only where the key is absent or already
//! marked shared (or reserved for a batch of shared waiters, queue/mod.rs), and sets the key to
//! the mark; an exclusive grant is a `SET NX`, which the mark refuses. Clients that only know
//! `SET NX` (redsync, node-redlock, pottery, redis-py) are refused by the mark exactly as by a
//! writer's token, and the mark refuses nothing to redlock's shared holders.
//!
//! Why no exclusive grant overlaps a shared one. Each is granted as a lock is (attempt.rs): a
//! quorum of servers, validity = ttl − elapsed − drift from before the first request. Let a
//! writer W hold a quorum Qw and a reader R a quorum Qr, both within validity; two majorities
//! share a server s. On s, throughout W's validity the key holds W's token: only W's own release
//! or its expiry (after W's validity, by the drift allowance) can change it. Throughout R's
//! validity the key holds the mark: R's entry stays until its score passes (after R's
//! validity), every change to the set keeps the key's expiry at the last score, and the mark is
//! only removed when the set is empty (R's own release, or `release --force`). A key cannot hold
//! W's token and the mark at once, so the two validities do not overlap. A minority of servers
//! down, slow or paused changes nothing in this argument (it only needs the shared server s to
//! be one that answered both); a server restarted empty forgets holders like any Redlock server,
//! which the README's persistence or delayed-restart rule covers for shared holders as for
//! exclusive ones.
//!
//! Why a reader that crashed stops counting after its TTL. Its entry is scored with its expiry
//! and removed by the next change to the set once that time has passed (`shared_settle`), and
//! the key and the set carry the expiry of their last entry, so with no live reader left both
//! simply expire. Nothing waits for a crashed reader longer than its TTL.
//!
//! Writers are not starved. A reader that arrives while an exclusive waiter that is still
//! listening (a live `--wait`) queued before it joins the queue behind that writer instead of
//! the current readers (`shared_writer_ahead`). When the last current reader leaves, its
//! release hands the lock to the head of the queue, the writer; when the writer releases, the
//! shared waiters behind it are woken together (queue/mod.rs, step 3). The order in the queue
//! only decides who asks first; a reader refused because a writer waits is still a reader that
//! asks again on its schedule, and a writer that crashed stops listening and so stops holding
//! readers back.

use super::queue;

/// The shared holders' steps, as Lua functions for the scripts that take them:
///
/// - `shared_now()`: the server's clock in ms (scripts that read it call
///   `redis.replicate_commands()` first, for servers before Redis 5).
/// - `shared_settle(key, readers, now)`: forgets holders past their expiry and makes the key
///   (while it holds the mark) and the set expire with the last one left; returns how many are
///   left.
/// - `shared_writer_ahead(queue, arrived, prefix)`: whether an exclusive waiter that still
///   listens queued before `arrived`.
pub(super) fn lua() -> String {
    format!(
        r"
local function shared_now()
  local t = redis.call('time')
  return t[1] * 1000 + math.floor(t[2] / 1000)
end
local function shared_marked(key)
  return redis.call('type', key).ok == 'string' and redis.call('get', key) == '{mark}'
end
local function shared_settle(key, readers, now)
  redis.call('zremrangebyscore', readers, '-inf', now)
  local last = redis.call('zrange', readers, -1, -1, 'WITHSCORES')[2]
  if not last then return 0 end
  if shared_marked(key) then redis.call('pexpireat', key, last) end
  redis.call('pexpireat', readers, last)
  return redis.call('zcard', readers)
end
local function shared_writer_ahead(queue, arrived, prefix)
  for _, entry in ipairs(redis.call('zrangebyscore', queue, '-inf', '(' .. arrived)) do
    if string.sub(entry, 1, {mark_len}) ~= '{shared_mark}' and
        tonumber(redis.call('pubsub', 'numsub', prefix .. entry)[2]) > 0 then
      return true
    end
  end
  return false
end
",
        mark = super::keys::SHARED,
        mark_len = queue::SHARED_MARK.len(),
        shared_mark = queue::SHARED_MARK,
    )
}

/// The shared acquire, with the same KEYS and ARGV as attempt.rs's `ACQUIRE` for one candidate
/// but for the readers after the lock key (KEYS: key, readers, [fence counter], queue), and the
/// same reply. The key is free for a shared holder when absent, marked shared, or reserved for
/// a batch of shared waiters, and no live exclusive waiter queued before this one (for a waiter
/// its place in the queue, for anyone else now). A grant reads the fencing counter without
/// raising it: a shared holder sees the current fence and takes none (README).
pub(super) fn acquire_source() -> String {
    format!(
        "{}{}{}",
        queue::lua(),
        lua(),
        format_args!(
            r"
if redis.replicate_commands then redis.replicate_commands() end
local key, readers, queue = KEYS[1], KEYS[2], KEYS[#KEYS]
local token, ttl, entry = ARGV[1], tonumber(ARGV[2]), ARGV[5]
local now = shared_now()
local kind = redis.call('type', key).ok
local value = false
if kind == 'string' then value = redis.call('get', key) end
local function granted()
  if entry ~= '' then queue_leave(queue, entry, ARGV[8], ARGV[9]) end
  local counter = 0
  if ARGV[4] == '1' then counter = tonumber(redis.call('hget', KEYS[3], 'fence')) or 0 end
  return {{1, false, 0, -1, false, counter, 0}}
end
if value == '{mark}' and redis.call('zscore', readers, token) then return granted() end
local open = kind == 'none' or value == '{mark}' or value == '{batch}'
if open then
  local arrived = now
  if entry ~= '' then
    arrived = tonumber(redis.call('zscore', queue, entry)) or math.min(tonumber(ARGV[6]), now)
  end
  open = not shared_writer_ahead(queue, arrived, ARGV[8])
end
if open then
  redis.call('zadd', readers, now + ttl, token)
  redis.call('set', key, '{mark}', 'PX', ttl)
  shared_settle(key, readers, now)
  return granted()
end
local pttl = redis.call('pttl', key)
if pttl == -2 then pttl = 0 end
local foreign = false
if kind ~= 'string' and kind ~= 'none' then foreign = kind end
local rank = -1
if entry ~= '' then rank = queue_join(queue, entry, ARGV[6], ARGV[7]) end
return {{0, value, pttl, rank, foreign, 0, 0}}",
            mark = super::keys::SHARED,
            batch = format_args!("{}{}", super::keys::RESERVATION, queue::BATCH_RESERVATION),
        )
    )
}

/// A shared holder leaves (KEYS: key, queue, readers; ARGV: token, then `HandOver::args`):
/// only a live entry of its token counts. When it was the last one, the key is handed to the
/// next waiter like a released lock (queue/mod.rs, step 3), else the key's expiry follows the
/// last holder left. 1 when it left, 0 when not a holder here, 2 when the token holds the key
/// exclusively (nothing is touched).
pub(super) fn release_source() -> String {
    format!(
        "{}{}
if redis.replicate_commands then redis.replicate_commands() end
local now = shared_now()
local score = tonumber(redis.call('zscore', KEYS[3], ARGV[1]))
if not score or score <= now or not shared_marked(KEYS[1]) then
  if redis.call('type', KEYS[1]).ok == 'string' and redis.call('get', KEYS[1]) == ARGV[1] then
    return 2
  end
  {}
  return 0
end
redis.call('zrem', KEYS[3], ARGV[1])
if shared_settle(KEYS[1], KEYS[3], now) == 0 then {} end
return 1",
        queue::lua(),
        lua(),
        queue::PASS_ON_LAST_ARGS,
        queue::HAND_OVER_LAST_ARGS
    )
}

/// A shared holder's new TTL (KEYS: key, readers; ARGV: token, ttl ms), only for a live entry:
/// as for a lock, an expired holder is never brought back. Returns {1, expiry before, expiry
/// now} (ms on the server's clock) for `restore_source`, {2, 0, 0} when the token holds the key
/// exclusively (nothing is touched), or {0, 0, 0}.
pub(super) fn extend_source() -> String {
    format!(
        "{}
if redis.replicate_commands then redis.replicate_commands() end
local now = shared_now()
local score = tonumber(redis.call('zscore', KEYS[2], ARGV[1]))
if not score or score <= now or not shared_marked(KEYS[1]) then
  if redis.call('type', KEYS[1]).ok == 'string' and redis.call('get', KEYS[1]) == ARGV[1] then
    return {{2, 0, 0}}
  end
  return {{0, 0, 0}}
end
local set = now + tonumber(ARGV[2])
redis.call('zadd', KEYS[2], set, ARGV[1])
shared_settle(KEYS[1], KEYS[2], now)
return {{1, score, set}}",
        lua()
    )
}

/// Puts back the expiry ARGV[3] a failed extension replaced, only where the entry still has the
/// expiry that extension set (ARGV[2]) (KEYS: key, readers; ARGV: token, set, before). An
/// expiry already past removes the holder, as it would have gone by then; with nobody left the
/// key goes too.
pub(super) fn restore_source() -> String {
    format!(
        "{}
if redis.replicate_commands then redis.replicate_commands() end
if tonumber(redis.call('zscore', KEYS[2], ARGV[1])) ~= tonumber(ARGV[2]) then return 0 end
redis.call('zadd', KEYS[2], ARGV[3], ARGV[1])
if shared_settle(KEYS[1], KEYS[2], shared_now()) == 0 and shared_marked(KEYS[1]) then
  redis.call('del', KEYS[1])
end
return 1",
        lua()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_name_the_mark_and_the_batch_reservation() {
        let source = acquire_source();
        assert!(source.contains("== 'redlock:shared'"));
        assert!(source.contains("== 'next:readers'"));
        assert!(lua().contains("~= 'r:'"));
    }
}
