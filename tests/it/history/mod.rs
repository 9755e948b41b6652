//! The run history (`redlock history`): every way a run ends, recorded on the servers.

mod runs;
