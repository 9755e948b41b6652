//! `-v`'s rendering of one round, server by server: aligned text for people, an object with every
//! server's outcome and latency for a JSON log (`RoundEvent`).

use crate::human;
use crate::lock::{NodeError, Round};
use crate::schema::{documented, ms, ms_micros};

pub(crate) fn round_text(round: &Round<'_>) -> String {
    let mut text = format!(
        "redlock: {} {}: {} of {} servers in {} (quorum {})",
        round.step,
        round.key,
        round.yes,
        round.replies.len(),
        human::duration(round.elapsed),
        round.quorum
    );
    if let Some(validity) = round.validity {
        text.push_str(&format!(", validity {} ms", validity.as_millis()));
    }
    let width = round
        .replies
        .iter()
        .map(|r| r.server.chars().count())
        .max()
        .unwrap_or(0);
    for reply in &round.replies {
        let outcome = match &reply.outcome {
            Ok(text) => text.clone(),
            // A server set up wrong is not down: it will not come back by itself.
            Err(NodeError::Down(why)) if crate::server::cannot_vote(why) => {
                format!("cannot vote: {why}")
            }
            Err(NodeError::Down(why)) => format!("down: {why}"),
            Err(err) => err.to_string(),
        };
        text.push_str(&format!(
            "\nredlock:   {:<width$}  {:>8}  {outcome}",
            reply.server,
            human::latency(reply.latency),
        ));
    }
    text
}

documented! {
    /// With `-v`: one per round of requests.
    pub(crate) struct RoundEvent<'a> {
        /// `acquire`, `fence`, `release`, `extend`, `keep`, `force-release`, `inspect` or `list`
        step: &'a str,
        /// the key (a semaphore's stem, the prefix for `list`)
        key: &'a str,
        /// servers that said yes (set, deleted, extended, held)
        yes: usize,
        /// servers a verdict needs
        quorum: usize,
        /// from the first request to the last reply
        elapsed_ms: f64,
        /// the validity obtained, for the steps that obtain one
        validity_ms: Option<u64>,
        /// servers configured
        servers: usize,
        /// each server's answer
        replies: Vec<ReplyEntry<'a>>,
    }
}

documented! {
    /// One server's answer in a round.
    pub(crate) struct ReplyEntry<'a> {
        /// the server, redacted
        server: &'a str,
        /// what it answered, in a word or two
        outcome: Option<&'a str>,
        /// why it did not count
        error: Option<String>,
        /// how long it took
        latency_ms: f64,
    }
}

impl<'a> RoundEvent<'a> {
    pub(crate) fn of(round: &'a Round<'a>) -> RoundEvent<'a> {
        let replies = round
            .replies
            .iter()
            .map(|reply| ReplyEntry {
                server: &reply.server,
                outcome: reply.outcome.as_deref().ok(),
                error: reply.outcome.as_ref().err().map(ToString::to_string),
                latency_ms: ms_micros(reply.latency),
            })
            .collect();
        RoundEvent {
            step: round.step,
            key: round.key,
            yes: round.yes,
            quorum: round.quorum,
            elapsed_ms: ms_micros(round.elapsed),
            validity_ms: round.validity.map(ms),
            servers: round.replies.len(),
            replies,
        }
    }
}
