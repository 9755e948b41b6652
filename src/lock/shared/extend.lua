-- A shared holder's new TTL (`extend` of a `--shared` lock, holder.rs).
--
-- KEYS: [1] the lock key, [2] its readers.
-- ARGV: [1] token, [2] ttl ms.
-- Returns: {1, expiry before, expiry now} (ms on the server's clock) for shared/restore.lua,
--   {2, 0, 0} when the token holds the key exclusively (nothing is touched), or {0, 0, 0}.
-- Needs: shared/functions.lua.
--
-- Only for a live entry: as for a lock, an expired holder is never brought back.

if redis.replicate_commands then redis.replicate_commands() end
local now = shared_now()
local score = tonumber(redis.call('zscore', KEYS[2], ARGV[1]))
if not score or score <= now or not shared_marked(KEYS[1]) then
  if redis.call('type', KEYS[1]).ok == 'string' and redis.call('get', KEYS[1]) == ARGV[1] then
    return {2, 0, 0}
  end
  return {0, 0, 0}
end
local set = now + tonumber(ARGV[2])
redis.call('zadd', KEYS[2], set, ARGV[1])
shared_settle(KEYS[1], KEYS[2], now)
return {1, score, set}
