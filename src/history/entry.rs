//! One run as a history entry records it: the run's token (whose holder facts say the host,
//! pid, command and acquisition time, as `status` reads them), how and when it ended, how long
//! it held the lock and waited for it, and its fence, slot and mode. Written by the process that
//! gives the lock back, read by `redlock history`.
//!
//! On the servers an entry is one line of text (lock/history.rs keeps it as it is):
//! `1 <ended, unix ms> <held ms> <ended as> <waited ms> <fence> <slot> <mode> <token>`, fields
//! apart by one space, `-` for a field that does not apply, the token last and whole (it is
//! the only field that could hold a space: a token `release --token` was given). The leading
//! `1` is the layout's version: an entry of another layout is skipped, not misread.

use std::time::Duration;

/// The layout written here.
const LAYOUT: &str = "1";

/// How a run ended, in the words `ENDED AS` and JSON's `ended_as` use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// `exec`'s command exited 0.
    Ok,
    /// `exec`'s command exited with this status (not 0), or could not be run (126, 127).
    Failed(i32),
    /// `exec`'s command died of this signal, which redlock did not pass on.
    Signal(i32),
    /// The lock was lost, or may have been, while the command ran: the command was stopped, or
    /// ended while redlock was paused past the lock, or the give-back found the token gone.
    Lost,
    /// The command outlived `--max-runtime` and was stopped.
    MaxRuntime,
    /// redlock got this signal while the command ran and passed it on.
    Interrupted(i32),
    /// A script gave the lock back with `release` (no exit status).
    Released,
}

impl Ended {
    /// The word alone: `ok`, `failed`, `signal`, `lost`, `max-runtime`, `interrupted`, `released`.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Ended::Ok => "ok",
            Ended::Failed(_) => "failed",
            Ended::Signal(_) => "signal",
            Ended::Lost => "lost",
            Ended::MaxRuntime => "max-runtime",
            Ended::Interrupted(_) => "interrupted",
            Ended::Released => "released",
        }
    }

    /// The exit status of a failed run.
    pub(crate) fn exit_status(self) -> Option<i32> {
        match self {
            Ended::Ok => Some(0),
            Ended::Failed(status) => Some(status),
            _ => None,
        }
    }

    /// The signal a run died of, or was interrupted by.
    pub(crate) fn signal(self) -> Option<i32> {
        match self {
            Ended::Signal(signal) | Ended::Interrupted(signal) => Some(signal),
            _ => None,
        }
    }

    /// As the entry writes it: the word, and its number after a `:`.
    fn tag(self) -> String {
        match self {
            Ended::Failed(n) | Ended::Signal(n) | Ended::Interrupted(n) => {
                format!("{}:{n}", self.word())
            }
            other => other.word().to_string(),
        }
    }

    fn parse(tag: &str) -> Option<Ended> {
        let (word, number) = match tag.split_once(':') {
            Some((word, number)) => (word, Some(number.parse::<i32>().ok()?)),
            None => (tag, None),
        };
        Some(match (word, number) {
            ("ok", None) => Ended::Ok,
            ("failed", Some(status)) => Ended::Failed(status),
            ("signal", Some(signal)) => Ended::Signal(signal),
            ("lost", None) => Ended::Lost,
            ("max-runtime", None) => Ended::MaxRuntime,
            ("interrupted", Some(signal)) => Ended::Interrupted(signal),
            ("released", None) => Ended::Released,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Ended {
    /// `ok`, `failed 3`, `signal 9`, `interrupted 15`…: the table's `ENDED AS`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::Failed(n) | Ended::Signal(n) | Ended::Interrupted(n) => {
                write!(f, "{} {n}", self.word())
            }
            other => f.write_str(other.word()),
        }
    }
}

/// One run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) token: String,
    pub(crate) ended: Ended,
    pub(crate) ended_unix_ms: u64,
    /// From the grant to the give-back; `None` when nobody could tell (a token that carries no
    /// acquisition time).
    pub(crate) held: Option<Duration>,
    /// From the first attempt to the grant: `exec` knows it, a `release` does not.
    pub(crate) waited: Option<Duration>,
    pub(crate) fence: Option<u64>,
    pub(crate) slot: Option<usize>,
    pub(crate) shared: bool,
}

impl Entry {
    /// The entry as the servers keep it.
    pub(crate) fn encode(&self) -> String {
        let ms = |d: Option<Duration>| d.map_or("-".into(), |d| d.as_millis().to_string());
        let number = |n: Option<String>| n.unwrap_or_else(|| "-".into());
        format!(
            "{LAYOUT} {} {} {} {} {} {} {} {}",
            self.ended_unix_ms,
            ms(self.held),
            self.ended.tag(),
            ms(self.waited),
            number(self.fence.map(|f| f.to_string())),
            number(self.slot.map(|s| s.to_string())),
            if self.shared { "shared" } else { "exclusive" },
            self.token
        )
    }

    /// An entry written by `encode`; `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<Entry> {
        let mut fields = text.splitn(9, ' ');
        let mut next = || fields.next();
        if next()? != LAYOUT {
            return None;
        }
        fn optional<T: std::str::FromStr>(field: &str) -> Option<Option<T>> {
            match field {
                "-" => Some(None),
                number => number.parse().ok().map(Some),
            }
        }
        let ended_unix_ms = next()?.parse().ok()?;
        let held = optional::<u64>(next()?)?.map(Duration::from_millis);
        let ended = Ended::parse(next()?)?;
        let waited = optional::<u64>(next()?)?.map(Duration::from_millis);
        let fence = optional(next()?)?;
        let slot = optional(next()?)?;
        let shared = match next()? {
            "shared" => true,
            "exclusive" => false,
            _ => return None,
        };
        let token = next()?.to_string();
        Some(Entry {
            token,
            ended,
            ended_unix_ms,
            held,
            waited,
            fence,
            slot,
            shared,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(ended: Ended) -> Entry {
        Entry {
            token: "0123456789abcdef0123456789abcdef:host-a:42:1700000000000:./backup.sh".into(),
            ended,
            ended_unix_ms: 1_700_000_012_345,
            held: Some(Duration::from_millis(12_300)),
            waited: Some(Duration::from_millis(5)),
            fence: Some(7),
            slot: None,
            shared: false,
        }
    }

    #[test]
    fn every_ending_survives_the_round_trip() {
        for ended in [
            Ended::Ok,
            Ended::Failed(3),
            Ended::Signal(9),
            Ended::Lost,
            Ended::MaxRuntime,
            Ended::Interrupted(15),
            Ended::Released,
        ] {
            let entry = entry(ended);
            assert_eq!(Entry::parse(&entry.encode()), Some(entry));
        }
        let text = entry(Ended::Failed(3)).encode();
        assert_eq!(
            text,
            "1 1700000012345 12300 failed:3 5 7 - exclusive \
             0123456789abcdef0123456789abcdef:host-a:42:1700000000000:./backup.sh"
        );
        assert_eq!(Ended::Failed(3).to_string(), "failed 3");
        assert_eq!(Ended::Interrupted(2).to_string(), "interrupted 2");
        assert_eq!(Ended::Ok.to_string(), "ok");
    }

    #[test]
    fn unknown_fields_are_none_and_the_token_is_taken_whole() {
        let entry = Entry {
            token: "a token with spaces".into(),
            held: None,
            waited: None,
            fence: None,
            slot: Some(2),
            shared: true,
            ..entry(Ended::Released)
        };
        let text = entry.encode();
        assert!(text.contains(" - released - - 2 shared a token"), "{text}");
        assert_eq!(Entry::parse(&text), Some(entry));
    }

    #[test]
    fn anything_else_is_no_entry() {
        for text in [
            "",
            "2 1 1 ok - - - exclusive t",
            "1 x 1 ok - - - exclusive t",
            "1 1 1 done - - - exclusive t",
            "1 1 1 failed - - - exclusive t",
            "1 1 1 ok:3 - - - exclusive t",
            "1 1 1 ok - - - both t",
            "1 1 1 ok - - - exclusive",
        ] {
            assert_eq!(Entry::parse(text), None, "{text:?}");
        }
    }
}
