//! One server's vote in an attempt, and what the servers showed besides their votes, merged into
//! one view: who holds the lock, how soon it may free, our place in the queue, and whether
//! contenders split the votes. The wait loop plans its next attempt from it, and a refusal
//! names the holder from it.

use super::nodes::Reply;
use super::quorum;
use std::collections::BTreeMap;
use std::time::Duration;

/// One server's answer to an attempt.
pub(crate) struct Vote {
    /// The candidate (index into the target's keys) this server set for us.
    pub(crate) won: Option<usize>,
    /// When none: the value of the candidate that frees soonest (strings only).
    pub(crate) value: Option<String>,
    pub(crate) pttl: i64,
    /// Our place in this server's queue of waiters (0: next), when we are queued there.
    pub(crate) rank: Option<u64>,
    /// The key's type when another client keeps a non-string there.
    pub(crate) foreign: Option<String>,
    /// With `--fence`: the fencing counter this server had when it granted.
    pub(crate) counter: u64,
    /// The number of slots this server's limit key records for the semaphore, when it is not
    /// the attempt's: the server set nothing (limit.rs).
    pub(crate) other_limit: Option<usize>,
}

/// What the refusing servers showed of the holders.
#[derive(Default)]
pub(crate) struct Seen {
    /// The value most refusing servers hold (for a semaphore, of the slot that frees soonest).
    pub(crate) holder: Option<String>,
    /// The shortest remaining TTL of a key that is not ours; zero if one vanished meanwhile.
    pub(crate) ttl: Option<Duration>,
    /// Our best place in the servers' queues of waiters, when we joined one.
    pub(crate) rank: Option<u64>,
    /// The type of a non-string key that refused us, on the most servers.
    pub(crate) foreign: Option<String>,
    /// Nobody won a mutex: every server answered, but no token, ours or another's, is on a
    /// quorum of them. Contenders that asked at once split the votes. (A semaphore's refusals
    /// show one slot each, so a split there is not told from a full semaphore: it is retried
    /// on the waiter's schedule.)
    pub(crate) split: bool,
    /// After a split: whether we won the most servers (ties: the smallest token), which every
    /// contender that saw the same votes agrees on.
    pub(crate) favourite: bool,
    /// How long the round took.
    pub(crate) round: Duration,
}

impl Seen {
    /// Merges the votes of one attempt made with token `ours` at a target of `width` keys.
    pub(super) fn from_votes(replies: &[Reply<Vote>], ours: &str, width: usize) -> Seen {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let mut foreign: BTreeMap<&str, usize> = BTreeMap::new();
        let mut seen = Seen::default();
        let mut answered = 0;
        for vote in replies
            .iter()
            .filter_map(|reply| reply.result.as_ref().ok())
        {
            answered += 1;
            seen.rank = match (seen.rank, vote.rank) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if vote.won.is_some() {
                *counts.entry(ours).or_default() += 1;
                continue;
            }
            if let Some(kind) = &vote.foreign {
                *foreign.entry(kind).or_default() += 1;
            }
            if let Some(value) = &vote.value {
                *counts.entry(value).or_default() += 1;
            }
            if let Ok(ms) = u64::try_from(vote.pttl) {
                let left = Duration::from_millis(ms);
                seen.ttl = Some(seen.ttl.map_or(left, |t| t.min(left)));
            }
        }
        let widest = counts.values().copied().max().unwrap_or(0);
        // BTreeMap order: the first of the widest is the smallest token.
        seen.favourite = counts
            .iter()
            .find(|(_, count)| **count == widest)
            .is_some_and(|(token, _)| *token == ours);
        // A server that did not answer could still complete someone's quorum.
        seen.split =
            width == 1 && widest + (replies.len() - answered) < quorum::quorum(replies.len());
        seen.holder = counts
            .into_iter()
            .filter(|(token, _)| *token != ours)
            .max_by_key(|(_, count)| *count)
            .map(|(token, _)| token.to_string());
        seen.foreign = foreign
            .into_iter()
            .max_by_key(|(_, count)| *count)
            .map(|(kind, _)| kind.to_string());
        seen
    }
}
