//! What each round of requests looked like, server by server, handed to an optional observer so
//! that callers can report it (`-v`). The engine itself never prints.

use super::nodes::{NodeError, Reply};
use super::Redlock;
use crate::clock::BootInstant;
use std::time::Duration;

/// One round: the same request sent to every server in parallel.
pub(crate) struct Round<'a> {
    /// `acquire`, `release`, `extend`, `force-release`, `inspect` or `list`.
    pub(crate) step: &'static str,
    /// The key, or the prefix for `list`.
    pub(crate) key: &'a str,
    pub(crate) replies: Vec<ServerReply>,
    /// Servers that said yes (set, deleted, extended, held).
    pub(crate) yes: usize,
    pub(crate) quorum: usize,
    /// From the first request written to the last reply (or time-out).
    pub(crate) elapsed: Duration,
    /// The validity obtained, for the steps that obtain one.
    pub(crate) validity: Option<Duration>,
}

/// One server's part in a round. `server` is the redacted URL.
pub(crate) struct ServerReply {
    pub(crate) server: String,
    /// What the server answered, in a word or two, or why it did not count.
    pub(crate) outcome: Result<String, NodeError>,
    pub(crate) latency: Duration,
}

/// Called once per round, after the round, with what happened.
pub(crate) type Observer = Box<dyn FnMut(&Round<'_>) + Send>;

impl Redlock {
    /// Reports every later round to `observer`.
    pub(crate) fn set_observer(&mut self, observer: Observer) {
        self.observer = Some(observer);
    }

    /// Hands a round to the observer, if there is one. `describe` puts one answer in words and
    /// says whether it counts as a yes.
    pub(super) fn observe<T>(
        &mut self,
        step: &'static str,
        key: &str,
        replies: &[Reply<T>],
        started: BootInstant,
        validity: Option<Duration>,
        describe: impl Fn(&T) -> (String, bool),
    ) {
        let Some(observer) = self.observer.as_mut() else {
            return;
        };
        let mut yes = 0;
        let mut last = started;
        let replies = self
            .nodes
            .servers()
            .iter()
            .zip(replies)
            .map(|(server, reply)| {
                last = last.max(reply.at);
                ServerReply {
                    server: server.display.clone(),
                    outcome: match &reply.result {
                        Ok(value) => {
                            let (text, counts) = describe(value);
                            yes += usize::from(counts);
                            Ok(text)
                        }
                        Err(err) => Err(err.clone()),
                    },
                    latency: reply.latency,
                }
            })
            .collect();
        observer(&Round {
            step,
            key,
            replies,
            yes,
            quorum: super::quorum::quorum(self.nodes.len()),
            elapsed: last.since(started),
            validity,
        });
    }
}
