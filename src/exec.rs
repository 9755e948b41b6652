//! `redlock exec`: hold the lock while a command runs.

use crate::cli::ExecArgs;
use crate::config::Config;
use crate::exit;

pub(crate) fn run(_config: &Config, _args: &ExecArgs) -> anyhow::Result<u8> {
    Err(exit::fail(exit::SOFTWARE, "exec is not implemented yet"))
}
