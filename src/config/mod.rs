//! From what the user typed to what the lock needs: servers parsed and de-duplicated, the
//! target (a mutex or a semaphore) built, and every lock-taking option checked against the
//! others, one message per rule. Errors here are usage errors (64) and happen before anything is
//! sent to a server (but for the one question `aliases` may ask).
//!
//! The servers and the options every command shares are in `servers`, one server listed under
//! two names in `aliases`, what is read from files and the environment to be let in (password,
//! TLS) in `credentials`, lock and latch names in `target`, what a TTL must leave in `ttl`, and
//! each command's own options in `commands`.

mod aliases;
mod commands;
mod credentials;
mod servers;
mod target;
mod ttl;

pub(crate) use commands::check_hold;
pub(crate) use servers::Config;
pub(crate) use target::limit_mismatch;
