-- Keeps a lock after its run (`--hold-at-least`, keep.rs): swaps our token for a kept value
-- that expires when the hold is over.
--
-- KEYS: [1] the key, [2] its queue, then a semaphore's `limit::settle_keys` from [3] (none for
--   a mutex).
-- ARGV: [1] token, [2] the kept value, [3] what is left of the hold in ms, [4] the PTTL we
--   expect the key to have when this runs at once (0: unknown), then `HandOver::args`
--   (queue/freed.lua).
-- Returns: 1 when kept, 2 when released (nothing was left of the hold), 0 when the key is not
--   ours.
-- Needs: queue/functions.lua, queue/freed.lua, limit/functions.lua.
--
-- Only if the key holds our token. A key with less left than ARGV[4] shows by how much this
-- request arrived late, and the hold is shortened by as much (see `crate::hold`). A hold with
-- nothing left is a release, handed to the next waiter. A key that is not ours but reserved for
-- this process's own entry is passed on, as a release does. A semaphore's limit is settled
-- after any of these: a kept slot keeps it. Its writes depend on the clock (the PTTL), so it
-- asks servers before Redis 5 to replicate them as effects, not as the script.

if redis.replicate_commands then redis.replicate_commands() end
local function settled(code)
  if #KEYS > 2 then limit_settle(KEYS[3], 4, #KEYS - 3) end
  return code
end
if redis.call('get', KEYS[1]) ~= ARGV[1] then
  queue_pass_on_freed()
  return settled(0)
end
local px = tonumber(ARGV[3])
local expected = tonumber(ARGV[4])
if expected > 0 then
  local pttl = redis.call('pttl', KEYS[1])
  if pttl >= 0 and pttl < expected then px = px - (expected - pttl) end
end
if px > 0 then
  redis.call('set', KEYS[1], ARGV[2], 'PX', px)
  return settled(1)
end
queue_hand_over_freed()
return settled(2)
