//! What a user types and reads: usage errors, man pages and the log's fields (`usage`), verbosity,
//! force-release and status listings (`ops`), listings on a server shared with an application
//! (`listing`), and `status --watch` on a terminal (`watch`).

mod listing;
mod ops;
mod usage;
mod watch;
