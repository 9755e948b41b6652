-- The queue's hand-over of the key a script frees, for the scripts that take `HandOver::args`
-- (queue/mod.rs) as their last three arguments.
--
-- KEYS: [1] the freed key, [2] its queue; the script's own keys after them.
-- ARGV: the script's own first, then the last three: the wake-up prefix, the reservation ms and
--   this process's own entry ('' for none).
-- Returns: nothing (a library: it defines these functions and runs nothing):
--   queue_hand_over_freed(): `queue_hand_over` of KEYS[1] (step 3).
--   queue_pass_on_freed(): `queue_pass_on` of KEYS[1], for a key the script does not hold.
-- Needs: queue/functions.lua.

local function queue_hand_over_freed()
  queue_hand_over(KEYS[1], KEYS[2], ARGV[#ARGV - 2], ARGV[#ARGV - 1], ARGV[#ARGV])
end

local function queue_pass_on_freed()
  queue_pass_on(KEYS[1], KEYS[2], ARGV[#ARGV - 2], ARGV[#ARGV - 1], ARGV[#ARGV])
end
