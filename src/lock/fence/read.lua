-- A fencing counter as `status` reads it (fence.rs).
--
-- KEYS: [1] the counter.
-- ARGV: none.
-- Returns: {fence, token}: the last fence issued (0 when none) and the token it went to (false
--   when none).
-- Needs: nothing.

return {tonumber(redis.call('hget', KEYS[1], 'fence')) or 0, redis.call('hget', KEYS[1], 'token')}
