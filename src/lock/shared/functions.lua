-- The shared holders' steps as Lua functions, for the scripts that take them (why they hold is
-- shared.rs's module comment).
--
-- KEYS: none of its own; each function takes the keys it touches.
-- ARGV: none of its own; each function takes its arguments.
-- Returns: nothing (a library: it defines these functions and runs nothing):
--   shared_now(): the server's clock in ms (scripts that read it call
--     `redis.replicate_commands()` first, for servers before Redis 5).
--   shared_marked(key): whether `key` holds the shared mark.
--   shared_settle(key, readers, now): forgets holders past their expiry and makes the key
--     (while it holds the mark) and the set expire with the last one left; returns how many
--     are left.
--   shared_writer_ahead(queue, arrived, prefix): whether an exclusive waiter that still listens
--     queued before `arrived`.
-- Needs: the prelude's SHARED (keys.rs) and SHARED_MARK (queue/mod.rs).

local function shared_now()
  local t = redis.call('time')
  return t[1] * 1000 + math.floor(t[2] / 1000)
end

local function shared_marked(key)
  return redis.call('type', key).ok == 'string' and redis.call('get', key) == SHARED
end

local function shared_settle(key, readers, now)
  redis.call('zremrangebyscore', readers, '-inf', now)
  local last = redis.call('zrange', readers, -1, -1, 'WITHSCORES')[2]
  if not last then return 0 end
  if shared_marked(key) then redis.call('pexpireat', key, last) end
  redis.call('pexpireat', readers, last)
  return redis.call('zcard', readers)
end

local function shared_writer_ahead(queue, arrived, prefix)
  for _, entry in ipairs(redis.call('zrangebyscore', queue, '-inf', '(' .. arrived)) do
    if string.sub(entry, 1, #SHARED_MARK) ~= SHARED_MARK and
        tonumber(redis.call('pubsub', 'numsub', prefix .. entry)[2]) > 0 then
      return true
    end
  end
  return false
end
