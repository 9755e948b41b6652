//! One line on stderr, written whole with one call: the text form (made printable), and the JSON
//! object with its common head (`ts`, `level`, `event`, `pid`, `version`) that every
//! `--log-format json` line starts with.

use crate::human;
use serde_json::{Map, Value};
use std::io::Write;
use std::time::{Duration, SystemTime};

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

/// The fields every JSON line starts with; `pid` is redlock's own (a command's is `child_pid`),
/// and `version` the schema's (`crate::schema`).
const HEAD: [&str; 5] = ["ts", "level", "event", "pid", "version"];

/// `{"ts":…,"level":…,"event":…,"pid":…,"version":1, …fields}`: the common head first, so
/// lines read well in `tail`.
pub(crate) fn json_line(severity: Severity, event: &str, fields: Value) {
    line(&json_object(severity, event, fields).to_string());
}

/// The line's object. A field named like one of the head's is a bug that debug builds (and so
/// the tests) stop at; it never takes the head's place.
fn json_object(severity: Severity, event: &str, fields: Value) -> Value {
    let mut object = Map::new();
    let [ts, level, kind, pid, version] = HEAD;
    object.insert(
        ts.into(),
        humantime::format_rfc3339_millis(SystemTime::now())
            .to_string()
            .into(),
    );
    object.insert(level.into(), severity.as_str().into());
    object.insert(kind.into(), event.into());
    object.insert(pid.into(), std::process::id().into());
    object.insert(version.into(), crate::schema::VERSION.into());
    if let Value::Object(fields) = fields {
        for (name, value) in fields {
            debug_assert!(
                !HEAD.contains(&name.as_str()),
                "{event} has a field '{name}'"
            );
            object.entry(name).or_insert(value);
        }
    }
    Value::Object(object)
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

/// A duration as whole milliseconds, the unit of every `_ms` field.
pub(crate) fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_head_comes_first_and_pid_is_redlocks() {
        let object = json_object(Severity::Info, "child_exited", json!({ "child_pid": 42 }));
        let names: Vec<&String> = object.as_object().unwrap().keys().collect();
        assert_eq!(
            names,
            ["ts", "level", "event", "pid", "version", "child_pid"]
        );
        assert_eq!(object["pid"], std::process::id());
        assert_eq!(object["level"], "info");
    }
}
