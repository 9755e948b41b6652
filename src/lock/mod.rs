//! The Redlock algorithm over N independent servers: acquire, release, extend, keep and inspect
//! a `Target` (a mutex or a semaphore). Everything here returns values and typed errors; it
//! never prints and never exits.
//!
//! - target.rs: what is locked; keys/: every key name, built and parsed (a cluster's too);
//!   limit.rs: the number of slots a semaphore remembers, checked at each grant.
//! - attempt.rs: one attempt and its safety argument; vote.rs: what its servers said;
//!   withdraw.rs: its clean-up;
//!   wait/: retrying until `--wait` runs out (the back-off, the pause and its wake-ups).
//! - queue/: the waiters' queue and its hand-over protocol, and the wake-up listeners.
//! - shared.rs: shared holders (`--shared`) and why they exclude writers.
//! - holder.rs: release and extend; keep.rs: `--hold-at-least`; fence.rs: fencing numbers;
//!   history.rs: the run history those give-backs record, and its read.
//! - inspect.rs: reading what the servers hold; list.rs: every lock under a prefix;
//!   verdict.rs: the quorum's verdict on it.
//! - engine.rs: `Redlock`, `Held` and `LockError`, which every operation shares.
//! - latch/: the countdown latch (`redlock latch`), on the same rounds, scripts and listeners.
//! - nodes/: one round of requests to every server; quorum.rs: the arithmetic of a round;
//!   script.rs: how a Lua script is assembled and cached; observe.rs: rounds shown to `-v`.
//! - Each module's Lua is in `.lua` files in the folder of its name (attempt/acquire.lua, …);
//!   every_script.rs lists every script for the tests that check them all.

mod assembly;
mod attempt;
mod engine;
#[cfg(test)]
mod every_script;
mod fence;
mod history;
mod holder;
mod inspect;
mod keep;
pub(crate) mod keys;
pub(crate) mod latch;
mod limit;
mod list;
mod nodes;
mod observe;
mod queue;
pub(crate) mod quorum;
mod script;
mod sha1;
mod shared;
mod target;
mod verdict;
mod vote;
mod wait;
mod withdraw;

pub(crate) use engine::{Held, LockError, Redlock};
pub(crate) use fence::holder_fence;
pub(crate) use history::{Record, Retention, Stored};
pub(crate) use holder::Released;
pub(crate) use inspect::{Inspection, QueuedWaiter};
pub(crate) use keep::{Acquisition, Hold, HoldLeft, Keep, KeepOutcome};
pub(crate) use limit::Limit;
pub(crate) use list::{Found, INDEXED_ABOVE, SLOW_LISTING};
pub(crate) use nodes::NodeError;
pub(crate) use observe::Round;
pub(crate) use target::{Kind, Target};
pub(crate) use verdict::{
    describe_foreign, describe_shared, describe_token, holding, Holding, KeyState, ServerState,
    SharedHolder,
};
pub(crate) use wait::{Interrupt, WaitProgress, Waiting, Wake};
