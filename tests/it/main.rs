//! Integration tests: the real `redlock` binary against real redis-server processes. Shared
//! helpers live in `support/` (its `//!` says which way to run redlock when); every other module
//! holds tests, one behaviour each (`json/schema.rs` is docs/json.md's schema, which `json.rs`
//! checks against).

mod support;

mod acl;
mod cli;
mod cluster_failover;
mod cluster_mode;
mod cron;
mod crowd;
mod docs;
mod doctor;
mod doctor_groups;
mod engine;
mod exec;
mod exec_stops;
mod faults;
mod fence;
mod guards;
mod handover;
mod help;
mod history;
mod house;
mod interop;
mod json;
mod kept;
mod latch;
mod latch_commands;
mod latch_refusals;
mod latch_restarts;
mod limit;
mod misconfigured;
mod ops;
mod partial;
mod queue;
mod quorum;
mod readme;
mod refusals;
mod rough_handling;
mod round_trips;
mod rounds;
mod security;
mod semaphore;
mod sentinel;
mod sentinel_masters;
mod shared;
mod shared_crowds;
mod signals;
mod supervise;
mod waits;
mod watch;
