//! Waiting for a condition, polled, within a bound: the one way the tests (and the benchmark's
//! launchers, which include this file) wait for something to happen.

use std::time::{Duration, Instant};

/// Waits for `condition` to hold, polling; panics with `what` after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if condition() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("timed out after {limit:?} waiting for {what}");
}
