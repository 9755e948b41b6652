//! The headings `--help` groups options under, so that a subcommand's own options stand apart
//! from the server, TLS and output options every subcommand shares.

pub(crate) const LOCK: &str = "Lock";
pub(crate) const WAITING: &str = "Waiting";
pub(crate) const EXEC: &str = "Exec";
pub(crate) const CHECKS: &str = "Checks";
pub(crate) const HISTORY: &str = "History";
pub(crate) const SERVERS: &str = "Servers and TLS";
pub(crate) const OUTPUT: &str = "Output";
