//! How a run of redlock ends: one typed `Outcome` per documented exit status, the table of them
//! with the subcommands each can end (which `--help`, the man pages and docs/reference.md show;
//! a test checks the doc's), and the error types that carry an outcome to `main`.
//!
//! Scripts branch on these codes, so they are part of the interface. The numbers follow
//! `<sysexits.h>` where it has one (64, 69, 70, 75), as flock(1) does, and the shell's
//! conventions for a command that was not run (126, 127) or died of a signal (128+N).

/// How the run ended. Every subcommand returns one; errors carry one in a `Failure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Success. For `status NAME`: the lock is held.
    Success,
    /// A negative answer: the token does not hold the lock (release, extend), or the lock is
    /// free (status).
    Negative,
    /// Bad flag, value, duration, URL or name. Nothing was sent to any server.
    Usage,
    /// Too few servers could be reached or answered properly to reach a quorum.
    Unavailable,
    /// Any other internal error.
    Software,
    /// The lock is held by someone else. `code` is 75 unless `-E` changed it.
    Busy { code: u8 },
    /// `exec`: the command outlived `--max-runtime` and was stopped, as timeout(1) does.
    TimedOut,
    /// `exec`: the lock was lost, or may have been, while the command ran (the command was
    /// stopped, or ended while redlock was paused past the lock, or the release found the token
    /// gone).
    LockLost,
    /// `exec`: the command was found but could not be executed.
    CannotExecute,
    /// `exec`: the command was not found.
    NotFound,
    /// `exec`: the command exited with this status, passed on unchanged.
    CommandExited(u8),
    /// The command died of this signal, or the signal stopped a waiting redlock: 128+N.
    Signal(i32),
}

/// The status a busy lock ends with unless `-E` says otherwise.
pub(crate) const BUSY: u8 = 75;

impl Outcome {
    pub(crate) fn code(self) -> u8 {
        match self {
            Outcome::Success => 0,
            Outcome::Negative => 1,
            Outcome::Usage => 64,
            Outcome::Unavailable => 69,
            Outcome::Software => 70,
            Outcome::Busy { code } => code,
            Outcome::TimedOut => 124,
            Outcome::LockLost => 125,
            Outcome::CannotExecute => 126,
            Outcome::NotFound => 127,
            Outcome::CommandExited(code) => code,
            Outcome::Signal(signal) => (128 + signal.clamp(1, 127)) as u8,
        }
    }

    /// The busy outcome with `-E`'s code, if given.
    pub(crate) fn busy(conflict_exit_code: Option<u8>) -> Outcome {
        Outcome::Busy {
            code: conflict_exit_code.unwrap_or(BUSY),
        }
    }

    /// How the table names this outcome's status.
    fn label(self) -> String {
        match self {
            Outcome::Signal(_) => "128+N".into(),
            other => other.code().to_string(),
        }
    }
}

/// One documented row of the exit-status table.
struct Row {
    outcome: Outcome,
    meaning: &'static str,
    /// The subcommands that can end with it, whose own help lists it.
    commands: &'static [&'static str],
}

/// Every subcommand.
const EVERY: &[&str] = &[
    "acquire", "release", "extend", "status", "history", "exec", "latch", "doctor",
];
/// The subcommands that take a lock, and so can find it busy or wait for it.
const TAKING: &[&str] = &["acquire", "exec", "latch"];

/// The documented statuses, in order. docs/reference.md's table must say exactly this (a test
/// checks).
const ROWS: &[Row] = &[
    Row {
        outcome: Outcome::Success,
        meaning: "success; for `status NAME`, the lock is held; for `status --watch`, a signal (Ctrl-C) stopped it; for `history NAME`, it lists at least one run; for `exec`, the command's own status; for `latch`: set, counted down on a quorum, or open; for `doctor`: no error found (warnings are printed)",
        commands: EVERY,
    },
    Row {
        outcome: Outcome::Negative,
        meaning: "`release`/`extend`: the token does not hold the lock on a quorum, or holds it in the other mode (`--shared` or not); `status NAME`: the lock is not held (free, or partial: its key on fewer than a quorum of servers); `history NAME`: no run recorded (within `--since`); `release --force`: there was nothing to remove; `latch status NAME`: the latch is not open; `doctor`: at least one error (with `--strict`, or a warning)",
        commands: &["release", "extend", "status", "history", "latch", "doctor"],
    },
    Row {
        outcome: Outcome::Usage,
        meaning: "usage error: bad flag, value, duration, URL or name, with nothing sent to any server (`latch done`/`wait` without `--count` on a latch no server knows: nothing was written); or a `--limit` other than the semaphore's, with nothing left on any server",
        commands: EVERY,
    },
    Row {
        outcome: Outcome::Unavailable,
        meaning: "unavailable: too few servers could be reached or answered properly to reach a quorum (`latch wait`: to tell whether the latch is open, by the end of `--wait`)",
        commands: EVERY,
    },
    Row {
        outcome: Outcome::Software,
        meaning: "internal error",
        commands: EVERY,
    },
    Row {
        outcome: Outcome::Busy { code: BUSY },
        meaning: "busy: the lock is held by someone else (after `--wait`, if given); `-E N` changes it, as with flock; `latch`: not open within `--wait`, expired while waited on, it exists with another count, or no majority of the servers holds it with one count",
        commands: TAKING,
    },
    Row {
        outcome: Outcome::TimedOut,
        meaning: "`exec`: the command ran longer than `--max-runtime` and was stopped, as timeout(1) does (the lock was then released, or kept for `--hold-at-least`)",
        commands: &["exec"],
    },
    Row {
        outcome: Outcome::LockLost,
        meaning: "`exec`: the lock was lost, or may have been, while the command ran: the command was stopped, or ended while redlock was paused past the lock, or the release found the token gone",
        commands: &["exec"],
    },
    Row {
        outcome: Outcome::CannotExecute,
        meaning: "`exec`: the command was found but could not be executed (the lock was released)",
        commands: &["exec"],
    },
    Row {
        outcome: Outcome::NotFound,
        meaning: "`exec`: the command was not found (the lock was released)",
        commands: &["exec"],
    },
    Row {
        outcome: Outcome::Signal(1),
        meaning: "`exec`: the command died of signal N; any command: a signal N stopped redlock while it waited, with nothing left on any server",
        commands: TAKING,
    },
];

/// The documented statuses that `command` can end with, or every one for the top level
/// (`None`): each as its label (`75`, `128+N`) and meaning, for the help and the man pages.
pub(crate) fn statuses(command: Option<&str>) -> impl Iterator<Item = (String, &'static str)> + '_ {
    ROWS.iter()
        .filter(move |row| command.is_none_or(|command| row.commands.contains(&command)))
        .map(|row| (row.outcome.label(), row.meaning))
}

/// A usage error: the message names the bad value and what was expected. Exits 64.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A usage error as an `anyhow::Error`.
pub(crate) fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

/// An outcome that ends the run early. `message` (if any) goes to stderr once.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) outcome: Outcome,
    pub(crate) message: Option<String>,
}

/// Ends the run with `outcome`, printing `message` once.
pub(crate) fn fail(outcome: Outcome, message: impl Into<String>) -> anyhow::Error {
    Failure {
        outcome,
        message: Some(message.into()),
    }
    .into()
}

/// Too few servers answered a read that shows what they hold (`status` and `latch status`
/// without a name, `history`): what the others had was printed, and the run ends 69, naming the
/// servers that did not answer and why (`reasons`).
pub(crate) fn incomplete(
    what: &str,
    (answered, servers): (usize, usize),
    reasons: &[String],
) -> anyhow::Error {
    fail(
        Outcome::Unavailable,
        format!(
            "could not finish the {what}: only {answered} of {} answered, fewer than a quorum, so what it shows may be incomplete ({})",
            crate::human::servers(servers),
            reasons.join("; ")
        ),
    )
}

/// Ends the run with `outcome` and nothing to say (the lock is free, a signal while waiting).
pub(crate) fn quietly(outcome: Outcome) -> anyhow::Error {
    Failure {
        outcome,
        message: None,
    }
    .into()
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message.as_deref().unwrap_or(""))
    }
}

impl std::error::Error for Failure {}

/// The status for an error that reached `main`, and whether it has a message to print.
pub(crate) fn code_of(err: &anyhow::Error) -> (u8, bool) {
    if let Some(failure) = err.downcast_ref::<Failure>() {
        (failure.outcome.code(), failure.message.is_some())
    } else if err.downcast_ref::<UsageError>().is_some() {
        (Outcome::Usage.code(), true)
    } else {
        (Outcome::Software.code(), true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_codes_are_distinct() {
        let mut codes: Vec<String> = ROWS.iter().map(|row| row.outcome.label()).collect();
        let all = codes.len();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), all);
    }

    #[test]
    fn signal_deaths_map_like_a_shell() {
        assert_eq!(Outcome::Signal(libc::SIGTERM).code(), 143);
        assert_eq!(Outcome::Signal(libc::SIGINT).code(), 130);
        assert_eq!(Outcome::Signal(libc::SIGKILL).code(), 137);
        assert_eq!(Outcome::busy(Some(0)).code(), 0);
        assert_eq!(Outcome::busy(None).code(), 75);
    }

    #[test]
    fn each_subcommand_lists_the_statuses_it_can_end_with() {
        let labels =
            |command| -> Vec<String> { statuses(command).map(|(label, _)| label).collect() };
        assert_eq!(labels(None).len(), ROWS.len());
        let exec = labels(Some("exec"));
        assert!(exec.iter().any(|l| l == "124") && exec.iter().any(|l| l == "125"));
        assert!(!exec.iter().any(|l| l == "1"));
        assert_eq!(labels(Some("status")), ["0", "1", "64", "69", "70"]);
        assert_eq!(labels(Some("history")), ["0", "1", "64", "69", "70"]);
        assert_eq!(
            labels(Some("acquire")),
            ["0", "64", "69", "70", "75", "128+N"]
        );
        for row in ROWS {
            assert!(
                row.commands.iter().all(|c| EVERY.contains(c)),
                "{}",
                row.meaning
            );
        }
    }

    /// docs/reference.md's "Exit status" table says exactly what `--help` says.
    #[test]
    fn documented_table_matches_the_outcomes() {
        let doc = include_str!("../docs/reference.md");
        let section = doc
            .split("## Exit status")
            .nth(1)
            .expect("docs/reference.md has an Exit status section");
        let rows: Vec<&str> = section
            .lines()
            .skip_while(|line| !line.starts_with("| code"))
            .skip(2)
            .take_while(|line| line.starts_with('|'))
            .collect();
        let expected: Vec<String> = ROWS
            .iter()
            .map(|row| format!("| {} | {} |", row.outcome.label(), row.meaning))
            .collect();
        assert_eq!(
            rows, expected,
            "docs/reference.md's exit-status table differs from src/exit.rs"
        );
    }
}
