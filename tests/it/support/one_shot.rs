//! One-shot runs of redlock, asserted with `assert_cmd` and `predicates`: a run that starts,
//! asks its servers (or refuses at once), prints and exits, with nothing sent to it, nothing
//! waiting on it in the background and nothing running beside it. Each has the deadline
//! (`.timeout`) that `binary` derives from its flags, so the flags are given up front.
//!
//! The common case reads as one line with `call`: `cluster.call(["acquire", "job"]).exits(75)
//! .stderr_has("busy")`; a run whose output is asserted in other ways takes `assert_cmd`'s
//! `cluster.cmd([...]).assert()`.

use super::binary::{deadline, redlock_command, stderr_of, stdout_of};
use std::ffi::OsStr;
use std::fmt;
use std::process::Output;

pub use predicates::prelude::*;

/// `redlock ARGS` with no server but those ARGS name.
pub fn redlock_cmd<I, S>(args: I) -> assert_cmd::Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    one_shot(redlock_command(), args)
}

/// `command ARGS`, for one `assert_cmd` run within the deadline its flags and environment give.
pub fn one_shot<I, S>(mut command: std::process::Command, args: I) -> assert_cmd::Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    command.args(args);
    let limit = deadline(command.get_args(), command.get_envs());
    let mut cmd = assert_cmd::Command::from_std(command);
    cmd.timeout(limit);
    cmd
}

/// Text of exactly `n` lines, leading and trailing whitespace aside: `line_count(1)` is a usage
/// error's whole message.
pub fn line_count(n: usize) -> impl Predicate<str> {
    predicate::function(move |text: &str| text.trim().lines().count() == n).fn_name("line_count")
}

/// `redlock ARGS` with no server but those ARGS name, run to its end: [`Call`].
pub fn call<I, S>(args: I) -> Call
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Call::run(redlock_command(), args)
}

/// A one-shot run that has ended, asserted in a chain that says what it expects:
/// `.exits(64).stderr_has("--ttl").stderr_lines(1)`. A failed expectation panics with the
/// arguments, the exit status and both outputs.
pub struct Call {
    args: Vec<String>,
    output: Output,
}

impl Call {
    /// `command ARGS`, run within the deadline its flags and environment give.
    pub fn run<I, S>(command: std::process::Command, args: I) -> Call
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = one_shot(command, args);
        let args = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let output = cmd.output().expect("redlock starts");
        Call { args, output }
    }

    /// It exited with `code` (a run killed at its deadline has none, and fails here).
    #[track_caller]
    pub fn exits(self, code: i32) -> Self {
        assert_eq!(self.output.status.code(), Some(code), "{self}");
        self
    }

    /// It exited 0.
    #[track_caller]
    pub fn succeeds(self) -> Self {
        self.exits(0)
    }

    #[track_caller]
    pub fn stdout_has(self, text: &str) -> Self {
        assert!(
            self.stdout_text().contains(text),
            "stdout lacks {text:?}: {self}"
        );
        self
    }

    #[track_caller]
    pub fn stderr_has(self, text: &str) -> Self {
        assert!(
            self.stderr_text().contains(text),
            "stderr lacks {text:?}: {self}"
        );
        self
    }

    /// Neither output shows `text` (a password, say).
    #[track_caller]
    pub fn never_shows(self, text: &str) -> Self {
        assert!(
            !self.stdout_text().contains(text) && !self.stderr_text().contains(text),
            "{text:?} shows: {self}"
        );
        self
    }

    /// stderr is exactly `n` lines, leading and trailing whitespace aside: `stderr_lines(1)` is
    /// a usage error's whole message.
    #[track_caller]
    pub fn stderr_lines(self, n: usize) -> Self {
        assert_eq!(self.stderr_text().lines().count(), n, "{self}");
        self
    }

    /// stdout, as it was, passes `predicate` (as `assert_cmd`'s `.stdout(..)`).
    #[track_caller]
    pub fn stdout(self, predicate: impl Predicate<str>) -> Self {
        let text = String::from_utf8_lossy(&self.output.stdout);
        assert!(predicate.eval(&text), "stdout fails {predicate}: {self}");
        self
    }

    /// stderr, as it was, passes `predicate` (as `assert_cmd`'s `.stderr(..)`).
    #[track_caller]
    pub fn stderr(self, predicate: impl Predicate<str>) -> Self {
        let text = String::from_utf8_lossy(&self.output.stderr);
        assert!(predicate.eval(&text), "stderr fails {predicate}: {self}");
        self
    }

    /// stdout, trimmed.
    pub fn stdout_text(&self) -> String {
        stdout_of(&self.output)
    }

    /// stderr, trimmed.
    pub fn stderr_text(&self) -> String {
        stderr_of(&self.output)
    }

    /// What the run left: its exit status and both outputs.
    pub fn get_output(&self) -> &Output {
        &self.output
    }

    /// stdout as one JSON document.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.output.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {self}"))
    }
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "redlock {:?} ended with {}\n--- stdout\n{}\n--- stderr\n{}",
            self.args,
            self.output.status,
            self.stdout_text(),
            self.stderr_text()
        )
    }
}
