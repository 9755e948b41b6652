-- Reads a latch (latch/lua.rs, `READ`).
--
-- KEYS: [1] the latch.
-- ARGV: none.
-- Returns: {'ok', count, pttl, 0, fields} (`latch_reply`), {'absent', 0, 0, 0, {}} or
--   {'foreign', 0, 0, 0, {type}}.
-- Needs: latch/lua/functions.lua.

local count, kind = latch_find(KEYS[1])
if count == nil then return {'absent', 0, 0, 0, {}} end
if not count then return {'foreign', 0, 0, 0, {kind}} end
return latch_reply('ok', KEYS[1], count, 0)
