//! Who gets the replies to a request a wire carries (wire.rs): the round's entry, a late task,
//! nobody, or, for what is not a reply, the waiter listening.

/// Who gets a request's replies.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Sink {
    /// The connection's set-up: an error reply fails the connection.
    Setup,
    /// The request of the round's entry with this index.
    Round(usize),
    /// A request a round stopped waiting for, now the late task with this id's
    /// (`lock::nodes::poll`).
    Late(u64),
    /// Nobody: a clean-up's reply, or a late one nobody waits for.
    Discard,
    /// Not a reply: a message published on a channel the connection subscribed to.
    Pushed,
}
