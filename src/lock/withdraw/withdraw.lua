-- The clean-up after an attempt (withdraw.rs): deletes what the round set and did not win, and
-- a waiter's leaving of the queue.
--
-- KEYS: the target's keys (all its slots for a semaphore), then its readers for a shared
--   target, then its limit key for a semaphore, and last its queue.
-- ARGV: [1] token, [2] the waiter's entry ('' for none), [3] the wake-up prefix, [4] the
--   reservation ms, [5] the key a grant holds ('' for none), [6] whether the target is shared
--   ('1'), [7] whether it is a semaphore ('1').
-- Returns: 1.
-- Needs: queue/functions.lua, shared/functions.lua, limit/functions.lua.
--
-- Deletes our token from whichever of the target's keys hold it, except the key a grant holds;
-- that wakes nobody, since what it deletes never was a grant. With an entry it also leaves the
-- queue, and hands any of those keys
-- reserved for it to the next waiter. For a shared target a failed attempt removes our entry
-- from the readers, and the key with the last one (shared.rs). For a semaphore the limit key is
-- settled last (limit.rs).

if redis.replicate_commands then redis.replicate_commands() end
local queue = KEYS[#KEYS]
local semaphore = ARGV[7] == '1'
if ARGV[6] == '1' and ARGV[5] == '' and redis.call('zrem', KEYS[#KEYS - 1], ARGV[1]) == 1 then
  if shared_settle(KEYS[1], KEYS[#KEYS - 1], shared_now()) == 0 and shared_marked(KEYS[1]) then
    redis.call('del', KEYS[1])
  end
end
local last = #KEYS - 1
if semaphore then last = #KEYS - 2 end
for i = 1, last do
  local value = false
  if redis.call('type', KEYS[i]).ok == 'string' then value = redis.call('get', KEYS[i]) end
  if value == ARGV[1] and KEYS[i] ~= ARGV[5] then
    redis.call('del', KEYS[i])
  elseif queue_claims(value, ARGV[2]) then
    queue_hand_over(KEYS[i], queue, ARGV[3], ARGV[4], ARGV[2])
  end
end
if ARGV[2] ~= '' then queue_leave(queue, ARGV[2]) end
if semaphore then limit_settle(KEYS[#KEYS - 1], 1, last) end
return 1
