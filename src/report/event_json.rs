//! A lifecycle event's fields in a `--log-format json` line: durations in `_ms`, the command's pid
//! as `child_pid`, and a token only as its first characters.

use super::event::Event;
use super::line::ms;
use serde_json::{json, Value};

impl Event<'_> {
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
}

/// The first 8 characters of a token: enough to correlate log lines, useless for releasing.
fn token_id(token: &str) -> String {
    token.chars().take(8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
