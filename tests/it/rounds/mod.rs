//! One round of requests to every server: the quorum (`quorum`), bad networks through the fault
//! proxy (`faults`), the poll loop (`poll`), and the round trips each operation costs
//! (`round_trips`).

mod faults;
mod poll;
mod quorum;
mod round_trips;
