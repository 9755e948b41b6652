//! Integration tests: the real `redlock` binary against real redis-server processes.

mod groups;
mod harness;
mod interop;
mod proxy;

mod cli;
mod cron;
mod crowd;
mod engine;
mod exec;
mod faults;
mod fence;
mod json;
mod limit;
mod ops;
mod partial;
mod queue;
mod semaphore;
mod sentinel;
mod shared;
pub mod waits;
