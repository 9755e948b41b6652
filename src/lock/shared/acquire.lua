-- A shared holder's attempt on one server (`--shared`, attempt.rs): joins the shared holders
-- when no writer holds the lock or waits ahead, or says who holds it and queues a waiter.
--
-- KEYS: [1] the lock key, [2] its readers, then (with `--fence`) [3] its fencing counter, then
--   the queue, and last (with [13]) the index: the same as attempt/acquire.lua's for one
--   candidate, but for the readers after the lock key.
-- ARGV: the same as attempt/acquire.lua's ([1] token, [2] ttl ms, [4] fenced ('1'), [5] entry,
--   [6] arrival stamp, [7] lease ms, [8] wake-up prefix, [9] the reservation ms, [11] queued
--   before ('1'), [12] how old a stamp may be, [13] whether the
--   last key is the index ('1'); the others are not read).
-- Returns: the same as attempt/acquire.lua's: {1, false, 0, -1, false, counter, 0} when it
--   holds a share, else {0, value, pttl, rank, type, 0, 0}.
-- Needs: queue/functions.lua, shared/functions.lua, list/index.lua; the prelude's SHARED (keys.rs),
--   RESERVATION (keys.rs) and BATCH_RESERVATION (queue/mod.rs).
--
-- The key is free for a shared holder when absent, marked shared, or reserved for a batch of
-- shared waiters, and no live exclusive waiter queued before this one: for a queued waiter,
-- before its place in the queue (its score); for anyone else, before now. A waiter that is no longer in the queue though an earlier attempt queued it
-- was woken in a batch (its place was the batch's reservation, queue/mod.rs): every exclusive
-- waiter left in the queue is behind it. An absent key with a live exclusive waiter ahead is
-- reserved for the head of the queue and woken (queue/mod.rs, step 3). A grant reads the
-- fencing counter without raising it: a shared holder sees the current fence and takes none
-- (docs/recipes.md).

if redis.replicate_commands then redis.replicate_commands() end
local last, index = #KEYS, false
if ARGV[13] == '1' then index, last = KEYS[#KEYS], #KEYS - 1 end
local key, readers, queue = KEYS[1], KEYS[2], KEYS[last]
local token, ttl, entry = ARGV[1], tonumber(ARGV[2]), ARGV[5]
local now = shared_now()
local kind = redis.call('type', key).ok
local value = false
if kind == 'string' then value = redis.call('get', key) end
local function granted()
  if entry ~= '' then queue_leave(queue, entry) end
  local counter = 0
  if ARGV[4] == '1' then counter = tonumber(redis.call('hget', KEYS[3], 'fence')) or 0 end
  return {1, false, 0, -1, false, counter, 0}
end
if value == SHARED and redis.call('zscore', readers, token) then return granted() end
local open = kind == 'none' or value == SHARED or value == RESERVATION .. BATCH_RESERVATION
if open then
  local place = entry ~= '' and redis.call('zscore', queue, entry)
  if place then
    open = not shared_writer_ahead(queue, tonumber(place), ARGV[8])
  elseif entry == '' or ARGV[11] ~= '1' then
    open = not shared_writer_ahead(queue, now, ARGV[8])
  end
  if not open and kind == 'none' and queue_defer(key, queue, ARGV[8], ARGV[9], entry) then
    kind, value = 'string', redis.call('get', key)
  end
end
if open then
  redis.call('zadd', readers, now + ttl, token)
  redis.call('set', key, SHARED, 'PX', ttl)
  shared_settle(key, readers, now)
  if index then index_add(index, key) end
  return granted()
end
local pttl = redis.call('pttl', key)
if pttl == -2 then pttl = 0 end
local foreign = false
if kind ~= 'string' and kind ~= 'none' then foreign = kind end
local rank = -1
if entry ~= '' then rank = queue_join(queue, entry, ARGV[6], ARGV[12], ARGV[7]) end
return {0, value, pttl, rank, foreign, 0, 0}
