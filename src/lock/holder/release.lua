-- Releases a lock or a semaphore's slot (`release`, holder.rs): compare-and-delete, handing the
-- key to the next waiter.
--
-- KEYS: [1] the key, [2] its queue, [3] its readers, [4] its name's history, then a
--   semaphore's `limit::settle_keys` from [5] (none for a mutex).
-- ARGV: [1] token, [2] to [5] `history::args` (history/record.lua), then `HandOver::args`
--   (queue/freed.lua).
-- Returns: 1 when released, 0 when not ours, 2 when the token is a shared holder of it
--   (nothing is touched).
-- Needs: queue/functions.lua, queue/freed.lua, limit/functions.lua, history/record.lua.
--
-- Only if the key holds our token: it is then handed to the next waiter in the queue
-- (queue/mod.rs, step 3), or deleted. A key that is not ours but reserved for this process's
-- own entry (a release that raced its win) is passed on to the next waiter. A semaphore's limit
-- is settled after either, and the run recorded last.

if redis.replicate_commands then redis.replicate_commands() end
local code = 1
if redis.call('get', KEYS[1]) ~= ARGV[1] then
  if redis.call('zscore', KEYS[3], ARGV[1]) then return 2 end
  queue_pass_on_freed()
  code = 0
else
  queue_hand_over_freed()
end
if #KEYS > 4 then limit_settle(KEYS[5], 6, #KEYS - 5) end
history_record(KEYS[4], 2, code == 1)
return code
