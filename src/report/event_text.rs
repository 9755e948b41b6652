//! A lifecycle event in words, for people (`--log-format text`).

use super::event::Event;
use crate::human;

impl Event<'_> {
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
