//! Everything redlock says on stderr: errors, warnings, lifecycle events (acquired, renewed,
//! renewal failed, lost, released, child exited) and, with `-v`, each round's per-server detail.
//!
//! One `Reporter` per run, made once from the command line (`-q`, `-v`, `--log-format`) and
//! passed by value (it is two small enums) to whatever reports. Every line is written whole with
//! one call, so lines from two threads never interleave. Text is for
//! people; `--log-format json` makes every line one JSON object for log collectors.
//!
//! Servers only ever appear as their redacted URL (`Server::display`), and tokens only as their
//! first 8 characters (`token_id`): a log line never carries a password or a usable token.

use crate::human;
use crate::lock::{NodeError, Round};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::time::{Duration, SystemTime};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    /// `-q`: errors only.
    Quiet,
    Normal,
    /// `-v`: also each round, server by server.
    Verbose,
}

pub(crate) use crate::cli::LogFormat as Format;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reporter {
    pub(crate) level: Level,
    pub(crate) format: Format,
}

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
        pid: u32,
        max_runtime: Duration,
    },
    /// `exec`'s command ended: `code` when it exited, `signal` when a signal killed it.
    ChildExited {
        name: &'a str,
        key: &'a str,
        pid: u32,
        code: Option<i32>,
        signal: Option<i32>,
        ran: Duration,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Severity {
    Info,
    /// An expected outcome people want to see (a busy lock): shown unless `-q`, and always in a
    /// JSON log, so that the log is complete.
    Notice,
    Warning,
    Error,
}

impl Severity {
    fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Notice => "notice",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl Event<'_> {
    fn severity(&self) -> Severity {
        match self {
            Event::RenewalFailed { .. } => Severity::Warning,
            Event::Lost { .. } | Event::TimedOut { .. } => Severity::Error,
            Event::Busy { .. } => Severity::Notice,
            _ => Severity::Info,
        }
    }

    fn kind(&self) -> &'static str {
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
    fn fields(&self) -> Value {
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
                "deleted": deleted, "servers": servers, "forced": forced,
            }),
            Event::ChildExited {
                name,
                key,
                pid,
                code,
                signal,
                ran,
            } => json!({
                "name": name, "key": key, "pid": pid, "code": code, "signal": signal,
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
                "kept": kept, "servers": servers, "remaining_ms": ms(remaining),
            }),
            Event::Busy {
                name,
                key,
                holder,
                waited,
                exit_code,
            } => json!({
                "name": name, "key": key, "holder": holder,
                "waited_ms": waited.map(ms), "exit_code": exit_code,
            }),
            Event::TimedOut {
                name,
                key,
                pid,
                max_runtime,
            } => json!({
                "name": name, "key": key, "pid": pid, "max_runtime_ms": ms(max_runtime),
            }),
        }
    }

    /// The event for people.
    fn text(&self) -> String {
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

impl Reporter {
    /// The reporter `-q`, `-v` and `--log-format` ask for.
    pub(crate) fn from_args(output: &crate::cli::OutputArgs) -> Reporter {
        let level = if output.quiet {
            Level::Quiet
        } else if output.verbose {
            Level::Verbose
        } else {
            Level::Normal
        };
        Reporter {
            level,
            format: output.log_format,
        }
    }

    fn shows(&self, severity: Severity) -> bool {
        match severity {
            Severity::Error => true,
            Severity::Warning => self.level >= Level::Normal,
            Severity::Notice => self.level >= Level::Normal || self.format == Format::Json,
            // Text stays silent on success unless asked; collectors asked by choosing json.
            Severity::Info => {
                self.level == Level::Verbose
                    || (self.level == Level::Normal && self.format == Format::Json)
            }
        }
    }

    /// Writes one lifecycle event, if this level shows it.
    pub(crate) fn emit(&self, event: &Event<'_>) {
        let severity = event.severity();
        if !self.shows(severity) {
            return;
        }
        match self.format {
            Format::Text => line(&format!("redlock: {}", event.text())),
            Format::Json => json_line(severity, event.kind(), event.fields()),
        }
    }

    /// A warning: something that does not stop us.
    pub(crate) fn warn(&self, message: &str) {
        if !self.shows(Severity::Warning) {
            return;
        }
        match self.format {
            Format::Text => line(&format!("redlock: warning: {message}")),
            Format::Json => json_line(Severity::Warning, "warning", json!({ "message": message })),
        }
    }

    /// The error that ends the run, with the exit status it ends with.
    pub(crate) fn error(&self, message: &str, exit_code: u8) {
        match self.format {
            Format::Text => line(&format!("redlock: {message}")),
            Format::Json => json_line(
                Severity::Error,
                "error",
                json!({ "message": message, "exit_code": exit_code }),
            ),
        }
    }

    /// One round, server by server (`-v` only).
    pub(crate) fn round(&self, round: &Round<'_>) {
        if self.level != Level::Verbose {
            return;
        }
        match self.format {
            Format::Text => line(&round_text(round)),
            Format::Json => json_line(Severity::Info, "round", round_json(round)),
        }
    }
}

fn round_text(round: &Round<'_>) -> String {
    let mut text = format!(
        "redlock: {} {}: {} of {} servers in {} (quorum {})",
        round.step,
        round.key,
        round.yes,
        round.replies.len(),
        human::duration(round.elapsed),
        round.quorum
    );
    if let Some(validity) = round.validity {
        text.push_str(&format!(", validity {} ms", validity.as_millis()));
    }
    let width = round
        .replies
        .iter()
        .map(|r| r.server.chars().count())
        .max()
        .unwrap_or(0);
    for reply in &round.replies {
        let outcome = match &reply.outcome {
            Ok(text) => text.clone(),
            Err(NodeError::Down(why)) => format!("down: {why}"),
            Err(err) => err.to_string(),
        };
        text.push_str(&format!(
            "\nredlock:   {:<width$}  {:>8}  {outcome}",
            reply.server,
            human::latency(reply.latency),
        ));
    }
    text
}

fn round_json(round: &Round<'_>) -> Value {
    let servers: Vec<Value> = round
        .replies
        .iter()
        .map(|reply| {
            let (outcome, error) = match &reply.outcome {
                Ok(text) => (Some(text.clone()), None),
                Err(err) => (None, Some(err.to_string())),
            };
            json!({
                "server": reply.server,
                "outcome": outcome,
                "error": error,
                "latency_ms": (reply.latency.as_secs_f64() * 1_000_000.0).round() / 1000.0,
            })
        })
        .collect();
    json!({
        "step": round.step,
        "key": round.key,
        "yes": round.yes,
        "quorum": round.quorum,
        "elapsed_ms": (round.elapsed.as_secs_f64() * 1_000_000.0).round() / 1000.0,
        "validity_ms": round.validity.map(ms),
        "servers": servers,
    })
}

/// `{"ts":…,"level":…,"event":…, …fields}`: the common head first, so lines read well in `tail`.
fn json_line(severity: Severity, event: &str, fields: Value) {
    let mut object = Map::new();
    object.insert(
        "ts".into(),
        humantime::format_rfc3339_millis(SystemTime::now())
            .to_string()
            .into(),
    );
    object.insert("level".into(), severity.as_str().into());
    object.insert("event".into(), event.into());
    object.insert("pid".into(), std::process::id().into());
    if let Value::Object(fields) = fields {
        object.extend(fields);
    }
    line(&Value::Object(object).to_string());
}

fn line(text: &str) {
    // One write per line; a closed stderr is nothing we can report anywhere.
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// The first 8 characters of a token: enough to correlate log lines, useless for releasing.
fn token_id(token: &str) -> String {
    token.chars().take(8).collect()
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reporter(level: Level, format: Format) -> Reporter {
        Reporter { level, format }
    }

    #[test]
    fn levels_filter_by_severity() {
        let quiet = reporter(Level::Quiet, Format::Json);
        assert!(quiet.shows(Severity::Error));
        assert!(!quiet.shows(Severity::Warning));
        assert!(!quiet.shows(Severity::Info));
        let text = reporter(Level::Normal, Format::Text);
        assert!(text.shows(Severity::Warning));
        assert!(!text.shows(Severity::Info));
        assert!(reporter(Level::Normal, Format::Json).shows(Severity::Info));
        assert!(reporter(Level::Verbose, Format::Text).shows(Severity::Info));
        // A busy lock: one line unless -q, and always in a JSON log.
        assert!(text.shows(Severity::Notice));
        assert!(!reporter(Level::Quiet, Format::Text).shows(Severity::Notice));
        assert!(quiet.shows(Severity::Notice));
    }

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
