//! One round of requests to every server: the quorum (`quorum`), bad networks through the fault
//! proxy (`faults`), the poll loop (`poll`), the round trips each operation costs
//! (`round_trips`), and the fault margin a run says it ended with (`margin`).

mod faults;
mod margin;
mod poll;
mod quorum;
mod round_trips;
