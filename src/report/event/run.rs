//! The events of a run beside its lock's: `exec`'s command outlived `--max-runtime` or ended, a
//! warning, and the error that ends the run.

use super::common::{millis, Event};
use crate::human;
use crate::report::line::Severity;
use crate::schema::documented;

documented! {
    /// `exec`'s command ran longer than `--max-runtime`; it is being stopped.
    pub(crate) struct TimedOut<'a> {
        /// the lock name
        pub(crate) name: &'a str,
        /// the key
        pub(crate) key: &'a str,
        /// the command's pid
        pub(crate) child_pid: u32,
        /// the `--max-runtime`
        pub(crate) max_runtime_ms: u64,
    }
}

impl Event for TimedOut<'_> {
    const NAME: &'static str = "timed_out";
    const SEVERITY: Severity = Severity::Error;
    fn text(&self) -> String {
        format!(
            "command (pid {}) still running after --max-runtime {}; stopping it",
            self.child_pid,
            humantime::format_duration(millis(self.max_runtime_ms))
        )
    }
}

documented! {
    /// `exec`'s command ended: `code` when it exited, `signal` when a signal killed it.
    pub(crate) struct ChildExited<'a> {
        /// the lock name
        pub(crate) name: &'a str,
        /// the key
        pub(crate) key: &'a str,
        /// the command's pid
        pub(crate) child_pid: u32,
        /// its exit status, when it exited
        pub(crate) code: Option<i32>,
        /// the signal that killed it, when one did
        pub(crate) signal: Option<i32>,
        /// how long it ran
        pub(crate) ran_ms: u64,
    }
}

impl Event for ChildExited<'_> {
    const NAME: &'static str = "child_exited";
    const SEVERITY: Severity = Severity::Info;
    fn text(&self) -> String {
        let (pid, ran) = (self.child_pid, human::duration(millis(self.ran_ms)));
        match (self.code, self.signal) {
            (_, Some(signal)) => {
                format!("command (pid {pid}) killed by signal {signal} after {ran}")
            }
            (code, None) => format!(
                "command (pid {pid}) exited with status {} after {ran}",
                code.unwrap_or(-1)
            ),
        }
    }
}

documented! {
    /// Something worth saying that does not stop redlock.
    pub(crate) struct Warning<'a> {
        /// what is worth saying and does not stop redlock
        pub(crate) message: &'a str,
    }
}

impl Event for Warning<'_> {
    const NAME: &'static str = "warning";
    const SEVERITY: Severity = Severity::Warning;
    fn text(&self) -> String {
        format!("warning: {}", self.message)
    }
}

documented! {
    /// The error that ends the run.
    pub(crate) struct Error<'a> {
        /// the error that ends the run
        pub(crate) message: &'a str,
        /// the exit status it ends with
        pub(crate) exit_code: u8,
    }
}

impl Event for Error<'_> {
    const NAME: &'static str = "error";
    const SEVERITY: Severity = Severity::Error;
    fn text(&self) -> String {
        self.message.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn fields(event: &impl Event) -> Value {
        serde_json::to_value(event).unwrap()
    }

    #[test]
    fn an_event_in_words_says_what_its_fields_say() {
        let exited = ChildExited {
            name: "job",
            key: "redlock:job",
            child_pid: 42,
            code: None,
            signal: Some(15),
            ran_ms: 2000,
        };
        assert_eq!(
            exited.text(),
            "command (pid 42) killed by signal 15 after 2.0s"
        );
        assert_eq!(fields(&exited)["signal"], 15);
        // `pid` is redlock's own in every JSON line: the command's is `child_pid`.
        assert_eq!(fields(&exited)["child_pid"], 42);
        assert!(fields(&exited).get("pid").is_none());
    }
}
