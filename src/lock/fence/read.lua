-- How a fencing counter is read (fence.rs), for the scripts that show it (`status`:
-- inspect/inspect.lua).
--
-- KEYS: none of its own; the function takes the counter.
-- ARGV: none of its own.
-- Returns: nothing (a library: it defines this function and runs nothing):
--   fence_read(counter): {fence, token}, the last fence issued (0 when none) and the token it
--     went to (false when none).
-- Needs: nothing.

local function fence_read(counter)
  return {tonumber(redis.call('hget', counter, 'fence')) or 0, redis.call('hget', counter, 'token')}
end
