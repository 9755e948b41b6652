-- Keeps a lock after its run (`--hold-at-least`, keep.rs): swaps our token for a kept value
-- that expires when the hold is over.
--
-- KEYS: [1] the key, [2] its queue, [3] its name's history, then a semaphore's
--   `limit::settle_keys` from [4] (none for a mutex).
-- ARGV: [1] token, [2] the kept value, [3] what is left of the hold in ms, or with [5] the
--   whole hold, [4] the PTTL we expect the key to have when this runs at once (0: unknown),
--   [5] the acquisition time in unix ms to count the hold from on this server's clock (0: [3]
--   is what is left), [6] to [9] `history::args` (history/record.lua), then `HandOver::args`
--   (queue/freed.lua).
-- Returns: {1, ms kept} when kept, {2, 0} when released (nothing was left of the hold), {0, 0}
--   when the key is not ours.
-- Needs: queue/functions.lua, queue/freed.lua, limit/functions.lua, history/record.lua.
--
-- Only if the key holds our token. A key with less left than ARGV[4] shows by how much this
-- request arrived late, and the hold is shortened by as much (see keep.rs). With ARGV[5]
-- the hold ends at that time plus ARGV[3] on this server's clock (`TIME`, when this runs, so
-- neither the releasing host's clock nor the request's delay plays a part), and never later
-- than ARGV[3] from now. A hold with nothing left is a release, handed to the next waiter. A
-- key that is not ours but reserved for this process's own entry is passed on, as a release
-- does. A semaphore's limit is settled after any of these: a kept slot keeps it; then the run
-- is recorded. Its writes depend on the clock (the PTTL, TIME), so it asks servers before
-- Redis 5 to replicate them as effects, not as the script.

if redis.replicate_commands then redis.replicate_commands() end
local function settled(code, px)
  if #KEYS > 3 then limit_settle(KEYS[4], 5, #KEYS - 4) end
  history_record(KEYS[3], 6, code ~= 0)
  return {code, px}
end
if redis.call('get', KEYS[1]) ~= ARGV[1] then
  queue_pass_on_freed()
  return settled(0, 0)
end
local px = tonumber(ARGV[3])
local expected = tonumber(ARGV[4])
local acquired = tonumber(ARGV[5])
if expected > 0 then
  local pttl = redis.call('pttl', KEYS[1])
  if pttl >= 0 and pttl < expected then px = px - (expected - pttl) end
end
if acquired > 0 then
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  px = math.min(px, acquired + px - now)
end
if px > 0 then
  redis.call('set', KEYS[1], ARGV[2], 'PX', px)
  return settled(1, px)
end
queue_hand_over_freed()
return settled(2, 0)
