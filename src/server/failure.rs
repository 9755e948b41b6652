//! Why a wire (wire.rs) failed, kept as data: a round's closure that is run again over the
//! replies so far (replay.rs) meets the same error each time, as it would have on a blocking
//! connection. And a server's refusals that a user can fix, in words that say how (`refusal`).

use redis::Value;
use std::io;

/// Why a connection failed: enough to rebuild the error a request would have met.
#[derive(Clone, Debug)]
pub(crate) struct WireFailure {
    kind: io::ErrorKind,
    message: String,
    /// The redis crate's own error, when a relay's session met it (relay.rs): given back as it
    /// is, so that a Sentinel group's or a cluster's failure reads as it always has.
    original: Option<redis::RedisError>,
}

impl WireFailure {
    pub(crate) fn new(kind: io::ErrorKind, message: impl Into<String>) -> WireFailure {
        WireFailure {
            kind,
            message: message.into(),
            original: None,
        }
    }

    /// The failure a relay's session met, kept whole.
    pub(crate) fn of_redis(err: redis::RedisError) -> WireFailure {
        let kind = if err.is_timeout() {
            io::ErrorKind::TimedOut
        } else if err.is_connection_dropped() {
            io::ErrorKind::ConnectionReset
        } else {
            io::ErrorKind::Other
        };
        WireFailure {
            kind,
            message: err.to_string(),
            original: Some(err),
        }
    }

    pub(crate) fn timed_out() -> WireFailure {
        WireFailure::new(io::ErrorKind::TimedOut, "timed out")
    }

    pub(crate) fn of(err: &io::Error) -> WireFailure {
        let message = match err.kind() {
            io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
            io::ErrorKind::UnexpectedEof => "the server closed the connection".to_string(),
            _ => err.to_string(),
        };
        WireFailure::new(err.kind(), message)
    }

    /// The connection was closed under us, as opposed to a server that is slow or refuses.
    pub(crate) fn dropped(&self) -> bool {
        matches!(
            self.kind,
            io::ErrorKind::BrokenPipe
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::UnexpectedEof
                | io::ErrorKind::NotConnected
        )
    }

    pub(crate) fn error(&self) -> redis::RedisError {
        if let Some(original) = &self.original {
            return original.clone();
        }
        io::Error::new(self.kind, self.message.clone()).into()
    }
}

/// Where the docs say which commands, keys and channels redlock needs.
const RECIPE: &str = "the ACL that docs/doctor.md lists";

/// A server's refusal in words that say what is wrong and what to do, for the refusals a user
/// can fix: a server out of memory, a command the ACL user may not run (inside a script too,
/// named from the script's line), a renamed command, RESP3 asked of a server that does not speak
/// it, and every misconfiguration of diagnosis.rs (a replica, a cluster node, a password…); any
/// other reply of the server's verbatim. `None` for an error the server did not send and
/// diagnosis.rs does not recognise (a timeout, a refused connection), shown as it is.
pub(crate) fn refusal(err: &redis::RedisError) -> Option<String> {
    let text = err.to_string();
    let has = |words: &str| text.contains(words);
    if err.kind() == redis::ErrorKind::RESP3NotSupported || (has("unknown command") && has("HELLO"))
    {
        return Some(
            "does not speak RESP3 (?protocol=3 needs Redis 6 or later): leave ?protocol=3 out of its URL"
                .into(),
        );
    }
    if err.code() == Some("OOM") || has("command not allowed when used memory") {
        return Some(
            "out of memory (maxmemory): it refuses every write; free memory or raise maxmemory (docs/doctor.md)"
                .into(),
        );
    }
    // Inside a script, Redis 7 names no command (Valkey does): the script's line does.
    let scripted = if has("@user_script:") {
        " (in a script)"
    } else {
        ""
    };
    let named = || quoted_command(&text).or_else(|| script_command(&text));
    if has("Unknown Redis command called from") {
        return Some(format!(
            "does not know {} (renamed or disabled by rename-command){scripted}, which redlock needs: see {RECIPE}",
            named().unwrap_or_else(|| "a command".into())
        ));
    }
    if err.code() == Some("NOPERM") || has("no permissions to") || has("can't run this command") {
        let what = match named() {
            Some(command) => format!("run {command}"),
            None if has("channel") => "use its pub/sub channels (&PREFIX*)".into(),
            None if has("key") => "use its keys (~PREFIX*)".into(),
            None => "run a command it needs".into(),
        };
        return Some(format!(
            "the ACL user may not {what}{scripted}: give it {RECIPE}"
        ));
    }
    // A server set up otherwise than its URL says (server/diagnosis.rs), in words that say
    // what to change; any other reply of the server's, in its own words.
    if let Some(seen) = super::diagnosis::recognised(err) {
        return Some(seen.words());
    }
    err.code().map(|_| super::diagnosis::verbatim(err))
}

/// Why the redis crate cannot use a URL, in one line: a wildcard address says which address to
/// write instead; anything else is the crate's first line, lowercased.
pub(crate) fn unusable_url(err: &redis::RedisError) -> String {
    if err.to_string().contains("wildcard address") {
        return "0.0.0.0 and :: are where a server listens, not an address to connect to; expected the server's own address, such as 127.0.0.1".into();
    }
    crate::human::lowercase_first(crate::human::first_line(&err.to_string()))
}

/// The command named in quotes in `has no permissions to run the 'zpopmin' command`, in
/// upper case.
fn quoted_command(text: &str) -> Option<String> {
    let (_, rest) = text.split_once("to run the '")?;
    let (command, _) = rest.split_once('\'')?;
    Some(command.replace('|', " ").to_uppercase())
}

/// The commands on the line of one of our scripts that an error names: `script: <sha>, on
/// @user_script:36.` (Redis 7 and later) or `(call to f_<sha>): @user_script:36:` (Redis 6),
/// in upper case, `PUBLISH or SET` when the line calls two.
fn script_command(text: &str) -> Option<String> {
    let at = text.find("@user_script:")?;
    let line: usize = text[at + "@user_script:".len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()?;
    let hash = ["script: ", "f_"].iter().find_map(|before| {
        let start = text.find(before)? + before.len();
        let hash = text.get(start..start + 40)?;
        hash.bytes().all(|b| b.is_ascii_hexdigit()).then_some(hash)
    })?;
    let code = super::scripts::line(hash, line)?;
    let mut commands: Vec<String> = Vec::new();
    for call in ["redis.call('", "redis.pcall('"] {
        for piece in code.split(call).skip(1) {
            let name = piece.split('\'').next().unwrap_or_default().to_uppercase();
            if !name.is_empty() && !commands.contains(&name) {
                commands.push(name);
            }
        }
    }
    (!commands.is_empty()).then(|| commands.join(" or "))
}

/// What became of one request: its replies (all of them, the skipped ones left out), or the
/// connection's failure before they all came.
pub(crate) type WireAnswer = Result<Vec<Value>, WireFailure>;

/// The error a server's `-TEXT` reply becomes, for the tests of what redlock makes of it.
#[cfg(test)]
pub(crate) fn server_error(text: &str) -> redis::RedisError {
    let frame = format!("-{text}\r\n");
    match redis::parse_redis_value(frame.as_bytes()) {
        Ok(redis::Value::ServerError(err)) => err.into(),
        other => panic!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_a_user_can_fix_say_how() {
        let source = "local a = 1\nif redis.call('publish', KEYS[1], 'go') > 0 then redis.call('set', KEYS[2], 'x') end\nreturn redis.call('zpopmin', KEYS[1])\n";
        let script = redis::Script::new(source);
        super::super::scripts::remember(Box::leak(script.get_hash().into()), source);
        let hash = script.get_hash();
        let cases = [
            (
                format!("READONLY You can't write against a read only replica. script: {hash}, on @user_script:2."),
                "replica (read-only): list its master, or the group as redis+sentinel://",
            ),
            (
                "OOM command not allowed when used memory > 'maxmemory'.".to_string(),
                "out of memory (maxmemory)",
            ),
            (
                format!("ERR The user executing the script can't run this command or subcommand script: {hash}, on @user_script:3."),
                "may not run ZPOPMIN (in a script)",
            ),
            (
                format!("ERR Error running script (call to f_{hash}): @user_script:2: @user_script: 2: The user executing the script can't run this command or subcommand"),
                "may not run PUBLISH or SET (in a script)",
            ),
            (
                format!("ERR Unknown Redis command called from script script: {hash}, on @user_script:3."),
                "does not know ZPOPMIN (renamed or disabled by rename-command)",
            ),
            (
                "NOPERM User u has no permissions to run the 'pubsub|numsub' command".to_string(),
                "may not run PUBSUB NUMSUB: give it",
            ),
            (
                "NOPERM No permissions to access a channel".to_string(),
                "may not use its pub/sub channels",
            ),
            (
                format!("ERR ACL failure in script: User u has no permissions to run the 'zpopmin' command script: {hash}, on @user_script:1."),
                "may not run ZPOPMIN (in a script)",
            ),
            (
                "ERR unknown command 'HELLO', with args beginning with: '3'".to_string(),
                "leave ?protocol=3 out of its URL",
            ),
        ];
        for (reply, said) in cases {
            let words = refusal(&server_error(&reply)).unwrap_or_else(|| panic!("{reply}"));
            assert!(words.contains(said), "{reply}: {words}");
        }
        assert_eq!(
            refusal(&server_error("ERR something else")).as_deref(),
            Some("ERR something else")
        );
        let refused: redis::RedisError =
            std::io::Error::from(std::io::ErrorKind::ConnectionRefused).into();
        assert_eq!(refusal(&refused), None);
        let resp3: redis::RedisError = (redis::ErrorKind::RESP3NotSupported, "no HELLO").into();
        assert!(refusal(&resp3).unwrap().contains("RESP3"));
        let wildcard: redis::RedisError = (
            redis::ErrorKind::InvalidClientConfig,
            "Cannot connect to a wildcard address (0.0.0.0 or ::)",
        )
            .into();
        assert!(unusable_url(&wildcard).starts_with("0.0.0.0 and :: are where a server listens"));
    }
}
