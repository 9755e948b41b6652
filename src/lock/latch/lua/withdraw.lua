-- Takes back what a refused latch run wrote on one server (latch/lua.rs, `WITHDRAW`).
--
-- KEYS: [1] the latch.
-- ARGV: [1] the count this run created the latch with here (0: it created nothing here),
--   [2] the id it recorded here ('' for none), [3] that id's record.
-- Returns: 2 when it deleted the latch, 1 when it removed the id, 0 when nothing there is this
--   run's any more.
-- Needs: latch/lua/functions.lua; the prelude's LATCH_COUNT (keys.rs).
--
-- A latch this run created is deleted only while it holds nothing but what this run put there
-- (its count, and its own id with its own record): an id another run counted down there stays,
-- and so does the latch. An id is removed only while it holds this run's record, which no other
-- run has (a retry of the same id keeps the first record, so it is never this run's to take).

local key, made, id, record = KEYS[1], tonumber(ARGV[1]), ARGV[2], ARGV[3]
local count = latch_find(key)
if not count then return 0 end
if made > 0 and count == made then
  local fields = redis.call('hgetall', key)
  local ours = true
  for i = 1, #fields, 2 do
    if fields[i] ~= LATCH_COUNT and not (fields[i] == id and fields[i + 1] == record) then
      ours = false
    end
  end
  if ours then
    redis.call('del', key)
    return 2
  end
end
if id ~= '' and redis.call('hget', key, id) == record then
  redis.call('hdel', key, id)
  return 1
end
return 0
