//! Every event redlock writes on stderr, one struct each, whose fields are its
//! `--log-format json` line's (after the head every line has, `line`), and whose `text` is the
//! same event in words for people: a lock's lifecycle (acquired, renewed, renewal failed, lost,
//! released, kept, busy) in `lock`, and the rest of a run (exec's command timed out or exited, a
//! warning, the error that ends the run) in `run`.
//!
//! Durations are whole milliseconds in `_ms` fields, the command's pid is `child_pid` (`pid` is
//! always redlock's own), and a token only ever appears as its `token_id`.

mod common;
mod lock;
mod run;

pub(crate) use common::{token_id, Event};
pub(crate) use lock::{Acquired, Busy, Kept, Lost, Released, RenewalFailed, Renewed};
pub(crate) use run::{CannotVote, ChildExited, Error, Margin, TimedOut, Warning};
