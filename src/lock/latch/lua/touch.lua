-- Checks a latch, creates it where it is missing, or counts it down (latch/lua.rs, `TOUCH`).
--
-- KEYS: [1] the latch, and [2] (not on a cluster) the index of the keys under its prefix.
-- ARGV: [1] the count it must have (0: any), [2] the TTL in ms to create it with when it is
--   missing (0: never create; it then needs a count in [1]), [3] the id to count down ('' for
--   none), [4] that id's record, [5] the latch's channel.
-- Returns: `latch_reply` with tag 'ok' and in `made` what this call wrote (1: it created the
--   latch, plus 2: it recorded the id), 'other' (another count than [1]; fields empty),
--   'absent' (missing, and not to be created) or 'foreign' (the foreign type alone in fields).
--   'other', 'absent' and 'foreign' wrote nothing.
-- Needs: latch/lua/functions.lua, list/index.lua; the prelude's LATCH_COUNT and SEPARATOR (keys.rs).
--
-- A latch's first round never creates (its TTL is 0): what a round shows decides whether a
-- second one may (latch/decide.rs). A retry keeps an id's first record; a new id is published
-- as the message `parse_heard` reads: count, held ids, id and record, separated by SEPARATOR.
-- Nothing here extends the latch's TTL.

local key, want, ttl, id = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local count, kind = latch_find(key)
if count == false then return {'foreign', 0, 0, 0, {kind}} end
local made = 0
if count == nil then
  if want == 0 or ttl == 0 then return {'absent', 0, 0, 0, {}} end
  redis.call('hset', key, LATCH_COUNT, want)
  redis.call('pexpire', key, ttl)
  count, made = want, 1
  if KEYS[2] then index_add(KEYS[2], key) end
elseif want > 0 and count ~= want then
  return {'other', count, redis.call('pttl', key), 0, {}}
end
if id ~= '' and redis.call('hsetnx', key, id, ARGV[4]) == 1 then
  made = made + 2
  local held = redis.call('hlen', key) - 1
  -- pcall: a count-down a refused PUBLISH (renamed, or denied by an ACL) announces to nobody is
  -- still counted; the waiters see it at their next read, late, never wrong.
  redis.pcall('publish', ARGV[5], count .. SEPARATOR .. held .. SEPARATOR .. id .. SEPARATOR .. ARGV[4])
end
return latch_reply('ok', key, count, made)
