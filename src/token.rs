//! Lock tokens: a random (version 4) UUID, followed by readable facts about the holder.
//!
//! The whole string is the token other clients compare against, so the layout stays the plain
//! string key that redsync, node-redlock and redis-py's `Lock` use. The facts after the random
//! part only let `status` tell people who holds a lock; nothing relies on them for safety.
//!
//! Layout: `<32 hex digits>:<host>:<pid>:<acquired, unix ms>[:<command>]`, with no spaces, so
//! `--token $TOKEN` survives an unquoted shell expansion. The hex digits are a version 4 UUID
//! without its dashes. A lock kept after its run (`--hold-at-least`) holds a fresh value of the
//! same shape with the run's end appended:
//! `<32 hex digits>:<host>:<pid>:<acquired>:<command or empty>:kept:<finished, unix ms>:<end>`,
//! where `<end>` is `exit-N`, `signal-N`, `timeout` or `release`. Free text is percent-encoded,
//! so `:` only ever separates fields.

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
    /// Set when the key is a lock kept after its run ended (`--hold-at-least`).
    pub(crate) kept: Option<KeptRun>,
}

/// A run that ended while its lock is kept until the hold is over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeptRun {
    pub(crate) finished_unix_ms: u64,
    pub(crate) end: RunEnd,
}

/// How the run behind a kept lock ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunEnd {
    /// `exec`'s command exited with this status.
    Exited(i32),
    /// `exec`'s command died of this signal.
    Signal(i32),
    /// `exec`'s command outlived `--max-runtime` and was stopped.
    TimedOut,
    /// A script gave the lock back with `release --hold-at-least`.
    Released,
}

impl RunEnd {
    /// How the value records it, and how `status --json` shows it.
    pub(crate) fn tag(self) -> String {
        match self {
            RunEnd::Exited(code) => format!("exit-{code}"),
            RunEnd::Signal(signal) => format!("signal-{signal}"),
            RunEnd::TimedOut => "timeout".into(),
            RunEnd::Released => "release".into(),
        }
    }

    fn parse(tag: &str) -> Option<RunEnd> {
        if let Some(code) = tag.strip_prefix("exit-") {
            return code.parse().ok().map(RunEnd::Exited);
        }
        if let Some(signal) = tag.strip_prefix("signal-") {
            return signal.parse().ok().map(RunEnd::Signal);
        }
        match tag {
            "timeout" => Some(RunEnd::TimedOut),
            "release" => Some(RunEnd::Released),
            _ => None,
        }
    }
}

impl std::fmt::Display for RunEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunEnd::Exited(code) => write!(f, "exit status {code}"),
            RunEnd::Signal(signal) => write!(f, "signal {signal}"),
            RunEnd::TimedOut => f.write_str("a stop by --max-runtime"),
            RunEnd::Released => f.write_str("`release --hold-at-least`"),
        }
    }
}

/// A fresh token for one acquisition. `command` is what `exec` runs, for `status` to show.
pub(crate) fn new_token(command: Option<&str>) -> anyhow::Result<String> {
    let mut token = random_uuid()?;
    token.push_str(&format!(
        ":{}:{}:{}",
        sanitize(&hostname(), 64),
        std::process::id(),
        unix_ms_now()
    ));
    if let Some(command) = command {
        token.push(':');
        token.push_str(&sanitize(command, MAX_COMMAND_CHARS));
    }
    Ok(token)
}

/// The value of a lock kept after its run: a fresh random part (no process holds it as its
/// token, so nobody renews it), the run's holder facts, and how and when the run ended.
pub(crate) fn kept_token(holder: &Holder, run: &KeptRun) -> anyhow::Result<String> {
    let mut token = random_uuid()?;
    let command = holder.command.as_deref().unwrap_or("");
    token.push_str(&format!(
        ":{}:{}:{}:{}:kept:{}:{}",
        sanitize(&holder.host, 64),
        holder.pid,
        holder.acquired_unix_ms,
        sanitize(command, MAX_COMMAND_CHARS),
        run.finished_unix_ms,
        run.end.tag()
    ));
    Ok(token)
}

/// The holder facts of a token made by redlock; `None` for other clients' tokens.
pub(crate) fn holder(token: &str) -> Option<Holder> {
    let mut parts = token.split(':');
    let random = parts.next()?;
    if random.len() != RANDOM_DIGITS || !random.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let host = unescape(parts.next()?);
    let pid = parts.next()?.parse().ok()?;
    let acquired_unix_ms = parts.next()?.parse().ok()?;
    let command = parts.next().map(unescape);
    let kept = match (parts.next(), parts.next(), parts.next()) {
        (Some("kept"), Some(finished), Some(end)) => Some(KeptRun {
            finished_unix_ms: finished.parse().ok()?,
            end: RunEnd::parse(end)?,
        }),
        _ => None,
    };
    Some(Holder {
        host,
        pid,
        acquired_unix_ms,
        // A kept value writes an empty field for a run without a command (a script's lock).
        command: command.filter(|command| kept.is_none() || !command.is_empty()),
        kept,
    })
}

/// The wall clock in unix milliseconds (zero before 1970).
pub(crate) fn unix_ms_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A version 4 UUID in its simple (dashless) form.
fn random_uuid() -> anyhow::Result<String> {
    // `Uuid::new_v4` would panic when the OS has no randomness to give; fill the bytes
    // ourselves so that this stays an error message.
    let mut random = [0u8; 16];
    getrandom::fill(&mut random)
        .map_err(|e| anyhow::anyhow!("cannot read random bytes from the operating system: {e}"))?;
    Ok(uuid::Builder::from_random_bytes(random)
        .into_uuid()
        .simple()
        .to_string())
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
    fn kept_values_keep_the_run_facts_and_say_how_it_ended() {
        let token = new_token(Some("sh -c 'echo a:b'")).unwrap();
        let original = holder(&token).unwrap();
        assert_eq!(original.kept, None);
        for end in [
            RunEnd::Exited(3),
            RunEnd::Signal(15),
            RunEnd::TimedOut,
            RunEnd::Released,
        ] {
            let run = KeptRun {
                finished_unix_ms: 1_700_000_000_123,
                end,
            };
            let kept = kept_token(&original, &run).unwrap();
            assert_ne!(kept[..32], token[..32]);
            let parsed = holder(&kept).unwrap();
            assert_eq!(parsed.kept, Some(run));
            assert_eq!(parsed.command, original.command);
            assert_eq!(parsed.acquired_unix_ms, original.acquired_unix_ms);
            assert!(!kept.contains(' '), "{kept}");
        }
        let scripted = holder(&new_token(None).unwrap()).unwrap();
        let run = KeptRun {
            finished_unix_ms: 1,
            end: RunEnd::Released,
        };
        let kept = holder(&kept_token(&scripted, &run).unwrap()).unwrap();
        assert_eq!(kept.command, None);
        assert_eq!(kept.kept, Some(run));
    }

    #[test]
    fn foreign_tokens_have_no_holder() {
        assert_eq!(holder("f47ac10b-58cc-4372-a567-0e02b2c3d479"), None);
        assert_eq!(holder("other"), None);
    }
}
