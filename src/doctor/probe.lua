-- Runs commands as redlock's scripts run them and says which the server refused: a probe of the
-- user's permissions inside a script, for servers without ACL DRYRUN (doctor/access.rs).
--
-- KEYS: the names the commands take: a lock key, a queue, a hash and a run history (a list),
--   none of which may exist.
-- ARGV: the commands, each as its argument count, then its name and arguments; an argument
--   that is the byte 0x1F followed by N stands for KEYS[N].
-- Returns: {'exists'} when one of the keys exists (then nothing is run: the commands would
--   change it), else {name, error, …} for every command that failed. The commands write nothing
--   on keys that do not exist, but for a list that deletes what it wrote at its end.

local found = redis.pcall('exists', unpack(KEYS))
if type(found) == 'number' and found > 0 then return {'exists'} end
local failed = {}
local i = 1
while i <= #ARGV do
  local count = tonumber(ARGV[i])
  local call = {}
  for j = 1, count do
    local arg = ARGV[i + j]
    if string.byte(arg, 1) == 31 then arg = KEYS[tonumber(string.sub(arg, 2))] end
    call[j] = arg
  end
  local reply = redis.pcall(unpack(call))
  if type(reply) == 'table' and reply.err then
    failed[#failed + 1] = call[1]
    failed[#failed + 1] = reply.err
  end
  i = i + count + 1
end
return failed
