-- The fence's write-back (fence.rs, step 3): raises the counter to the new fence while the lock
-- key still holds our token.
--
-- KEYS: [1] the lock (or slot) key, [2] its fencing counter.
-- ARGV: [1] token, [2] the fence.
-- Returns: 1 when we hold the lock here (the counter is now >= the fence), else 0.
-- Needs: nothing.

if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
local current = tonumber(redis.call('hget', KEYS[2], 'fence')) or 0
if tonumber(ARGV[2]) > current then
  redis.call('hset', KEYS[2], 'fence', ARGV[2], 'token', ARGV[1])
end
return 1
