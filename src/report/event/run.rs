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
    /// Once per run, when a quorum answered but some servers could not vote: the fault margin
    /// that is left. Written even with `-q` when a server is misconfigured (it will not come
    /// back by itself).
    pub(crate) struct Margin {
        /// servers configured
        pub(crate) servers: usize,
        /// servers that answered
        pub(crate) can_vote: usize,
        /// servers a verdict needs
        pub(crate) quorum: usize,
        /// each server that could not vote
        pub(crate) cannot_vote: Vec<CannotVote>,
    }
}

documented! {
    /// A server that could not vote in a run.
    pub(crate) struct CannotVote {
        /// the server, redacted
        pub(crate) server: String,
        /// why, in plain words (with the fix, for a misconfigured server)
        pub(crate) why: String,
        /// whether it will not come back by itself (a wrong password, a certificate, a server of
        /// another kind); else it is down and may
        pub(crate) misconfigured: bool,
    }
}

impl Margin {
    /// Whether a server is set up wrong: the line is then written even with `-q`.
    pub(crate) fn misconfigured(&self) -> bool {
        self.cannot_vote.iter().any(|server| server.misconfigured)
    }
}

impl Event for Margin {
    const NAME: &'static str = "margin";
    const SEVERITY: Severity = Severity::Warning;
    fn text(&self) -> String {
        let spare = self.can_vote.saturating_sub(self.quorum);
        let stops = match spare {
            0 => "one more failure stops every lock".to_string(),
            more => format!("{} more failures stop every lock", more + 1),
        };
        let each: Vec<String> = self
            .cannot_vote
            .iter()
            .map(|server| {
                let state = if server.misconfigured {
                    "cannot vote"
                } else {
                    "is down"
                };
                format!("{} {state}: {}", server.server, server.why)
            })
            .collect();
        let servers = if self.servers == 1 {
            "server"
        } else {
            "servers"
        };
        format!(
            "warning: {} of {} {servers} can vote: {stops} ({})",
            self.can_vote,
            self.servers,
            each.join("; ")
        )
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
