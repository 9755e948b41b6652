-- Extends a lock or a semaphore's slot (`extend`, holder.rs): compare-and-PEXPIRE.
--
-- KEYS: [1] the key, [2] its readers, then a semaphore's `limit::settle_keys` from [3] (none
--   for a mutex).
-- ARGV: [1] token, [2] ttl ms.
-- Returns: {1, expiry before, expiry now} (milliseconds on the server's clock, -1 for none) so
--   that a failed extension can be undone (holder/restore.lua), {2, 0, 0} when the token is a
--   shared holder (nothing is touched), or {0, 0, 0}.
-- Needs: limit/functions.lua.
--
-- Only if the key holds our token. It never re-creates a missing key: a lock that expired has
-- had a gap in which someone else may have held it. A semaphore's limit is settled. TIME is
-- read after the writes: scripts on servers before Redis 5 may not write after reading the
-- clock.

if redis.replicate_commands then redis.replicate_commands() end
if redis.call('get', KEYS[1]) ~= ARGV[1] then
  if redis.call('zscore', KEYS[2], ARGV[1]) then return {2, 0, 0} end
  return {0, 0, 0}
end
local left = redis.call('pttl', KEYS[1])
redis.call('pexpire', KEYS[1], ARGV[2])
if #KEYS > 2 then limit_settle(KEYS[3], 4, #KEYS - 3) end
local t = redis.call('time')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local before = -1
if left >= 0 then before = now + left end
return {1, before, now + ARGV[2]}
