-- The limit's two rules as Lua functions, for every script that takes one of them (why they
-- hold is limit.rs's module comment).
--
-- KEYS: none of its own; `limit_settle` reads the slots it is given by position in KEYS.
-- ARGV: none of its own; each function takes its arguments.
-- Returns: nothing (a library: it defines these functions and runs nothing):
--   limit_other(limit, n): the number of slots the key `limit` records, when it is not `n`;
--     else false.
--   limit_settle(limit, first, n): after a change to the `n` slots KEYS[first] …
--     KEYS[first + n - 1], makes `limit` say `n` for as long as the longest of them lives, or
--     deletes it when none is left; a key that says another number is left alone. It reads
--     PTTLs before it writes: scripts call `redis.replicate_commands()` first for servers
--     before Redis 5.
-- Needs: nothing.

local function limit_other(limit, n)
  local found = tonumber(redis.pcall('get', limit))
  if found and found ~= n then return found end
  return false
end

local function limit_settle(limit, first, n)
  if limit_other(limit, n) then return end
  local longest = -2
  for i = first, first + n - 1 do
    local left = redis.call('pttl', KEYS[i])
    if left == -1 or (longest ~= -1 and left > longest) then longest = left end
  end
  if longest == -2 then
    redis.call('del', limit)
  elseif longest == -1 then
    redis.call('set', limit, n)
  else
    redis.call('set', limit, n, 'PX', math.max(longest, 1))
  end
end
