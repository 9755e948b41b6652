//! Integration tests: the real `redlock` binary against real redis-server processes.

mod harness;

mod engine;
mod exec;
mod ops;
mod waits;
