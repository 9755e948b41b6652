-- Records a run in its name's history with no give-back around it (lock/history.rs): for a run
-- whose give-back found its token gone on a quorum, so the lock was lost while it ran, which
-- the entry recorded with that give-back could not yet say.
--
-- KEYS: [1] the name's history.
-- ARGV: [1] to [4] `history::args` (history/record.lua), with the run known to have happened.
-- Returns: 1.
-- Needs: history/record.lua.

history_record(KEYS[1], 1, false)
return 1
