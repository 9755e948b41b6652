-- Puts back the expiry a failed extension replaced (holder.rs, `restore`): compare-and-restore.
--
-- KEYS: [1] the key; [2] (its readers) is not read.
-- ARGV: [1] token, [2] the expiry that extension set, [3] the expiry before it (-1: none), in
--   ms on the server's clock.
-- Returns: 1 when put back, 0 when the key no longer holds our token or that expiry (nothing is
--   touched).
-- Needs: nothing.
--
-- Only if the key still holds our token and the expiry that extension set (to the millisecond
-- or two that separate the script's clock readings): nobody else's change is undone. An expiry
-- already past deletes the key, as it would have expired by then. It must read the clock before
-- it writes, which servers before Redis 5 allow only after `redis.replicate_commands()`.

if redis.replicate_commands then redis.replicate_commands() end
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
local t = redis.call('time')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
if math.abs(now + redis.call('pttl', KEYS[1]) - ARGV[2]) > 2 then return 0 end
if tonumber(ARGV[3]) < 0 then
  redis.call('persist', KEYS[1])
else
  redis.call('pexpireat', KEYS[1], ARGV[3])
end
return 1
