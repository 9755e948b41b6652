//! The exit-code table: the one place that says which outcome maps to which status.
//!
//! Scripts branch on these codes, so they are part of the interface. The numbers follow
//! `<sysexits.h>` where it has one (64, 69, 70, 75), as flock(1) does, and the shell's
//! conventions for a command that was not run (126, 127) or died of a signal (128+N).

/// Success. For `status NAME`: the lock is held.
pub(crate) const SUCCESS: u8 = 0;
/// A negative answer: the token does not hold the lock (release, extend), or the lock is free (status).
pub(crate) const NEGATIVE: u8 = 1;
/// Bad flag, value, duration, URL or name. Nothing was sent to any server.
pub(crate) const USAGE: u8 = 64;
/// Too few servers could be reached or answered properly to reach a quorum.
pub(crate) const UNAVAILABLE: u8 = 69;
/// Any other internal error.
pub(crate) const SOFTWARE: u8 = 70;
/// The lock is held by someone else (after `--wait`, if given). `-E` overrides it.
pub(crate) const BUSY: u8 = 75;
/// `exec`: the lock was lost while the command ran, and the command was stopped.
pub(crate) const LOCK_LOST: u8 = 125;
/// `exec`: the command was found but could not be executed.
pub(crate) const CANNOT_EXECUTE: u8 = 126;
/// `exec`: the command was not found.
pub(crate) const NOT_FOUND: u8 = 127;

/// The status a shell reports for a process that died of signal `signal`.
pub(crate) fn for_signal(signal: i32) -> u8 {
    (128 + signal.clamp(1, 127)) as u8
}

/// The table as it appears at the end of `--help`; the README carries the same rows.
pub(crate) const TABLE: &str = "\
Exit status:
  0        success; for `status NAME`, the lock is held; for `exec`, the command's own status
  1        the token does not hold the lock (release, extend), or the lock is free (status)
  64       usage error: bad flag, value, duration, URL or name
  69       unavailable: too few servers reachable or answering to reach a quorum
  70       internal error
  75       busy: the lock is held by someone else (change it with -E/--conflict-exit-code)
  125      exec: the lock was lost while the command ran; the command was stopped
  126      exec: the command could not be executed
  127      exec: the command was not found
  128+N    exec: the command died of signal N";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct() {
        let codes = [
            SUCCESS,
            NEGATIVE,
            USAGE,
            UNAVAILABLE,
            SOFTWARE,
            BUSY,
            LOCK_LOST,
            CANNOT_EXECUTE,
            NOT_FOUND,
        ];
        let mut sorted = codes.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), codes.len());
    }

    #[test]
    fn signal_deaths_map_like_a_shell() {
        assert_eq!(for_signal(libc::SIGTERM), 143);
        assert_eq!(for_signal(libc::SIGINT), 130);
        assert_eq!(for_signal(libc::SIGKILL), 137);
    }

    #[test]
    fn help_table_lists_every_code() {
        for code in [
            "0 ", "1 ", "64", "69", "70", "75", "125", "126", "127", "128+N",
        ] {
            assert!(TABLE.contains(&format!("  {code}")), "missing {code}");
        }
    }
}

/// An outcome that ends the run with a specific status. `message` (if any) goes to stderr once.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: Option<String>,
}

/// Ends the run with `code`, printing `message` once.
pub(crate) fn fail(code: u8, message: impl Into<String>) -> anyhow::Error {
    Failure {
        code,
        message: Some(message.into()),
    }
    .into()
}

/// Ends the run with `code` and nothing to say (the lock is free, the command's own status).
pub(crate) fn quietly(code: u8) -> anyhow::Error {
    Failure {
        code,
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
        (failure.code, failure.message.is_some())
    } else if err.downcast_ref::<crate::config::UsageError>().is_some() {
        (USAGE, true)
    } else {
        (SOFTWARE, true)
    }
}
