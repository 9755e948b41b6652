-- Records a run in its name's history (lock/history.rs), for the scripts that give a lock back:
-- holder/release.lua, shared/release.lua and keep/keep.lua, after their own work.
--
-- KEYS: none of its own; the function takes the history key.
-- ARGV: none of its own; the function reads `Record::args` (four of them) from ARGV[first].
-- Returns: nothing (a library: it defines this function and runs nothing):
--   history_record(key, first, held): pushes the entry ARGV[first] ('' records nothing) on the
--     list `key` where `held` (the token held the key here) or ARGV[first + 3] is '1' (the
--     caller knows the run happened), keeps the ARGV[first + 1] newest entries, and makes the
--     list expire ARGV[first + 2] ms after this write.
-- Needs: nothing.
--
-- Every call is a pcall, and nothing before it depends on it: a history that cannot be written
-- (another client's key of another type, a server out of memory) costs the run its entry there,
-- never the release, the keep or their answer. A key that is not a list is left as it is.

local function history_record(key, first, held)
  local entry = ARGV[first]
  if entry == '' or not (held or ARGV[first + 3] == '1') then return end
  if type(redis.pcall('lpush', key, entry)) ~= 'number' then return end
  redis.pcall('ltrim', key, 0, tonumber(ARGV[first + 1]) - 1)
  redis.pcall('pexpire', key, ARGV[first + 2])
end
