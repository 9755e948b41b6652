//! A request sequence run without blocking: the closure a round runs for a server
//! (`Fn(&mut Session) -> RedisResult<T>`, written as blocking calls) is run again from the
//! start each time one more reply is in, against a session that replays the replies it already
//! got. When the closure asks for a reply not yet in, the session records the request and fails
//! it, and this run's result is discarded: the request goes out, and the closure runs again once
//! its reply is back. So one poll loop can carry every server's closure at once, and the same
//! closures serve a blocking session (doctor's) as they are. This file keeps the record of what
//! the requests got; a run over it is `Session::replay`'s.
//!
//! This relies on a round's closures being pure functions of their replies (they build their
//! requests from captured values and what the servers answered, and touch nothing else), which
//! every round's is; a request that differs on a re-run is caught and fails that server's
//! request instead of being sent.

use super::failure::{WireAnswer, WireFailure};
use redis::{RedisResult, Value};

/// One request as it goes out: packed commands, of which replies after the first `skip` (of
/// `count`) are wanted, and where on a cluster they go.
#[derive(Clone)]
pub(crate) struct Request {
    pub(crate) packed: Vec<u8>,
    pub(crate) skip: usize,
    pub(crate) count: usize,
    pub(crate) route: Route,
}

/// Where a request goes on a cluster, whose relay (relay.rs) routes it: to the master of its
/// first key's slot, or, for what visits every master (`Session::each_node`), first the list
/// of masters, then each by name. A single server's requests all go `ByKey`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Route {
    #[default]
    ByKey,
    /// No command: the names of the cluster's masters, as an array.
    Masters,
    /// The master with this name (`host:port`), as the commands are, without redirections.
    Node(String),
}

/// What a closure's requests got so far, in order.
#[derive(Default)]
pub(crate) struct Replay {
    /// The server is a Redis Cluster: the closure names its keys for hash slots.
    cluster: bool,
    answered: Vec<(Request, WireAnswer)>,
    next: usize,
    /// The first request whose reply is not in yet: this run's result does not count.
    wanted: Option<Request>,
}

/// What running the closure once more gives.
pub(crate) enum Step<T> {
    /// Send this and run again with its reply.
    Send(Request),
    Done(RedisResult<T>),
}

impl Replay {
    /// A record for a server that is a cluster (`cluster`) or not.
    pub(crate) fn new(cluster: bool) -> Replay {
        Replay {
            cluster,
            ..Replay::default()
        }
    }

    pub(super) fn cluster(&self) -> bool {
        self.cluster
    }

    /// The next reply for a request, from the record, or `None` (after recording what the
    /// request was) when it has not come yet.
    pub(super) fn reply(
        &mut self,
        packed: &[u8],
        (skip, count): (usize, usize),
        route: Route,
    ) -> RedisResult<Vec<Value>> {
        if self.wanted.is_some() {
            return Err(pending());
        }
        match self.answered.get(self.next) {
            Some((sent, _)) if sent.packed != packed || sent.route != route => {
                Err(std::io::Error::other(
                    "internal error: a request changed when its closure ran again",
                )
                .into())
            }
            Some((_, answer)) => {
                self.next += 1;
                answer.clone().map_err(|failure| failure.error())
            }
            None => {
                self.wanted = Some(Request {
                    packed: packed.to_vec(),
                    skip,
                    count,
                    route,
                });
                Err(pending())
            }
        }
    }

    /// Ends a run of the closure (`Session::replay`) that gave `result`: the next run starts
    /// from the first reply again.
    pub(super) fn rewind<T>(&mut self, result: RedisResult<T>) -> Step<T> {
        self.next = 0;
        match self.wanted.clone() {
            Some(request) => Step::Send(request),
            None => Step::Done(result),
        }
    }

    /// The reply (or failure) to the request the last run asked to send.
    pub(crate) fn answer(&mut self, answer: WireAnswer) {
        if let Some(request) = self.wanted.take() {
            self.answered.push((request, answer));
        }
    }

    /// Fails the request the last run asked to send (a timeout, a broken connection).
    pub(crate) fn fail(&mut self, failure: WireFailure) {
        self.answer(Err(failure));
    }

    /// Whether any request got a reply (not a failure): a connection that answered in this
    /// round was alive.
    pub(crate) fn any_reply(&self) -> bool {
        self.answered.iter().any(|(_, answer)| answer.is_ok())
    }
}

/// The error a request waiting for its reply gets; never seen outside `Session::replay`.
fn pending() -> redis::RedisError {
    std::io::Error::other("internal: reply not in yet").into()
}
