//! A lock's lifecycle events, as `acquire`, `extend`, `release` and `exec` live it: acquired,
//! renewed, renewal failed, lost, released, kept, busy.

use super::common::{millis, Event};
use crate::human;
use crate::report::line::Severity;
use crate::schema::documented;

documented! {
    /// The lock is ours.
    pub(crate) struct Acquired<'a> {
        /// the lock name
        pub(crate) name: &'a str,
        /// the key the grant holds
        pub(crate) key: &'a str,
        /// the token's first 8 characters
        pub(crate) token_id: &'a str,
        /// the TTL it was set with
        pub(crate) ttl_ms: u64,
        /// how long it is certainly held
        pub(crate) validity_ms: u64,
        /// servers that granted it
        pub(crate) votes: usize,
        /// servers configured
        pub(crate) servers: usize,
        /// from the first attempt to the grant
        pub(crate) waited_ms: u64,
        /// only with `--fence`: the fencing number
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) fence: Option<u64>,
        /// only with `--limit`: the slot held
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) slot: Option<usize>,
    }
}

impl Event for Acquired<'_> {
    const NAME: &'static str = "acquired";
    const SEVERITY: Severity = Severity::Info;
    fn text(&self) -> String {
        format!(
            "acquired lock '{}'{} on {} of {} servers after {}; valid for {}{}",
            self.name,
            self.slot
                .map_or_else(String::new, |slot| format!(" (slot {slot})")),
            self.votes,
            self.servers,
            human::duration(millis(self.waited_ms)),
            human::duration(millis(self.validity_ms)),
            self.fence
                .map_or_else(String::new, |fence| format!("; fence {fence}")),
        )
    }
}

documented! {
    /// An extension (exec's renewal, or `extend`) reached a quorum.
    pub(crate) struct Renewed<'a> {
        /// the lock name
        pub(crate) name: &'a str,
        /// the key extended
        pub(crate) key: &'a str,
        /// the token's first 8 characters
        pub(crate) token_id: &'a str,
        /// the new TTL
        pub(crate) ttl_ms: u64,
        /// how long it is certainly held now
        pub(crate) validity_ms: u64,
        /// servers that extended it
        pub(crate) votes: usize,
        /// servers configured
        pub(crate) servers: usize,
    }
}

impl Event for Renewed<'_> {
    const NAME: &'static str = "renewed";
    const SEVERITY: Severity = Severity::Info;
    fn text(&self) -> String {
        format!(
            "renewed lock '{}' on {} of {} servers; valid for {}",
            self.name,
            self.votes,
            self.servers,
            human::duration(millis(self.validity_ms))
        )
    }
}

documented! {
    /// One renewal did not reach a quorum; the lock is still ours for `remaining_ms`, and will
    /// be retried.
    pub(crate) struct RenewalFailed<'a> {
        /// the lock name
        pub(crate) name: &'a str,
        /// the key
        pub(crate) key: &'a str,
        /// the token's first 8 characters
        pub(crate) token_id: &'a str,
        /// why
        pub(crate) reason: &'a str,
        /// how long the lock is still certainly held
        pub(crate) remaining_ms: u64,
    }
}

impl Event for RenewalFailed<'_> {
    const NAME: &'static str = "renewal_failed";
    const SEVERITY: Severity = Severity::Warning;
    fn text(&self) -> String {
        format!(
            "warning: renewing lock '{}' failed ({}); still valid for {}",
            self.name,
            self.reason,
            human::duration(millis(self.remaining_ms))
        )
    }
}

documented! {
    /// The lock can no longer be ours (validity ran out, or the token no longer holds it).
    pub(crate) struct Lost<'a> {
        /// the lock name
        pub(crate) name: &'a str,
        /// the key
        pub(crate) key: &'a str,
        /// the token's first 8 characters
        pub(crate) token_id: &'a str,
        /// why it can no longer be ours
        pub(crate) reason: &'a str,
    }
}

impl Event for Lost<'_> {
    const NAME: &'static str = "lost";
    const SEVERITY: Severity = Severity::Error;
    fn text(&self) -> String {
        format!("lost lock '{}': {}", self.name, self.reason)
    }
}

documented! {
    /// The lock was given back (or, `forced`, deleted whatever its token).
    pub(crate) struct Released<'a> {
        /// the lock name
        pub(crate) name: &'a str,
        /// the key released
        pub(crate) key: &'a str,
        /// the token's first 8 characters (null for `--force`)
        pub(crate) token_id: Option<&'a str>,
        /// servers that said it was deleted (or handed to a waiter): a release ends at its quorum, so a slower server's delete is not counted
        pub(crate) servers_deleted: usize,
        /// servers configured
        pub(crate) servers: usize,
        /// `release --force`
        pub(crate) forced: bool,
    }
}

impl Event for Released<'_> {
    const NAME: &'static str = "released";
    const SEVERITY: Severity = Severity::Info;
    fn text(&self) -> String {
        format!(
            "{} lock '{}' on {} of {} servers",
            if self.forced {
                "force-released"
            } else {
                "released"
            },
            self.name,
            self.servers_deleted,
            self.servers
        )
    }
}

documented! {
    /// The lock was kept until its `--hold-at-least` is over instead of being released.
    pub(crate) struct Kept<'a> {
        /// the lock name
        pub(crate) name: &'a str,
        /// the key kept
        pub(crate) key: &'a str,
        /// the token's first 8 characters
        pub(crate) token_id: &'a str,
        /// servers that said it is kept: the give-back ends at its quorum, so a slower server's keep is not counted
        pub(crate) servers_kept: usize,
        /// servers configured
        pub(crate) servers: usize,
        /// how much longer it is kept
        pub(crate) remaining_ms: u64,
    }
}

impl Event for Kept<'_> {
    const NAME: &'static str = "kept";
    const SEVERITY: Severity = Severity::Info;
    fn text(&self) -> String {
        format!(
            "kept lock '{}' on {} of {} servers for {} more (--hold-at-least)",
            self.name,
            self.servers_kept,
            self.servers,
            human::duration(millis(self.remaining_ms))
        )
    }
}

documented! {
    /// The lock is held by someone else: an expected outcome, not an error.
    pub(crate) struct Busy<'a> {
        /// the lock name
        pub(crate) name: &'a str,
        /// the key (a semaphore's stem)
        pub(crate) key: &'a str,
        /// who holds it, in words
        pub(crate) held_by: Option<&'a str>,
        /// the `--wait` that ran out
        pub(crate) waited_ms: Option<u64>,
        /// the exit status (75, or `-E N`)
        pub(crate) exit_code: u8,
    }
}

impl Event for Busy<'_> {
    const NAME: &'static str = "busy";
    const SEVERITY: Severity = Severity::Notice;
    fn text(&self) -> String {
        format!(
            "lock '{}' is busy{}: held by {}",
            self.name,
            self.waited_ms.map_or(String::new(), |wait| format!(
                " after waiting {}",
                humantime::format_duration(millis(wait))
            )),
            self.held_by.unwrap_or("someone else")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::token_id;
    use super::*;
    use serde_json::Value;

    fn fields(event: &impl Event) -> Value {
        serde_json::to_value(event).unwrap()
    }

    fn acquired(token: &str, fence: Option<u64>, slot: Option<usize>) -> Acquired<'_> {
        Acquired {
            name: "job",
            key: "redlock:job",
            token_id: token_id(token),
            ttl_ms: 30_000,
            validity_ms: 29_600,
            votes: 3,
            servers: 3,
            waited_ms: 4,
            fence,
            slot,
        }
    }

    #[test]
    fn events_carry_a_token_id_never_the_token() {
        let token = "0123456789abcdef0123456789abcdef:host:1:2";
        let event = acquired(token, None, None);
        let json = fields(&event);
        assert_eq!(json["token_id"], "01234567");
        assert_eq!(json["validity_ms"], 29_600);
        assert!(!json.to_string().contains(token));
        assert!(event.text().contains("3 of 3 servers"));
        assert!(json.get("fence").is_none() && json.get("slot").is_none());
        let fenced = acquired(token, Some(12), Some(2));
        assert_eq!(fields(&fenced)["fence"], 12);
        assert_eq!(fields(&fenced)["slot"], 2);
        assert!(fenced.text().ends_with("; fence 12"), "{}", fenced.text());
        assert_eq!(token_id("short"), "short");
    }

    #[test]
    fn a_busy_lock_in_words_says_how_long_it_waited() {
        let busy = Busy {
            name: "job",
            key: "redlock:job",
            held_by: None,
            waited_ms: Some(1500),
            exit_code: 75,
        };
        assert_eq!(
            busy.text(),
            "lock 'job' is busy after waiting 1s 500ms: held by someone else"
        );
    }
}
