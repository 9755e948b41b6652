-- Puts back the expiry a failed extension of a shared holder replaced (holder.rs, `restore`).
--
-- KEYS: [1] the lock key, [2] its readers.
-- ARGV: [1] token, [2] the expiry that extension set, [3] the expiry before it.
-- Returns: 1 when put back, 0 when the entry no longer has the expiry that extension set
--   (nothing is touched).
-- Needs: shared/functions.lua.
--
-- An expiry already past removes the holder, as it would have gone by then; with nobody left
-- the key goes too.

if redis.replicate_commands then redis.replicate_commands() end
if tonumber(redis.call('zscore', KEYS[2], ARGV[1])) ~= tonumber(ARGV[2]) then return 0 end
redis.call('zadd', KEYS[2], ARGV[3], ARGV[1])
if shared_settle(KEYS[1], KEYS[2], shared_now()) == 0 and shared_marked(KEYS[1]) then
  redis.call('del', KEYS[1])
end
return 1
