//! Waiting acquires and their queue: wake-ups (`waits`), crowds of waiters (`crowd`), the
//! hand-over to the head of the queue (`handover`), and what the queue leaves behind (`leftovers`).

mod crowd;
mod handover;
mod leftovers;
mod waits;
