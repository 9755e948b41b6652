//! Why a wire (wire.rs) failed, kept as data: a round's closure that is run again over the
//! replies so far (replay.rs) meets the same error each time, as it would have on a blocking
//! connection.

use redis::Value;
use std::io;

/// Why a connection failed: enough to rebuild the error a request would have met.
#[derive(Clone, Debug)]
pub(crate) struct Failure {
    kind: io::ErrorKind,
    message: String,
}

impl Failure {
    pub(crate) fn new(kind: io::ErrorKind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
        }
    }

    pub(crate) fn timed_out() -> Failure {
        Failure::new(io::ErrorKind::TimedOut, "timed out")
    }

    pub(crate) fn of(err: &io::Error) -> Failure {
        let message = match err.kind() {
            io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
            io::ErrorKind::UnexpectedEof => "the server closed the connection".to_string(),
            _ => err.to_string(),
        };
        Failure::new(err.kind(), message)
    }

    /// The connection was closed under us, as opposed to a server that is slow or refuses.
    pub(crate) fn dropped(&self) -> bool {
        matches!(
            self.kind,
            io::ErrorKind::BrokenPipe
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::UnexpectedEof
                | io::ErrorKind::NotConnected
        )
    }

    pub(crate) fn error(&self) -> redis::RedisError {
        io::Error::new(self.kind, self.message.clone()).into()
    }
}

/// What became of one request: its replies (all of them, the skipped ones left out), or the
/// connection's failure before they all came.
pub(crate) type Answer = Result<Vec<Value>, Failure>;
