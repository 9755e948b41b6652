//! How big a stress-sized test is: small by default, so that `cargo test` and each CI stage stay
//! short, and full with `REDLOCK_TEST_FULL=1` (docs/contributing.md). A small run asserts the
//! same things as a full one, over fewer processes or rounds; the full size is for a change to
//! the code those tests stress.

/// `full` with `REDLOCK_TEST_FULL=1` in the environment, else `small`.
pub fn stress(small: usize, full: usize) -> usize {
    if std::env::var_os("REDLOCK_TEST_FULL").is_some_and(|v| v == "1") {
        full
    } else {
        small
    }
}
