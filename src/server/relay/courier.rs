//! What a relay's threads hand back to the wire (mod.rs), and how: each outcome on a channel,
//! then a byte on a socket pair that wakes the loop's poll(2).

use crate::server::failure::WireAnswer;
use redis::Value;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::mpsc::Sender;
use std::sync::Arc;

/// Stack of a relay's threads: plenty for the redis client, far below the 2 MiB default.
pub(super) const STACK: usize = 256 * 1024;

/// What comes back, in the order the wire must see it.
pub(in crate::server) enum Outcome {
    /// The answer to the oldest order not answered yet.
    Answer(WireAnswer),
    /// A message on the channel subscribed to (`["message", channel, payload]`).
    Message(Value),
}

/// The thread's way back: the outcome, then a byte that wakes the loop's poll(2).
pub(super) struct Courier {
    pub(super) sent: Sender<Outcome>,
    pub(super) ringer: Arc<UnixStream>,
}

impl Clone for Courier {
    fn clone(&self) -> Courier {
        Courier {
            sent: self.sent.clone(),
            ringer: Arc::clone(&self.ringer),
        }
    }
}

impl Courier {
    pub(super) fn hand(&self, outcome: Outcome) {
        if self.sent.send(outcome).is_ok() {
            // A full socket already holds a wake-up; a closed one, nobody to wake.
            let _ = (&*self.ringer).write(&[1]);
        }
    }
}
