//! How long a lock waiter pauses before it asks again: the house's one retry pause
//! (`crate::retry`) stretched by its place in the queue, cut short for the head when the
//! holder's observed TTL runs out, and the back-off after a split vote. These are the queue's
//! protocol, not a second retry policy: the stretch keeps a crowd's polls to about ln(W) per
//! retry delay, and the queue keeps a waiter's place for a few of its longest pauses
//! (`longest_pause`).

use crate::lock::vote::Seen;
use crate::retry::{spread, Retry};
use std::time::Duration;

/// After the holder's observed TTL runs out, a random part of this before asking again.
const EXPIRY_SPREAD: Duration = Duration::from_millis(5);
/// A queued waiter's own schedule (for a lost notification) is the retry pause times its place
/// in the queue plus one, up to this factor: the crowd's polls add up to about ln(W) per retry
/// delay instead of W.
const RANK_STRETCH_MAX: u32 = 16;
/// A one-shot acquire that found the lock free but lost a split vote tries this many more times.
const SPLIT_RETRIES: u32 = 2;

/// The longest pause of a queued waiter's schedule: the longest retry pause, stretched as far
/// as a place in the queue stretches it. The queue keeps a waiter's place for a few of these.
pub(super) fn longest_pause(retry: Retry) -> Duration {
    retry.longest_pause() * RANK_STRETCH_MAX
}

/// The pause after an attempt that saw `seen`, the `splits`-th split vote in a row, by a waiter
/// that is `head` of the queue (or not queued: the schedule of a waiter without a queue). The
/// head also wakes when the holder's observed TTL runs out, since an expiry announces nothing.
pub(super) fn pause(retry: Retry, seen: &Seen, splits: u32, head: bool) -> Duration {
    let mut pause = if seen.split && head {
        split_backoff(seen, splits)
    } else {
        let stretch = seen
            .rank
            .map_or(1, |rank| (rank + 1).min(u64::from(RANK_STRETCH_MAX)) as u32);
        retry.pause() * stretch
    };
    if let Some(left) = seen.ttl.filter(|_| head) {
        pause = pause.min(left + spread(EXPIRY_SPREAD));
    }
    pause
}

/// The pause before a one-shot acquire (no `--wait`) tries again after an attempt that saw
/// `seen`, the `splits`-th split vote in a row: only when it found the lock free but lost a
/// split vote, up to `SPLIT_RETRIES` times.
pub(super) fn one_shot_retry(seen: &Seen, splits: u32) -> Option<Duration> {
    (seen.split && splits <= SPLIT_RETRIES).then(|| split_backoff(seen, splits))
}

/// After a split vote: the contender that won the most servers (the same one in everybody's
/// view, ties going to the smallest token) asks again once the others' clean-ups are through,
/// about one round later; the others back off for a random, growing multiple of a round, by
/// which time the favourite normally holds the lock.
fn split_backoff(seen: &Seen, splits: u32) -> Duration {
    let round = seen.round.max(Duration::from_millis(1));
    if seen.favourite {
        round
    } else {
        round * 2 + spread(round * (4 << splits.min(6)))
    }
}
