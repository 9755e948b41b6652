-- What one server holds of a target, in one round trip (`status`, inspect.rs).
--
-- KEYS: the target's keys (one for a mutex, every slot of a semaphore), then the fencing counter
--   of each, in the same order (fence.rs), its readers (shared.rs), the limit key of the
--   semaphore of its name (limit.rs), then its queue.
-- ARGV: none.
-- Returns: {keys, waiting, readers, limit}: each key's {type, value (strings only), PTTL, its
--   counter as fence_read gives it}; the first MAX_WAITERS entries of the queue with their
--   scores; the live shared holders with their remaining TTL in ms; and the limit key's value
--   (false when none).
-- Needs: fence/read.lua (fence_read); the prelude's MAX_WAITERS (inspect.rs).

local width = (#KEYS - 3) / 2
local keys = {}
for i = 1, width do
  local kind = redis.call('type', KEYS[i]).ok
  local value = false
  if kind == 'string' then value = redis.call('get', KEYS[i]) end
  keys[i] = {kind, value, redis.call('pttl', KEYS[i]), fence_read(KEYS[width + i])}
end
local waiting = redis.pcall('zrange', KEYS[#KEYS], 0, MAX_WAITERS - 1, 'WITHSCORES')
if type(waiting) ~= 'table' or waiting.err then waiting = {} end
local t = redis.call('time')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local readers = {}
local found = redis.pcall('zrangebyscore', KEYS[#KEYS - 2], '(' .. now, '+inf', 'WITHSCORES')
if type(found) == 'table' and not found.err then
  for i = 1, #found, 2 do readers[#readers + 1] = {found[i], tonumber(found[i + 1]) - now} end
end
local limit = redis.pcall('get', KEYS[#KEYS - 1])
if type(limit) ~= 'string' then limit = false end
return {keys, waiting, readers, limit}
