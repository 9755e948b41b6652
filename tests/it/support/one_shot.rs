//! One-shot runs of redlock, asserted with `assert_cmd` and `predicates`: a run that starts,
//! asks its servers (or refuses at once), prints and exits, with nothing sent to it, nothing
//! waiting on it in the background and nothing running beside it. Each has the deadline
//! (`.timeout`) that `binary` derives from its flags, so the flags are given up front.

use super::binary::{deadline, redlock_command};
use std::ffi::OsStr;

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
