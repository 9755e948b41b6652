//! A lock's lifecycle events (acquired, renewed, renewal failed, lost, released, kept, busy, timed
//! out, child exited): what each one carries, its severity and its name in a JSON log. Its text
//! for people is in `event_text`, its fields for a JSON log in `event_json`.

use super::line::Severity;
use std::time::Duration;

/// A lock's lifecycle, as `acquire`, `extend`, `release` and `exec` live it.
#[derive(Debug, Clone)]
pub(crate) enum Event<'a> {
    /// The lock is ours. `waited` is from the first attempt to success.
    Acquired {
        name: &'a str,
        key: &'a str,
        token: &'a str,
        ttl: Duration,
        validity: Duration,
        votes: usize,
        servers: usize,
        waited: Duration,
        /// `--fence`'s number and `--limit`'s slot, when asked for.
        fence: Option<u64>,
        slot: Option<usize>,
    },
    /// An extension (exec's renewal, or `extend`) reached a quorum.
    Renewed {
        name: &'a str,
        key: &'a str,
        token: &'a str,
        ttl: Duration,
        validity: Duration,
        votes: usize,
        servers: usize,
    },
    /// One renewal did not reach a quorum; the lock is still ours for `remaining`, and will be
    /// retried.
    RenewalFailed {
        name: &'a str,
        key: &'a str,
        token: &'a str,
        reason: &'a str,
        remaining: Duration,
    },
    /// The lock can no longer be ours (validity ran out, or the token no longer holds it).
    Lost {
        name: &'a str,
        key: &'a str,
        token: &'a str,
        reason: &'a str,
    },
    /// The lock was given back (or, `forced`, deleted whatever its token).
    Released {
        name: &'a str,
        key: &'a str,
        token: Option<&'a str>,
        deleted: usize,
        servers: usize,
        forced: bool,
    },
    /// The lock was kept until its `--hold-at-least` is over, `remaining` from now, instead of
    /// being released.
    Kept {
        name: &'a str,
        key: &'a str,
        token: &'a str,
        kept: usize,
        servers: usize,
        remaining: Duration,
    },
    /// The lock is held by someone else: an expected outcome, not an error. `waited` is the
    /// `--wait` that ran out, if one was given.
    Busy {
        name: &'a str,
        key: &'a str,
        holder: Option<&'a str>,
        waited: Option<Duration>,
        exit_code: u8,
    },
    /// `exec`'s command ran longer than `--max-runtime`; it is being stopped.
    TimedOut {
        name: &'a str,
        key: &'a str,
        /// The command's pid: `child_pid` in JSON, where `pid` is always redlock's own.
        pid: u32,
        max_runtime: Duration,
    },
    /// `exec`'s command ended: `code` when it exited, `signal` when a signal killed it.
    ChildExited {
        name: &'a str,
        key: &'a str,
        /// The command's pid: `child_pid` in JSON, where `pid` is always redlock's own.
        pid: u32,
        code: Option<i32>,
        signal: Option<i32>,
        ran: Duration,
    },
}

impl Event<'_> {
    pub(crate) fn severity(&self) -> Severity {
        match self {
            Event::RenewalFailed { .. } => Severity::Warning,
            Event::Lost { .. } | Event::TimedOut { .. } => Severity::Error,
            Event::Busy { .. } => Severity::Notice,
            _ => Severity::Info,
        }
    }

    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Event::Acquired { .. } => "acquired",
            Event::Renewed { .. } => "renewed",
            Event::RenewalFailed { .. } => "renewal_failed",
            Event::Lost { .. } => "lost",
            Event::Released { .. } => "released",
            Event::ChildExited { .. } => "child_exited",
            Event::Kept { .. } => "kept",
            Event::Busy { .. } => "busy",
            Event::TimedOut { .. } => "timed_out",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acquired(token: &str, fence: Option<u64>, slot: Option<usize>) -> Event<'_> {
        Event::Acquired {
            name: "job",
            key: "redlock:job",
            token,
            ttl: Duration::from_secs(30),
            validity: Duration::from_millis(29_600),
            votes: 3,
            servers: 3,
            waited: Duration::from_millis(4),
            fence,
            slot,
        }
    }

    #[test]
    fn events_carry_a_token_id_never_the_token() {
        let token = "0123456789abcdef0123456789abcdef:host:1:2";
        let event = acquired(token, None, None);
        let fields = event.fields();
        assert_eq!(fields["token_id"], "01234567");
        assert_eq!(fields["validity_ms"], 29_600);
        assert!(!fields.to_string().contains(token));
        assert_eq!(event.kind(), "acquired");
        assert!(event.text().contains("3 of 3 servers"));
        assert!(fields.get("fence").is_none() && fields.get("slot").is_none());
        let fenced = acquired(token, Some(12), Some(2));
        assert_eq!(fenced.fields()["fence"], 12);
        assert_eq!(fenced.fields()["slot"], 2);
        assert!(fenced.text().ends_with("; fence 12"), "{}", fenced.text());
        let exited = Event::ChildExited {
            name: "job",
            key: "redlock:job",
            pid: 42,
            code: None,
            signal: Some(15),
            ran: Duration::from_secs(2),
        };
        assert!(exited.text().contains("signal 15"), "{}", exited.text());
        assert_eq!(exited.fields()["signal"], 15);
    }
}
