-- A latch as every latch script reads it and answers (latch/lua.rs).
--
-- KEYS: none of its own; each function takes the latch's key.
-- ARGV: none of its own; each function takes its arguments.
-- Returns: nothing (a library: it defines these functions and runs nothing):
--   latch_find(key): the latch's count, nil when the key does not exist, or false and the
--     key's type when another client keeps something else there (a hash without the count
--     field included).
--   latch_reply(tag, key, count, created): what every script returns, {tag, count, pttl,
--     created, fields}: `fields` the hash flattened (the count field among them).
-- Needs: the prelude's LATCH_COUNT (keys.rs).

local function latch_find(key)
  local kind = redis.call('type', key).ok
  if kind == 'none' then return nil end
  if kind ~= 'hash' then return false, kind end
  local count = redis.call('hget', key, LATCH_COUNT)
  if not count then return false, 'hash' end
  return tonumber(count)
end

local function latch_reply(tag, key, count, created)
  return {tag, count, redis.call('pttl', key), created, redis.call('hgetall', key)}
end
