//! A thread-per-server round's open connection to one server, kept between rounds, and why one
//! whose reply is late still carries the follow-up to its round.

use crate::server::Session;

/// An open connection, and whether the reply to its last request is late.
///
/// A connection whose reply is late is kept for one follow-up (`round_on`) rather than
/// replaced, because the late request may still be applied: a failed attempt's SET, most of
/// all. The compare-and-delete that cleans up after it then goes out on the same connection at
/// once, without waiting for the late reply, and a server applies one connection's commands in
/// order, so the delete is applied after that SET whenever the SET is, however slow the network.
/// A new connection could not promise that (its delete may overtake the SET still on its way),
/// and needs a round trip of its own (AUTH, TLS) before it can send anything, which a slow
/// server may never give it in time: the failed attempt's key would then outlive it for the
/// whole TTL.
///
/// Reusing it is safe because the connection counts the replies it gave up on and discards
/// them when they arrive (server/blocking.rs), so no answer is taken for another's. And its timeout was the read's,
/// never a half-written request's: a write blocks only on a full send buffer, and a connection
/// carries at most two unanswered requests (the late one and its follow-up; the next ordinary
/// round replaces it), a few hundred bytes, far below the smallest send buffer the kernel allows.
pub(crate) struct OpenConnection {
    pub(super) connection: Session,
    pub(super) late: bool,
}
