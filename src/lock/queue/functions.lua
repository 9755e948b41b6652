-- The queue's steps as Lua functions, for every script that takes one of them (the protocol,
-- steps 1 to 5, is queue/mod.rs's module comment).
--
-- KEYS: none of its own; each function takes the keys it touches.
-- ARGV: none of its own; each function takes its arguments.
-- Returns: nothing (a library: it defines these functions and runs nothing):
--   queue_join(queue, entry, stamp, trusted, lease): step 1; returns the rank. Reads the
--     server's clock, then writes: scripts call `redis.replicate_commands()` first for servers
--     before Redis 5.
--   queue_leave(queue, entry): step 5.
--   queue_claims(value, entry): step 4; whether the key's `value` is this waiter's.
--   queue_hand_over(key, queue, prefix, reserve, own): step 3 for the freed `key`; `reserve` 0
--     means wake nobody and delete the key (a failed attempt's clean-up).
--   queue_defer(key, queue, prefix, reserve, entry): step 3 for a `key` found free by the
--     attempt of `entry` ('' for one not queued): whether a live waiter queued before it was
--     woken and the key reserved for it instead (`entry` must not take the key then).
--   queue_pass_on(key, queue, prefix, reserve, own): step 3 for a `key` that holds a
--     reservation for `own`, which no longer waits (step 5).
-- Needs: the prelude's RESERVATION, BATCH_RESERVATION, SHARED_MARK, DEAD_SKIPPED and BATCH_MAX
--   (queue/mod.rs).

local function queue_join(queue, entry, stamp, trusted, lease)
  local t = redis.call('time')
  local now = t[1] * 1000 + math.floor(t[2] / 1000)
  local score = math.max(math.min(tonumber(stamp), now), now - tonumber(trusted))
  redis.call('zadd', queue, 'NX', score, entry)
  if redis.call('pttl', queue) < tonumber(lease) / 2 then redis.call('pexpire', queue, lease) end
  return redis.call('zrank', queue, entry)
end

local function queue_leave(queue, entry)
  redis.call('zrem', queue, entry)
end

local function queue_claims(value, entry)
  return entry ~= '' and value == RESERVATION .. entry
end

-- Wakes the first live waiter of `queue`, or the batch of shared waiters at its head, and
-- reserves `key` for it: whether one heard it. Each entry woken, or found dead (nobody heard
-- it), leaves the queue; its place from then on is the reservation. Stops before `stop`.
--
-- A PUBLISH the server refuses (renamed, or denied by an ACL) is a wake-up nobody heard: pcall
-- turns its error into a count of 0, never into a failed release or acquire. Nobody heard means
-- nobody was told, so no reservation is left for that waiter (the key is deleted, kept by the
-- attempt that found it free, or goes to one who did hear): exclusion is untouched, and the
-- waiters, still queued or not, ask on their own schedule, later than a wake-up would have had
-- them ask.
local function queue_wake(key, queue, prefix, reserve, stop)
  for _ = 1, DEAD_SKIPPED do
    local head = redis.call('zrange', queue, 0, 0)[1]
    if not head or head == stop then return false end
    redis.call('zrem', queue, head)
    if string.sub(head, 1, #SHARED_MARK) == SHARED_MARK then
      local woken, popped = 0, 1
      while true do
        if (tonumber(redis.pcall('publish', prefix .. head, 'go')) or 0) > 0 then woken = woken + 1 end
        local next = redis.call('zrange', queue, 0, 0)[1]
        if not next or next == stop or string.sub(next, 1, #SHARED_MARK) ~= SHARED_MARK or popped >= BATCH_MAX then break end
        head = redis.call('zpopmin', queue)[1]
        popped = popped + 1
      end
      if woken > 0 then
        redis.call('set', key, RESERVATION .. BATCH_RESERVATION, 'PX', reserve)
        return true
      end
    elseif (tonumber(redis.pcall('publish', prefix .. head, 'go')) or 0) > 0 then
      redis.call('set', key, RESERVATION .. head, 'PX', reserve)
      return true
    end
  end
  return false
end

local function queue_hand_over(key, queue, prefix, reserve, own)
  if own ~= '' then redis.call('zrem', queue, own) end
  if tonumber(reserve) > 0 and queue_wake(key, queue, prefix, reserve, false) then return end
  redis.call('del', key)
end

local function queue_defer(key, queue, prefix, reserve, entry)
  return tonumber(reserve) > 0 and queue_wake(key, queue, prefix, reserve, entry)
end

local function queue_pass_on(key, queue, prefix, reserve, own)
  if redis.call('type', key).ok == 'string' and queue_claims(redis.call('get', key), own) then
    queue_hand_over(key, queue, prefix, reserve, own)
  end
end
