//! Lock tokens: a random (version 4) UUID, followed by readable facts about the holder.
//!
//! The whole string is the token other clients compare against, so the layout stays the plain
//! string key that redsync, node-redlock and redis-py's `Lock` use. The facts after the random
//! part only let `status` tell people who holds a lock; nothing relies on them for safety.
//!
//! Layout: `<32 hex digits>:<host>:<pid>:<acquired, unix ms>[:<command>]`, with no spaces, so
//! `--token $TOKEN` survives an unquoted shell expansion. The hex digits are a version 4 UUID
//! without its dashes.

use std::time::{SystemTime, UNIX_EPOCH};

/// Hex digits of the random part: a UUID in its simple (dashless) form.
const RANDOM_DIGITS: usize = uuid::fmt::Simple::LENGTH;
const MAX_COMMAND_CHARS: usize = 40;

/// Who took a lock, as far as its token tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Holder {
    pub(crate) host: String,
    pub(crate) pid: u32,
    pub(crate) acquired_unix_ms: u64,
    pub(crate) command: Option<String>,
}

/// A fresh token for one acquisition. `command` is what `exec` runs, for `status` to show.
pub(crate) fn new_token(command: Option<&str>) -> anyhow::Result<String> {
    // `Uuid::new_v4` would panic when the OS has no randomness to give; fill the bytes
    // ourselves so that this stays an error message.
    let mut random = [0u8; 16];
    getrandom::fill(&mut random)
        .map_err(|e| anyhow::anyhow!("cannot read random bytes from the operating system: {e}"))?;
    let mut token = uuid::Builder::from_random_bytes(random)
        .into_uuid()
        .simple()
        .to_string();
    let acquired = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    token.push_str(&format!(
        ":{}:{}:{acquired}",
        sanitize(&hostname(), 64),
        std::process::id()
    ));
    if let Some(command) = command {
        token.push(':');
        token.push_str(&sanitize(command, MAX_COMMAND_CHARS));
    }
    Ok(token)
}

/// The holder facts of a token made by redlock; `None` for other clients' tokens.
pub(crate) fn holder(token: &str) -> Option<Holder> {
    let mut parts = token.splitn(5, ':');
    let random = parts.next()?;
    if random.len() != RANDOM_DIGITS || !random.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(Holder {
        host: unescape(parts.next()?),
        pid: parts.next()?.parse().ok()?,
        acquired_unix_ms: parts.next()?.parse().ok()?,
        command: parts.next().map(unescape),
    })
}

pub(crate) fn hostname() -> String {
    nix::unistd::gethostname()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "unknown-host".to_string())
}

/// Keeps the token one shell word with no separators inside a field: anything but a few safe
/// characters is percent-encoded (and decoded again by `holder`).
fn sanitize(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    for c in text.chars().take(max_chars) {
        if c.is_ascii_alphanumeric() || "._-+/=@,".contains(c) {
            out.push(c);
        } else {
            let mut utf8 = [0u8; 4];
            for byte in c.encode_utf8(&mut utf8).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    out
}

fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_unique_and_carry_holder_facts() {
        let a = new_token(Some("./backup.sh --full")).unwrap();
        let b = new_token(None).unwrap();
        assert_ne!(a[..32], b[..32]);
        let random = uuid::Uuid::parse_str(&a[..32]).unwrap();
        assert_eq!(random.get_version(), Some(uuid::Version::Random));
        let holder = holder(&a).unwrap();
        assert_eq!(holder.pid, std::process::id());
        assert_eq!(holder.command.as_deref(), Some("./backup.sh --full"));
        assert!(a.ends_with(":./backup.sh%20--full"), "{a}");
        assert!(holder.acquired_unix_ms > 1_600_000_000_000);
        assert!(!a.contains(' '));
        assert_eq!(super::holder(&b).unwrap().command, None);
    }

    #[test]
    fn command_text_survives_the_round_trip() {
        let token = new_token(Some("sh -c 'a | b' $HOME ü")).unwrap();
        assert!(!token.contains([' ', '\'', '$', '|']), "{token}");
        assert_eq!(
            holder(&token).unwrap().command.as_deref(),
            Some("sh -c 'a | b' $HOME ü")
        );
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(128))]

            #[test]
            fn any_token_has_a_holder_only_after_32_hex_digits(
                token in prop_oneof![
                    any::<String>(),
                    "[0-9a-f]{32}(:[^:]{0,8}){0,5}",
                    "[0-9a-f]{32}:[a-z%0-9]{0,6}:[0-9]{0,12}:[0-9]{0,21}(:\\PC{0,8})?",
                ]
            ) {
                if holder(&token).is_some() {
                    let random = token.split(':').next().unwrap_or("");
                    prop_assert_eq!(random.len(), RANDOM_DIGITS);
                    prop_assert!(random.bytes().all(|b| b.is_ascii_hexdigit()));
                }
            }

            #[test]
            fn a_command_survives_the_token_round_trip(command in any::<String>()) {
                let token = new_token(Some(&command)).unwrap();
                prop_assert!(!token.contains(char::is_whitespace), "{token:?}");
                let holder = holder(&token).unwrap();
                let kept: String = command.chars().take(MAX_COMMAND_CHARS).collect();
                prop_assert_eq!(holder.command, Some(kept));
                prop_assert_eq!(holder.pid, std::process::id());
            }
        }
    }

    #[test]
    fn foreign_tokens_have_no_holder() {
        assert_eq!(holder("f47ac10b-58cc-4372-a567-0e02b2c3d479"), None);
        assert_eq!(holder("other"), None);
    }
}
