-- A shared holder leaves (`release` of a `--shared` lock, holder.rs).
--
-- KEYS: [1] the lock key, [2] its queue, [3] its readers, [4] its name's history.
-- ARGV: [1] token, [2] to [5] `history::args` (history/record.lua), then `HandOver::args`
--   (queue/freed.lua).
-- Returns: 1 when it left, 0 when not a holder here, 2 when the token holds the key
--   exclusively (nothing is touched).
-- Needs: queue/functions.lua, queue/freed.lua, shared/functions.lua, history/record.lua.
--
-- Only a live entry of its token counts. When it was the last one, the key is handed to the
-- next waiter like a released lock (queue/mod.rs, step 3), else the key's expiry follows the
-- last holder left. A key that is not its share but reserved for this process's own entry (a
-- release that raced its win) is passed on to the next waiter. The run is recorded last.

if redis.replicate_commands then redis.replicate_commands() end
local now = shared_now()
local score = tonumber(redis.call('zscore', KEYS[3], ARGV[1]))
if not score or score <= now or not shared_marked(KEYS[1]) then
  if redis.call('type', KEYS[1]).ok == 'string' and redis.call('get', KEYS[1]) == ARGV[1] then
    return 2
  end
  queue_pass_on_freed()
  history_record(KEYS[4], 2, false)
  return 0
end
redis.call('zrem', KEYS[3], ARGV[1])
if shared_settle(KEYS[1], KEYS[3], now) == 0 then queue_hand_over_freed() end
history_record(KEYS[4], 2, true)
return 1
