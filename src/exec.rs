//! `redlock exec`: hold the lock while a command runs.

use crate::cli::ExecArgs;
use crate::config::Config;
use crate::exit::{self, Failure};

pub(crate) fn run(_config: &Config, _args: &ExecArgs) -> anyhow::Result<u8> {
    Err(Failure::new(exit::SOFTWARE, "exec is not implemented yet"))
}
