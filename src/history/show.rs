//! `redlock history NAME` for people and programs: the runs as a table, newest first, or the
//! `history` document (docs/json.md), with each server's copy.

use super::merge::Run;
use crate::human;
use crate::lock::{NodeError, Stored};
use crate::status::align;
use crate::token;
use serde_json::{json, Map, Value};
use std::time::{Duration, UNIX_EPOCH};

/// What one `history` shows.
pub(super) struct Shown<'a> {
    pub(super) name: &'a str,
    pub(super) key: &'a str,
    pub(super) runs: &'a [Run],
    /// Each server's name and copy (or why it could not say).
    pub(super) copies: &'a [(String, Result<Stored, NodeError>)],
    pub(super) quorum: usize,
    /// `--since`, for the words of an empty history.
    pub(super) since: Option<Duration>,
}

impl Shown<'_> {
    fn answered(&self) -> usize {
        self.copies.iter().filter(|(_, copy)| copy.is_ok()).count()
    }

    /// The runs as a table, under a line that says how many and from how many servers.
    pub(super) fn table(&self) -> String {
        let servers = self.copies.len();
        let from = format!("from {} of {servers} servers", self.answered());
        let mut out = match (self.runs.len(), self.since) {
            (0, None) => format!("history of {}: no runs recorded, {from}", self.name),
            (0, Some(since)) => format!(
                "history of {}: no runs ended in the last {}, {from}",
                self.name,
                humantime::format_duration(since)
            ),
            (1, _) => format!("history of {}: 1 run, {from}", self.name),
            (runs, _) => format!(
                "history of {}: {runs} runs, newest first, {from}",
                self.name
            ),
        };
        let partial = self.runs.iter().filter(|run| self.partial(run)).count();
        if partial > 0 {
            out.push_str(&format!(
                "; {partial} partial (recorded on fewer than the {} servers of a quorum)",
                self.quorum
            ));
        }
        out.push('\n');
        if self.runs.is_empty() {
            return out;
        }
        // Slots and modes only for a name that had more than plain exclusive runs.
        let modes = self
            .runs
            .iter()
            .any(|run| run.entry.shared || run.entry.slot.is_some());
        let mut rows = vec![[
            "STARTED", "HOST", "PID", "HELD", "WAITED", "ENDED AS", "SERVERS", "HELD AS", "COMMAND",
        ]
        .map(String::from)];
        for run in self.runs {
            let holder = token::holder(&run.entry.token);
            let at = |ms: u64| {
                humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(ms))
                    .to_string()
            };
            let mut servers = format!("{}/{servers}", run.servers);
            if self.partial(run) {
                servers.push_str(" partial");
            }
            rows.push([
                run.started_unix_ms().map_or("-".into(), at),
                holder
                    .as_ref()
                    .map_or("-".into(), |h| human::printable(&h.host)),
                holder.as_ref().map_or("-".into(), |h| h.pid.to_string()),
                run.entry.held.map_or("-".into(), human::duration),
                run.entry.waited.map_or("-".into(), human::duration),
                run.entry.ended.to_string(),
                servers,
                match (run.entry.slot, run.entry.shared) {
                    (Some(slot), _) => format!("slot {slot}"),
                    (None, true) => "shared".into(),
                    (None, false) => "exclusive".into(),
                },
                holder
                    .and_then(|h| h.command)
                    .map_or("-".into(), |command| human::printable(&command)),
            ]);
        }
        if modes {
            out.push_str(&align(&rows));
        } else {
            let rows: Vec<[String; 8]> = rows
                .into_iter()
                .map(|[a, b, c, d, e, f, g, _, i]| [a, b, c, d, e, f, g, i])
                .collect();
            out.push_str(&align(&rows));
        }
        out
    }

    fn partial(&self, run: &Run) -> bool {
        run.servers < self.quorum
    }

    /// The `history` document, without its `version`.
    pub(super) fn json(&self) -> Value {
        let runs: Vec<Value> = self.runs.iter().map(|run| self.run_json(run)).collect();
        let per_server: Vec<Value> = self
            .copies
            .iter()
            .map(|(server, copy)| {
                let ok = copy.as_ref().ok();
                json!({
                    "server": server,
                    "reachable": copy.is_ok(),
                    "error": copy.as_ref().err().map(ToString::to_string),
                    "entries": ok.map(|stored| stored.entries.len()),
                    "expires_in_ms": ok
                        .and_then(|stored| stored.expires_in)
                        .map(|ttl| ttl.as_millis() as u64),
                })
            })
            .collect();
        json!({
            "kind": "history",
            "name": self.name,
            "key": self.key,
            "runs": runs,
            "quorum": self.quorum,
            "servers": self.copies.len(),
            "servers_answered": self.answered(),
            "per_server": per_server,
        })
    }

    fn run_json(&self, run: &Run) -> Value {
        let entry = &run.entry;
        let holder = token::holder(&entry.token);
        let ms = |d: Option<Duration>| d.map(|d| d.as_millis() as u64);
        let mut fields = Map::new();
        for (field, value) in [
            ("token", json!(entry.token)),
            ("host", json!(holder.as_ref().map(|h| &h.host))),
            ("pid", json!(holder.as_ref().map(|h| h.pid))),
            (
                "command",
                json!(holder.as_ref().and_then(|h| h.command.as_ref())),
            ),
            ("acquired_unix_ms", json!(run.started_unix_ms())),
            ("ended_unix_ms", json!(entry.ended_unix_ms)),
            ("held_ms", json!(ms(entry.held))),
            ("waited_ms", json!(ms(entry.waited))),
            ("ended_as", json!(entry.ended.word())),
            ("exit_status", json!(entry.ended.exit_status())),
            ("signal", json!(entry.ended.signal())),
            ("fence", json!(entry.fence)),
            ("slot", json!(entry.slot)),
            (
                "mode",
                json!(if entry.shared { "shared" } else { "exclusive" }),
            ),
            ("servers_holding", json!(run.servers)),
            ("partial", json!(self.partial(run))),
        ] {
            fields.insert(field.into(), value);
        }
        Value::Object(fields)
    }
}
