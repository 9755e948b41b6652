//! The Lua scripts that make release and extend safe: nobody deletes or extends a lock whose
//! token it does not present. `redis::Script` sends `EVALSHA` and falls back to `EVAL` on
//! `NOSCRIPT`, so a restarted server (empty script cache) costs one extra round trip, once.

use redis::Script;
use std::sync::OnceLock;

/// `SET key token NX PX ttl`, and when the key is taken, what it holds and for how long, in the
/// same round trip: {1, nil, 0} when set, else {0, value (strings only), pttl}. A script rather than a
/// pipeline because a pipeline is several replies, and the client waits its full read timeout
/// for each one from a stopped server.
const ACQUIRE: &str = r"
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, false, 0}
end
local value = false
if redis.call('type', KEYS[1]).ok == 'string' then value = redis.call('get', KEYS[1]) end
return {0, value, redis.call('pttl', KEYS[1])}";

/// Deletes the key only if it holds our token, then tells waiters on `ARGV[2]` that it is free.
const RELEASE: &str = r"
if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('del', KEYS[1])
  redis.call('publish', ARGV[2], 'released')
  return 1
end
return 0";

/// Sets a new TTL only if the key holds our token. It never re-creates a missing key: a lock
/// that expired has had a gap in which someone else may have held it. Returns {1, expiry before,
/// expiry now} (milliseconds on the server's clock, -1 for none) so that a failed extension can
/// be undone, or {0, 0, 0}. TIME is read after the write: scripts on servers before Redis 5 may
/// not write after reading the clock.
const EXTEND: &str = r"
if redis.call('get', KEYS[1]) ~= ARGV[1] then return {0, 0, 0} end
local left = redis.call('pttl', KEYS[1])
redis.call('pexpire', KEYS[1], ARGV[2])
local t = redis.call('time')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local before = -1
if left >= 0 then before = now + left end
return {1, before, now + ARGV[2]}";

/// Puts back the expiry `ARGV[3]` (-1: none) a failed extension replaced, only if the key still
/// holds our token and the expiry that extension set, `ARGV[2]` (to the millisecond or two that
/// separate the script's clock readings): nobody else's change is undone. An expiry already
/// past deletes the key, as it would have expired by then. It must read the clock before it
/// writes, which servers before Redis 5 allow only after `redis.replicate_commands()`.
const RESTORE: &str = r"
if redis.replicate_commands then redis.replicate_commands() end
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
local t = redis.call('time')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
if math.abs(now + redis.call('pttl', KEYS[1]) - ARGV[2]) > 2 then return 0 end
if tonumber(ARGV[3]) < 0 then
  redis.call('persist', KEYS[1])
else
  redis.call('pexpireat', KEYS[1], ARGV[3])
end
return 1";

/// What one server knows about a key, in one round trip: type, value (strings only), PTTL.
const INSPECT: &str = r"
local kind = redis.call('type', KEYS[1]).ok
local value = false
if kind == 'string' then value = redis.call('get', KEYS[1]) end
return {kind, value, redis.call('pttl', KEYS[1])}";

/// Deletes the key whatever its value (`release --force`), and wakes waiters. Returns
/// {removed, value (strings only), type}.
const FORCE_RELEASE: &str = r"
local kind = redis.call('type', KEYS[1]).ok
local value = false
if kind == 'string' then value = redis.call('get', KEYS[1]) end
local removed = redis.call('del', KEYS[1])
if removed == 1 then redis.call('publish', ARGV[1], 'released') end
return {removed, value, kind}";

macro_rules! cached_script {
    ($name:ident, $source:ident) => {
        pub(crate) fn $name() -> &'static Script {
            static SCRIPT: OnceLock<Script> = OnceLock::new();
            SCRIPT.get_or_init(|| Script::new($source))
        }
    };
}

cached_script!(acquire, ACQUIRE);
cached_script!(release, RELEASE);
cached_script!(extend, EXTEND);
cached_script!(restore, RESTORE);
cached_script!(inspect, INSPECT);
cached_script!(force_release, FORCE_RELEASE);

/// The compare-and-delete as a plain `EVAL` carrying its source, for a failed attempt's cleanup:
/// it may be written behind a SET whose reply is late, and an `EVALSHA` the server does not know
/// (restarted, or never released anything) would need one more round trip that the cleanup may
/// not get. One `EVAL` works on any server it reaches.
pub(crate) fn release_eval(key: &str, token: &str, channel: &str) -> redis::Cmd {
    let mut eval = redis::cmd("EVAL");
    eval.arg(RELEASE).arg(1).arg(key).arg(token).arg(channel);
    eval
}

/// The pub/sub channel on which a release of `key` is announced.
pub(crate) fn release_channel(key: &str) -> String {
    format!("{key}:released")
}
