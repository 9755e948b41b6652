-- The index of the keys redlock sets under a prefix (keys::index): a sorted set of key names,
-- each scored by when a script last saw it exist (ms on the server's clock). `status` lists
-- from it on a server too large to walk (lock/list.rs).
--
-- KEYS: none of its own; `index_add` takes the keys it touches.
-- ARGV: none of its own.
-- Returns: nothing (a library: it defines this function and runs nothing):
--   index_add(index, key): enters `key`, just set by the calling script, in `index`, and looks
--     at the two entries seen longest ago: one whose key is gone leaves the index, the other is
--     seen now. So each key set adds at most one entry and checks two, and the index stays
--     near the number of keys that exist, with no clean-up of its own. Reads the server's
--     clock, then writes: scripts call `redis.replicate_commands()` first for servers before
--     Redis 5.
-- Needs: nothing.
--
-- Safe to add to any script that grants: it touches the index alone (never a lock, a queue or
-- a counter) and only through `redis.pcall`, so an index that cannot be written (another type
-- at its key, an ACL, a full server) changes nothing the script decided or returns; exclusion
-- never reads the index, only `status` does, and that reads each key it names.

local function index_add(index, key)
  local clock = redis.pcall('time')
  if type(clock) ~= 'table' or clock.err then return end
  local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
  local oldest = redis.pcall('zrange', index, 0, 1)
  if type(oldest) == 'table' and not oldest.err then
    for _, old in ipairs(oldest) do
      if old ~= key then
        local exists = redis.pcall('exists', old)
        if exists == 1 then
          redis.pcall('zadd', index, now, old)
        elseif exists == 0 then
          redis.pcall('zrem', index, old)
        end
      end
    end
  end
  redis.pcall('zadd', index, now, key)
end
