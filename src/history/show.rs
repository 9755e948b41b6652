//! `redlock history NAME` for people and programs: the runs as a table, newest first, or the
//! `history` document (`HistoryDocument`), with each server's copy.

use super::merge::Run;
use crate::human;
use crate::lock::{NodeError, Stored};
use crate::schema::{documented, ms};
use crate::status::align;
use crate::token;
use std::time::Duration;

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
            let mut servers = format!("{}/{servers}", run.servers);
            if self.partial(run) {
                servers.push_str(" partial");
            }
            rows.push([
                run.started_unix_ms().map_or("-".into(), human::utc),
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

    /// The `history` document.
    pub(super) fn document(&self) -> HistoryDocument<'_> {
        let per_server = self.copies.iter().map(|(server, copy)| {
            let ok = copy.as_ref().ok();
            HistoryCopy {
                server,
                reachable: copy.is_ok(),
                error: copy.as_ref().err().map(ToString::to_string),
                entries: ok.map(|stored| stored.entries.len()),
                expires_in_ms: ok.and_then(|stored| stored.expires_in).map(ms),
            }
        });
        HistoryDocument {
            kind: "history",
            name: self.name,
            key: self.key,
            runs: self.runs.iter().map(|run| self.run_entry(run)).collect(),
            quorum: self.quorum,
            servers: self.copies.len(),
            servers_answered: self.answered(),
            per_server: per_server.collect(),
        }
    }

    fn run_entry<'a>(&self, run: &'a Run) -> RunEntry<'a> {
        let entry = &run.entry;
        let holder = token::holder(&entry.token);
        RunEntry {
            token: &entry.token,
            host: holder.as_ref().map(|h| h.host.clone()),
            pid: holder.as_ref().map(|h| h.pid),
            command: holder.and_then(|h| h.command),
            acquired_unix_ms: run.started_unix_ms(),
            ended_unix_ms: entry.ended_unix_ms,
            held_ms: entry.held.map(ms),
            waited_ms: entry.waited.map(ms),
            ended_as: entry.ended.word(),
            exit_status: entry.ended.exit_status(),
            signal: entry.ended.signal(),
            fence: entry.fence,
            slot: entry.slot,
            mode: if entry.shared { "shared" } else { "exclusive" },
            servers_holding: run.servers,
            partial: self.partial(run),
        }
    }
}

documented! {
    /// `history NAME --json`: the runs of a lock, newest first, and each server's copy.
    pub(crate) struct HistoryDocument<'a> {
        /// `"history"`
        kind: &'static str,
        /// the lock name
        name: &'a str,
        /// the history's key, `<prefix><NAME>␟history`
        key: &'a str,
        /// each run once, newest first, after `--since` and `--last`
        runs: Vec<RunEntry<'a>>,
        /// servers a run must be recorded on not to be partial
        quorum: usize,
        /// servers configured
        servers: usize,
        /// servers that answered (fewer than `quorum`: exit 69)
        servers_answered: usize,
        /// each server's copy, in the order given
        per_server: Vec<HistoryCopy<'a>>,
    }
}

documented! {
    /// One run, as the servers recorded it.
    struct RunEntry<'a> {
        /// the run's token
        token: &'a str,
        /// the host that took the lock, as its token says (null: another client's token)
        host: Option<String>,
        /// the redlock process that took it
        pid: Option<u32>,
        /// what `exec` ran (shortened; null for `acquire` and `release`)
        command: Option<String>,
        /// when it was taken, on that host's clock
        acquired_unix_ms: Option<u64>,
        /// when the run ended, on the clock of the host that gave the lock back
        ended_unix_ms: u64,
        /// how long it held the lock, to the give-back (a lock kept by `--hold-at-least` is
        /// held longer)
        held_ms: Option<u64>,
        /// how long `exec` waited for it (null for `acquire`: its `release` cannot know)
        waited_ms: Option<u64>,
        /// `ok`, `failed`, `signal`, `lost` (also a run that ended while redlock was paused past
        /// the lock, or whose release found the token gone), `max-runtime`, `interrupted` (a
        /// signal to redlock, passed on) or `released` (by `release`)
        ended_as: &'static str,
        /// the command's exit status, for `ok` and `failed`
        exit_status: Option<i32>,
        /// the signal, for `signal` and `interrupted`
        signal: Option<i32>,
        /// the grant's fencing number (`--fence`)
        fence: Option<u64>,
        /// the semaphore slot it held
        slot: Option<usize>,
        /// `exclusive` or `shared`
        mode: &'static str,
        /// servers that recorded it
        servers_holding: usize,
        /// recorded on fewer than `quorum` servers
        partial: bool,
    }
}

documented! {
    /// One server's copy of a history.
    struct HistoryCopy<'a> {
        /// the server, redacted
        server: &'a str,
        /// whether it answered
        reachable: bool,
        /// why it did not answer properly
        error: Option<String>,
        /// the runs it keeps
        entries: Option<usize>,
        /// how long until its copy goes, if no run is recorded meanwhile
        expires_in_ms: Option<u64>,
    }
}
