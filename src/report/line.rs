//! One line on stderr, written whole with one call: the text form (made printable), and the JSON
//! object with its common head (`ts`, `level`, `event`, `pid`, `version`) that every
//! `--log-format json` line starts with.

use crate::human;
use crate::schema::documented;
use serde::Serialize;
use std::io::Write;
use std::time::SystemTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Severity {
    Info,
    /// An expected outcome people want to see (a busy lock): shown unless `-q`, and always in a
    /// JSON log, so that the log is complete.
    Notice,
    Warning,
    Error,
}

impl Severity {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Notice => "notice",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

documented! {
    /// What every `--log-format json` line starts with, before its event's fields; `pid` is
    /// redlock's own (a command's is `child_pid`), and `version` the schema's (`crate::schema`).
    pub(crate) struct Head<'a> {
        /// when, RFC 3339 UTC with milliseconds
        ts: String,
        /// `info`, `notice` (busy), `warning` or `error`
        level: &'static str,
        /// one of the events below
        event: &'a str,
        /// redlock's own pid
        pid: u32,
        /// `1`
        version: u64,
    }
}

/// One JSON line: the head first, so lines read well in `tail`, then the event's fields.
#[derive(Serialize)]
struct Line<'a, E> {
    #[serde(flatten)]
    head: Head<'a>,
    #[serde(flatten)]
    fields: &'a E,
}

/// `{"ts":…,"level":…,"event":…,"pid":…,"version":1, …fields}`.
pub(crate) fn json_line<E: Serialize>(severity: Severity, event: &str, fields: &E) {
    if let Ok(line) = json_object(severity, event, fields) {
        self::line(&line);
    }
}

fn json_object<E: Serialize>(
    severity: Severity,
    event: &str,
    fields: &E,
) -> serde_json::Result<String> {
    let head = Head {
        ts: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
        level: severity.as_str(),
        event,
        pid: std::process::id(),
        version: crate::schema::VERSION,
    };
    serde_json::to_string(&Line { head, fields })
}

/// Text for people, each of its lines made printable (`human::printable`): a key such as
/// `redlock:job\x1ffence` or a server's message never puts a raw control byte on stderr. (JSON
/// lines carry keys as they are: they are data, and JSON escapes them.)
pub(crate) fn text_line(text: &str) {
    let lines: Vec<String> = text.lines().map(human::printable).collect();
    line(&lines.join("\n"));
}

fn line(text: &str) {
    // One write per line; a closed stderr is nothing we can report anywhere.
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn the_head_comes_first_and_pid_is_redlocks() {
        let line = json_object(Severity::Info, "child_exited", &json!({ "child_pid": 42 }));
        let object: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let names: Vec<&String> = object.as_object().unwrap().keys().collect();
        assert_eq!(
            names,
            ["ts", "level", "event", "pid", "version", "child_pid"]
        );
        assert_eq!(object["pid"], std::process::id());
        assert_eq!(object["level"], "info");
    }
}
