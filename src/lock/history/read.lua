-- Reads a name's run history on one server (`redlock history`, lock/history.rs).
--
-- KEYS: [1] the history.
-- ARGV: none.
-- Returns: {entries, newest first; the list's PTTL in ms (-2: no list)}.
-- Needs: nothing.

return {redis.call('lrange', KEYS[1], 0, -1), redis.call('pttl', KEYS[1])}
