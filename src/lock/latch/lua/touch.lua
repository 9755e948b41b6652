-- Creates a latch or counts it down (latch/lua.rs, `TOUCH`).
--
-- KEYS: [1] the latch.
-- ARGV: [1] the count to create it with (0: never create), [2] its TTL in ms, [3] the id to
--   count down ('' for none), [4] that id's record, [5] the latch's channel.
-- Returns: `latch_reply` with tag 'ok', 'other' (another count; fields empty), 'absent'
--   (missing, and no count to create it with) or 'foreign' (the foreign type alone in fields).
-- Needs: latch/lua/functions.lua; the prelude's LATCH_COUNT and SEPARATOR (keys.rs).
--
-- Creates the latch when it is missing and a count is given; refuses (`other`, writing
-- nothing) when it exists with another count than a given one; then records the id unless it
-- is already there (a retry keeps its first record) and, for a new id, publishes the message
-- `parse_heard` reads: count, held ids, id and record, separated by SEPARATOR. Nothing here
-- extends the latch's TTL.

local key, want, id = KEYS[1], tonumber(ARGV[1]), ARGV[3]
local count, kind = latch_find(key)
if count == false then return {'foreign', 0, 0, 0, {kind}} end
local created = 0
if count == nil then
  if want == 0 then return {'absent', 0, 0, 0, {}} end
  redis.call('hset', key, LATCH_COUNT, want)
  redis.call('pexpire', key, ARGV[2])
  count, created = want, 1
elseif want > 0 and count ~= want then
  return {'other', count, redis.call('pttl', key), 0, {}}
end
if id ~= '' and redis.call('hsetnx', key, id, ARGV[4]) == 1 then
  local held = redis.call('hlen', key) - 1
  -- pcall: a count-down a refused PUBLISH (renamed, or denied by an ACL) announces to nobody is
  -- still counted; the waiters see it at their next read, late, never wrong.
  redis.pcall('publish', ARGV[5], count .. SEPARATOR .. held .. SEPARATOR .. id .. SEPARATOR .. ARGV[4])
end
return latch_reply('ok', key, count, created)
