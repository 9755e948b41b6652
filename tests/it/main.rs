//! Integration tests: the real `redlock` binary against real redis-server processes. Shared
//! helpers live in `support/` (its `//!` says which way to run redlock when); every other folder
//! holds the tests of one feature, one behaviour each. `meta/` checks the house and the documents
//! rather than a feature (`meta/json/schema.rs` is docs/json.md's schema, which `meta/json.rs`
//! checks against).
//!
//! The folders are module paths, so a feature's tests run alone with `cargo test --test it
//! exec::`; `.ci/run` picks by them which tests each server version and the musl build run again.

mod support;

mod cli;
mod doctor;
mod exec;
mod history;
mod latch;
mod lock;
mod meta;
mod queue;
mod rounds;
mod semaphore;
mod servers;
mod shared;
