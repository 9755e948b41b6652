-- Removes a key whatever its value, and its shared holders (`release --force`, inspect.rs),
-- handing it to the next waiter like a release.
--
-- KEYS: [1] the key, [2] its queue, [3] its readers, then a semaphore's `limit::settle_keys`
--   from [4] (none for a mutex).
-- ARGV: `HandOver::args` (queue/freed.lua).
-- Returns: {removed (1 or 0), value (strings only, else false), type}.
-- Needs: queue/functions.lua, queue/freed.lua, limit/functions.lua.
--
-- A semaphore's limit is settled after the slot went.

if redis.replicate_commands then redis.replicate_commands() end
local kind = redis.call('type', KEYS[1]).ok
local value = false
if kind == 'string' then value = redis.call('get', KEYS[1]) end
local removed = redis.call('exists', KEYS[1])
redis.call('del', KEYS[3])
if removed == 1 then queue_hand_over_freed() end
if #KEYS > 3 then limit_settle(KEYS[4], 5, #KEYS - 4) end
return {removed, value, kind}
