-- One attempt on one server (attempt.rs): sets the first free candidate key for us, or says who
-- holds the one that frees soonest and queues a waiter.
--
-- KEYS: the candidate keys in this attempt's order, then (with `--fence`) their fencing
--   counters in the same order, then a semaphore's limit key, then the target's queue, and last
--   (when [13] says so) the index of the keys under the prefix.
-- ARGV: [1] token, [2] ttl ms, [3] number of candidates, [4] fenced ('1'), and for a waiter
--   (else empty) [5] its entry, [6] arrival stamp and [7] lease ms, then [8] the wake-up
--   prefix, [9] the reservation ms, [10] whether the target is a semaphore ('1': its
--   candidates are all its slots, and their number its limit), and for a waiter [11] whether
--   an earlier attempt queued it ('1', read by the shared acquire only) and [12] how old a
--   stamp may be, in ms (`queue::stamp_trusted`), and [13] whether the last key is the index ('1': a key set is entered in it, list/index.lua; not on
--   a cluster, where it is in another hash slot).
-- Returns: {i, false, 0, -1, false, counter, 0} when candidate i (1-based) was set, was handed
--   to this waiter (a reservation naming it), or already holds our token (a request repeated on a fresh
--   connection after the first one landed: it must not take a second slot); {0, false, 0, -1,
--   false, 0, m}, having touched nothing, when the semaphore's limit key says m slots, not ours
--   (limit.rs); else {0, value, pttl, rank, type, 0, 0} for the candidate that frees soonest
--   (its holder's value, strings only; its PTTL, 0 when it vanished meanwhile, -1 when it
--   never expires; its type when another client keeps a non-string there, such as Redisson's
--   hash), with the waiter's rank in the queue.
-- Needs: queue/functions.lua, limit/functions.lua, list/index.lua.
--
-- A free candidate is not kept while a live waiter queued before this one (any, for an attempt
-- that is not queued) waits: it is reserved for that waiter and woken instead (queue/mod.rs,
-- step 3; the queue is read only when a SET succeeded, so a refused attempt costs nothing
-- more), so a later waiter, a newcomer or a one-shot acquire does not pass the head of the queue
-- when the key expired or a reservation lapsed.
--
-- `SET … NX GET` (Redis 7.0+) sets and reads in one command; older servers reject NX with GET,
-- and then a plain SET NX, TYPE and GET do the same in three. A key of another type makes
-- SET … GET fail with WRONGTYPE (it is never overwritten either way).

if redis.replicate_commands then redis.replicate_commands() end
local token, ttl, n, entry = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[5]
local last, index = #KEYS, false
if ARGV[13] == '1' then index, last = KEYS[#KEYS], #KEYS - 1 end
local queue = KEYS[last]
local semaphore = ARGV[10] == '1'
if semaphore then
  local other = limit_other(KEYS[last - 1], n)
  if other then return {0, false, 0, -1, false, 0, other} end
end
-- Whether the free `key` just set for us stays ours; if not, the reservation replaced our
-- token within this script, so nobody ever saw it.
local function keeps(key)
  return not queue_defer(key, queue, ARGV[8], ARGV[9], entry)
end
local won, value, pttl, kind = 0, false, -1, false
for i = 1, n do
  local key = KEYS[i]
  local t, v = 'string', false
  local old = redis.pcall('set', key, token, 'NX', 'PX', ttl, 'GET')
  if type(old) == 'table' and old.err then
    if string.find(old.err, 'WRONGTYPE', 1, true) then
      t = redis.call('type', key).ok
    elseif redis.call('set', key, token, 'NX', 'PX', ttl) then
      if keeps(key) then won = i break end
      v = redis.call('get', key)
    else
      t = redis.call('type', key).ok
      if t == 'string' then v = redis.call('get', key) end
    end
  elseif not old then
    if keeps(key) then won = i break end
    v = redis.call('get', key)
  else
    v = old
  end
  if v == token then won = i break end
  if queue_claims(v, entry) then
    redis.call('set', key, token, 'PX', ttl)
    won = i
    break
  end
  local left = redis.call('pttl', key)
  if left == -2 then left = 0 end
  if i == 1 or (left >= 0 and (pttl < 0 or left < pttl)) then
    value, pttl, kind = v, left, false
    if t ~= 'string' and t ~= 'none' then kind = t end
  end
end
if won > 0 then
  if entry ~= '' then
    queue_leave(queue, entry)
    for i = won + 1, n do
      if redis.call('type', KEYS[i]).ok == 'string' and queue_claims(redis.call('get', KEYS[i]), entry) then
        queue_hand_over(KEYS[i], queue, ARGV[8], ARGV[9], entry)
      end
    end
  end
  local counter = 0
  if ARGV[4] == '1' then counter = tonumber(redis.call('hget', KEYS[n + won], 'fence')) or 0 end
  if semaphore then limit_settle(KEYS[last - 1], 1, n) end
  if index then index_add(index, KEYS[won]) end
  return {won, false, 0, -1, false, counter, 0}
end
local rank = -1
if entry ~= '' then rank = queue_join(queue, entry, ARGV[6], ARGV[12], ARGV[7]) end
return {0, value, pttl, rank, kind, 0, 0}
