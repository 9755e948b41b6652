//! `redlock doctor`'s own arguments: the longest TTL the deployment's locks use (what a restart
//! without persistence and a clock offset are measured against), whether warnings fail the
//! check, and JSON for programs.

use super::headings::{CHECKS, OUTPUT};
use super::values::ttl;
use clap::Args;
use std::time::Duration;

#[derive(Args, Debug)]
pub(crate) struct DoctorArgs {
    /// The longest TTL your locks use (at most 7d): a server without persistence that started
    /// less than this ago may have forgotten locks it granted, and a clock offset is allowed the
    /// drift allowance of this TTL
    #[arg(long, value_name = "DUR", env = "REDLOCK_TTL", default_value = "30s", value_parser = ttl, help_heading = CHECKS)]
    pub(crate) ttl: Duration,

    /// Treat every warning as an error (exit 1): for a CI or deploy preflight
    #[arg(long, env = "REDLOCK_STRICT", help_heading = CHECKS)]
    pub(crate) strict: bool,

    /// Print one JSON object for programs: every server's facts and every finding (docs/json.md)
    #[arg(long, env = "REDLOCK_JSON", help_heading = OUTPUT)]
    pub(crate) json: bool,
}
