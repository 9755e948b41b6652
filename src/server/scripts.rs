//! The Lua scripts this process runs, by SHA1, so that a wire (wire.rs) sends a script's source
//! the first time it runs it on a connection (`EVAL`) and only its hash after that (`EVALSHA`).
//!
//! `EVALSHA` alone costs a server that never ran the script (a new or restarted one) a second
//! round trip after `NOSCRIPT`. A round that is decided without that server never drives the
//! second step of its request, so the SET would not be made there at all until the next round.
//! `EVAL` also caches the script, so the hash is enough on that connection afterwards (a
//! restarted server breaks the connection, and a new one starts from the source again).

use std::sync::Mutex;

/// (hash, source) of every script this process has run: both made when the binary was built
/// (lock/script.rs's `lua!`), so remembering one copies nothing.
static KNOWN: Mutex<Vec<(&'static str, &'static str)>> = Mutex::new(Vec::new());

/// Remembers `source` under its SHA1 `hash` (made with the script, lock/script.rs's `lua!`).
pub(crate) fn remember(hash: &'static str, source: &'static str) {
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if !known.iter().any(|(known, _)| *known == hash) {
        known.push((hash, source));
    }
}

/// Line `line` (from 1) of the script whose SHA1 is `hash`, as the server numbers it in an
/// error (failure.rs names the command a server refused inside a script from it).
pub(crate) fn line(hash: &str, line: usize) -> Option<String> {
    let known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    let (_, source) = known.iter().find(|(known, _)| *known == hash)?;
    source.lines().nth(line.checked_sub(1)?).map(str::to_string)
}

/// `packed` with its `EVALSHA` turned into an `EVAL` of the source, when it is one of a script
/// not yet in `sent` (which it then joins); `None` to send it as it is.
pub(crate) fn first_use(packed: &[u8], sent: &mut Vec<&'static str>) -> Option<Vec<u8>> {
    // A command as the redis crate packs it: *<args>\r\n$7\r\nEVALSHA\r\n$40\r\n<hash>\r\n…
    let header_end = packed.windows(2).position(|w| w == b"\r\n")? + 2;
    let rest = packed.get(header_end..)?;
    let rest = rest.strip_prefix(b"$7\r\nEVALSHA\r\n$40\r\n".as_slice())?;
    let hash = std::str::from_utf8(rest.get(..40)?).ok()?;
    let after = rest.get(40..)?.strip_prefix(b"\r\n".as_slice())?;
    if sent.contains(&hash) {
        return None;
    }
    let known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    let &(hash, source) = known.iter().find(|(known, _)| *known == hash)?;
    let mut eval = packed[..header_end].to_vec();
    eval.extend_from_slice(format!("$4\r\nEVAL\r\n${}\r\n", source.len()).as_bytes());
    eval.extend_from_slice(source.as_bytes());
    eval.extend_from_slice(b"\r\n");
    eval.extend_from_slice(after);
    sent.push(hash);
    Some(eval)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_evalsha_of_a_script_on_a_connection_carries_its_source() {
        let source = "return ARGV[1]";
        let script = redis::Script::new(source);
        remember(Box::leak(script.get_hash().into()), source);
        let packed = redis::cmd("EVALSHA")
            .arg(script.get_hash())
            .arg(0)
            .arg("x")
            .get_packed_command();
        let mut sent = Vec::new();
        let eval = first_use(&packed, &mut sent).expect("rewritten the first time");
        let expected = redis::cmd("EVAL")
            .arg(source)
            .arg(0)
            .arg("x")
            .get_packed_command();
        assert_eq!(eval, expected);
        assert_eq!(
            first_use(&packed, &mut sent),
            None,
            "then the hash is enough"
        );
        let get = redis::cmd("GET").arg("k").get_packed_command();
        assert_eq!(first_use(&get, &mut Vec::new()), None);
    }
}
