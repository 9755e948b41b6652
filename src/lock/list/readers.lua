-- The live shared holders of several locks at once (`status` without a name, list.rs).
--
-- KEYS: sets of readers (shared.rs), all of one hash slot on a cluster.
-- ARGV: none.
-- Returns: for each set in KEYS, in order, its live holders as {token, remaining TTL in ms}.
-- Needs: nothing.

local t = redis.call('time')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local out = {}
for k = 1, #KEYS do
  local found = redis.call('zrangebyscore', KEYS[k], '(' .. now, '+inf', 'WITHSCORES')
  local readers = {}
  for i = 1, #found, 2 do readers[#readers + 1] = {found[i], tonumber(found[i + 1]) - now} end
  out[k] = readers
end
return out
