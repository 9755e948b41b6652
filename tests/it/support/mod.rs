//! What the integration tests share, one concern per file; test files hold tests. Most tests
//! take all of it with `use crate::support::*`.
//!
//! A test runs redlock one of two ways:
//! - a one-shot run (a usage error, `--help`, an exit status, one command's JSON, one acquire,
//!   release or status against running servers) with `call`: `cluster.call([...])` or
//!   `call([...])`, then `.exits(64).stderr_has(..)`; or with `assert_cmd` where the output is
//!   checked some other way: `cluster.cmd([...])` or `redlock_cmd([...])`, then `.assert()`;
//! - a run that is spawned, supervised, signalled, waited on or run beside others (`exec`,
//!   `--wait`, signals, crowds, anything killed) with `process`: `cluster.redlock()` or
//!   `redlock()`, then `.spawn()` or `.output()`.
//!
//! - `binary`: the binary under test, its clean environment, a run's deadline, its output read.
//! - `one_shot`: one-shot runs, with `call` (a run asserted in one chain) or `assert_cmd`.
//! - `process`: spawned and supervised runs, in a process group of their own.
//! - `redis_server`: one redis-server on a free port (also the benchmark's).
//! - `cluster`: N servers as one lock sees them, and a black-holed server.
//! - `commands`: commands run under `redlock exec`, and what they leave behind.
//! - `waiters`: waiting acquires, their wake-up channels, crowds of shell workers.
//! - `tls`: certificates and TLS-only servers.
//! - `groups`: Sentinel-managed groups.
//! - `latches`: the latch `etl` of the latch tests, and `redlock latch` runs.
//! - `redis_cluster`: a real Redis Cluster, three masters and three replicas.
//! - `mixed`: a Redis Cluster beside two plain servers, as one lock sees them.
//! - `proxy`: the fault proxy between redlock and a server.
//! - `clock`: a process whose wall clock is an hour ahead of the machine's.
//! - `deployments`: `redlock doctor`'s runs and findings, and docs/doctor.md's ACL made a user.
//! - `markdown`: README.md and docs/*.md as GitHub reads them: headings, anchors, links.
//! - `imports`: the import graph between `src/` files, for `house.rs`'s no-circle rule.
//! - `wait`: `wait_for`, a condition polled within a bound (also the benchmark's).
//! - `size`: `stress`, a stress-sized test's size: small, or full with `REDLOCK_TEST_FULL=1`.

pub mod binary;
pub mod clock;
pub mod cluster;
pub mod commands;
pub mod deployments;
pub mod groups;
pub mod imports;
pub mod latches;
pub mod markdown;
pub mod mixed;
pub mod one_shot;
pub mod process;
pub mod proxy;
pub mod redis_cluster;
pub mod redis_server;
mod size;
pub mod tls;
mod wait;
pub mod waiters;

pub use binary::*;
pub use cluster::*;
pub use commands::*;
pub use one_shot::*;
pub use process::*;
pub use redis_server::*;
pub use size::stress;
pub use tls::*;
pub use wait::wait_for;
