//! The values a lock key holds other than a holder's token: a release's reservation for the
//! waiter it woke, and the mark of shared holders. Values, not keys, but named here so that the
//! scripts and `status` agree on them.

/// The value a release leaves in a lock key for the waiter it woke: this, then the waiter.
pub(crate) const RESERVATION: &str = "next:";

/// The value of a lock key while shared holders hold it (their tokens are in `readers`). Any
/// other client sees a lock held by someone, which it is.
pub(crate) const SHARED: &str = "redlock:shared";

/// Whether a lock key's value is a release's reservation rather than a holder's token.
pub(crate) fn is_reservation(value: &str) -> bool {
    value.starts_with(RESERVATION)
}

#[cfg(test)]
mod tests {
    use super::super::lock::SEPARATOR;
    use super::*;

    #[test]
    fn a_reservation_and_the_shared_mark_are_told_from_a_token() {
        assert!(!SHARED.contains(SEPARATOR) && !is_reservation(SHARED));
        assert!(is_reservation("next:abc"));
        assert!(!is_reservation("0123abcd:host:1:2"));
    }
}
