//! What a user types and reads: usage errors, man pages and the log's fields (`usage`), verbosity,
//! force-release and status listings (`ops`), and `status --watch` on a terminal (`watch`).

mod ops;
mod usage;
mod watch;
