//! Integration tests: the real `redlock` binary against real redis-server processes.

mod groups;
mod harness;
mod proxy;

mod cron;
mod crowd;
mod engine;
mod exec;
mod faults;
mod fence;
mod latch;
mod ops;
mod partial;
mod queue;
mod semaphore;
mod sentinel;
pub mod waits;
