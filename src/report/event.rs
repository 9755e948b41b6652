//! A lock's lifecycle events (acquired, renewed, renewal failed, lost, released, kept, busy, timed
//! out, child exited): each one's severity, its text for people and its fields for a JSON log.

use super::line::{ms, Severity};
use crate::human;
use serde_json::{json, Value};
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

    /// The event's fields, as JSON.
    pub(crate) fn fields(&self) -> Value {
        match *self {
            Event::Acquired {
                name,
                key,
                token,
                ttl,
                validity,
                votes,
                servers,
                waited,
                fence,
                slot,
            } => {
                let mut fields = json!({
                    "name": name, "key": key, "token_id": token_id(token),
                    "ttl_ms": ms(ttl), "validity_ms": ms(validity),
                    "votes": votes, "servers": servers, "waited_ms": ms(waited),
                });
                // Only when asked for: without --fence or --limit the event is as it was.
                if let Some(fence) = fence {
                    fields["fence"] = fence.into();
                }
                if let Some(slot) = slot {
                    fields["slot"] = slot.into();
                }
                fields
            }
            Event::Renewed {
                name,
                key,
                token,
                ttl,
                validity,
                votes,
                servers,
            } => json!({
                "name": name, "key": key, "token_id": token_id(token),
                "ttl_ms": ms(ttl), "validity_ms": ms(validity),
                "votes": votes, "servers": servers,
            }),
            Event::RenewalFailed {
                name,
                key,
                token,
                reason,
                remaining,
            } => json!({
                "name": name, "key": key, "token_id": token_id(token),
                "reason": reason, "remaining_ms": ms(remaining),
            }),
            Event::Lost {
                name,
                key,
                token,
                reason,
            } => json!({
                "name": name, "key": key, "token_id": token_id(token), "reason": reason,
            }),
            Event::Released {
                name,
                key,
                token,
                deleted,
                servers,
                forced,
            } => json!({
                "name": name, "key": key, "token_id": token.map(token_id),
                "servers_deleted": deleted, "servers": servers, "forced": forced,
            }),
            Event::ChildExited {
                name,
                key,
                pid,
                code,
                signal,
                ran,
            } => json!({
                "name": name, "key": key, "child_pid": pid, "code": code, "signal": signal,
                "ran_ms": ms(ran),
            }),
            Event::Kept {
                name,
                key,
                token,
                kept,
                servers,
                remaining,
            } => json!({
                "name": name, "key": key, "token_id": token_id(token),
                "servers_kept": kept, "servers": servers, "remaining_ms": ms(remaining),
            }),
            Event::Busy {
                name,
                key,
                holder,
                waited,
                exit_code,
            } => json!({
                "name": name, "key": key, "held_by": holder,
                "waited_ms": waited.map(ms), "exit_code": exit_code,
            }),
            Event::TimedOut {
                name,
                key,
                pid,
                max_runtime,
            } => json!({
                "name": name, "key": key, "child_pid": pid, "max_runtime_ms": ms(max_runtime),
            }),
        }
    }

    /// The event for people.
    pub(crate) fn text(&self) -> String {
        match *self {
            Event::Acquired {
                name,
                validity,
                votes,
                servers,
                waited,
                fence,
                slot,
                ..
            } => format!(
                "acquired lock '{name}'{} on {votes} of {servers} servers after {}; valid for {}{}",
                slot.map_or_else(String::new, |slot| format!(" (slot {slot})")),
                human::duration(waited),
                human::duration(validity),
                fence.map_or_else(String::new, |fence| format!("; fence {fence}")),
            ),
            Event::Renewed {
                name,
                validity,
                votes,
                servers,
                ..
            } => format!(
                "renewed lock '{name}' on {votes} of {servers} servers; valid for {}",
                human::duration(validity)
            ),
            Event::RenewalFailed {
                name,
                reason,
                remaining,
                ..
            } => format!(
                "warning: renewing lock '{name}' failed ({reason}); still valid for {}",
                human::duration(remaining)
            ),
            Event::Lost { name, reason, .. } => format!("lost lock '{name}': {reason}"),
            Event::Released {
                name,
                deleted,
                servers,
                forced,
                ..
            } => format!(
                "{} lock '{name}' on {deleted} of {servers} servers",
                if forced { "force-released" } else { "released" }
            ),
            Event::ChildExited {
                pid,
                code,
                signal,
                ran,
                ..
            } => match (code, signal) {
                (_, Some(signal)) => {
                    format!(
                        "command (pid {pid}) killed by signal {signal} after {}",
                        human::duration(ran)
                    )
                }
                (code, None) => format!(
                    "command (pid {pid}) exited with status {} after {}",
                    code.unwrap_or(-1),
                    human::duration(ran)
                ),
            },
            Event::Kept {
                name,
                kept,
                servers,
                remaining,
                ..
            } => format!(
                "kept lock '{name}' on {kept} of {servers} servers for {} more (--hold-at-least)",
                human::duration(remaining)
            ),
            Event::Busy {
                name,
                holder,
                waited,
                ..
            } => format!(
                "lock '{name}' is busy{}: held by {}",
                waited.map_or(String::new(), |wait| format!(
                    " after waiting {}",
                    humantime::format_duration(wait)
                )),
                holder.unwrap_or("someone else")
            ),
            Event::TimedOut {
                pid, max_runtime, ..
            } => format!(
                "command (pid {pid}) still running after --max-runtime {}; stopping it",
                humantime::format_duration(max_runtime)
            ),
        }
    }
}

/// The first 8 characters of a token: enough to correlate log lines, useless for releasing.
fn token_id(token: &str) -> String {
    token.chars().take(8).collect()
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

    /// `pid` is redlock's own in every JSON line: the command's is `child_pid`.
    #[test]
    fn the_commands_pid_is_child_pid() {
        let (name, key, d) = ("job", "redlock:job", Duration::from_secs(1));
        let events = [
            Event::TimedOut {
                name,
                key,
                pid: 42,
                max_runtime: d,
            },
            Event::ChildExited {
                name,
                key,
                pid: 42,
                code: Some(0),
                signal: None,
                ran: d,
            },
        ];
        for event in events {
            let fields = event.fields();
            assert_eq!(fields["child_pid"], 42, "{}", event.kind());
            assert!(fields.get("pid").is_none(), "{}", event.kind());
        }
    }
}
