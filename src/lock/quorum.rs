//! The arithmetic of Redlock: how many votes make a majority, how long a lock stays valid, and
//! the count of one round's votes.

use super::nodes::{NodeError, Reply};
use crate::clock::BootInstant;
use std::time::Duration;

/// Votes needed out of `servers` distinct servers: a strict majority.
pub(crate) fn quorum(servers: usize) -> usize {
    servers / 2 + 1
}

/// Allowance for the servers' clocks running faster than ours: 1% of the TTL plus 2 ms, as the
/// Redlock description suggests.
pub(crate) fn drift(ttl: Duration) -> Duration {
    ttl / 100 + Duration::from_millis(2)
}

/// What is left of `ttl` after `elapsed` and the drift allowance; `None` when nothing is, which
/// is a failed acquisition, never a wrapped-around huge number.
pub(crate) fn validity(ttl: Duration, elapsed: Duration) -> Option<Duration> {
    ttl.checked_sub(elapsed)
        .and_then(|left| left.checked_sub(drift(ttl)))
        .filter(|left| !left.is_zero())
}

/// The shortest whole-millisecond TTL that leaves some validity after `elapsed`: the inverse of
/// `validity`, so that a check "is this TTL long enough" and the arithmetic it guards cannot
/// disagree.
pub(crate) fn shortest_ttl_leaving(elapsed: Duration) -> Duration {
    // validity > 0  <=>  ttl - ttl/100 - 2ms > elapsed  <=>  ttl > (elapsed + 2ms) / 0.99;
    // start just below that and step up past any rounding of the integer division.
    let estimate = (elapsed + Duration::from_millis(2)).as_millis() * 100 / 99;
    let mut ttl = Duration::from_millis(estimate.saturating_sub(2) as u64);
    while validity(ttl, elapsed).is_none() {
        ttl += Duration::from_millis(1);
    }
    ttl
}

/// How a round of votes ended, from the counts alone.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A quorum said yes.
    Yes,
    /// Enough servers said no that a quorum of yes is impossible.
    No,
    /// Neither: too many servers did not answer to tell.
    Unknown,
}

pub(crate) fn verdict(servers: usize, yes: usize, no: usize) -> Verdict {
    let needed = quorum(servers);
    if yes >= needed {
        Verdict::Yes
    } else if no > servers - needed {
        Verdict::No
    } else {
        Verdict::Unknown
    }
}

/// Counts of one round: yes votes (and when each came), no votes, and silent servers.
pub(crate) struct Tally {
    pub(crate) yes: usize,
    pub(crate) no: usize,
    yes_times: Vec<BootInstant>,
    pub(crate) last_at: Option<BootInstant>,
}

impl Tally {
    pub(crate) fn answered(&self) -> usize {
        self.yes + self.no
    }

    pub(crate) fn verdict(&self, servers: usize) -> Verdict {
        verdict(servers, self.yes, self.no)
    }

    /// When the vote that completed a quorum of `needed` arrived (T2).
    pub(crate) fn quorum_reached_at(&self, needed: usize) -> Option<BootInstant> {
        let mut times = self.yes_times.clone();
        times.sort();
        times.get(needed.checked_sub(1)?).copied()
    }
}

/// Whether the replies in so far settle a round's verdict whatever the others answer: a quorum
/// said yes. A refusal does not settle it: the operations decided early (a release, an
/// extension, a fence's write-back) then wait for every server (within --timeout), so that what
/// they report of a failure, such as a copy deleted or extended on a minority, matches what they
/// did.
pub(crate) fn settled<T>(replies: &[Option<Reply<T>>], is_yes: impl Fn(&T) -> bool) -> bool {
    let yes = replies
        .iter()
        .flatten()
        .filter(|reply| matches!(&reply.result, Ok(value) if is_yes(value)))
        .count();
    yes >= quorum(replies.len())
}

/// The replies of a round decided early, each server it did not wait for given
/// `Reply::not_waited_for` (`started` being the round's start).
pub(crate) fn waited<T>(replies: Vec<Option<Reply<T>>>, started: BootInstant) -> Vec<Reply<T>> {
    replies
        .into_iter()
        .map(|reply| reply.unwrap_or_else(|| Reply::not_waited_for(started)))
        .collect()
}

/// Counts `replies`: `is_yes` says which answers are a yes; any other answer is a no, and a
/// server that did not answer is neither.
pub(crate) fn tally<T>(replies: &[Reply<T>], is_yes: impl Fn(&T) -> bool) -> Tally {
    let mut tally = Tally {
        yes: 0,
        no: 0,
        yes_times: Vec::new(),
        last_at: None,
    };
    for reply in replies {
        tally.last_at = tally.last_at.max(Some(reply.at));
        match &reply.result {
            Ok(value) if is_yes(value) => {
                tally.yes += 1;
                tally.yes_times.push(reply.at);
            }
            Ok(_) | Err(NodeError::ForeignType) => tally.no += 1,
            Err(NodeError::Down(_) | NodeError::NotWaitedFor) => {}
        }
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quorum_is_a_strict_majority() {
        assert_eq!(quorum(1), 1);
        assert_eq!(quorum(2), 2);
        assert_eq!(quorum(3), 2);
        assert_eq!(quorum(4), 3);
        assert_eq!(quorum(5), 3);
        assert_eq!(quorum(6), 4);
    }

    #[test]
    fn validity_subtracts_elapsed_and_drift() {
        let ttl = Duration::from_secs(10);
        // drift = 100 ms + 2 ms
        assert_eq!(
            validity(ttl, Duration::from_millis(8)),
            Some(Duration::from_millis(10_000 - 8 - 102))
        );
        assert_eq!(validity(ttl, Duration::from_millis(9_898)), None);
        assert_eq!(validity(ttl, Duration::from_secs(11)), None);
        assert_eq!(validity(Duration::from_millis(2), Duration::ZERO), None);
    }

    #[test]
    fn shortest_ttl_is_the_inverse_of_validity() {
        for elapsed_ms in [0, 1, 7, 200, 400, 999, 60_000] {
            let elapsed = Duration::from_millis(elapsed_ms);
            let ttl = shortest_ttl_leaving(elapsed);
            assert!(validity(ttl, elapsed).is_some(), "{ttl:?}");
            assert!(validity(ttl - Duration::from_millis(1), elapsed).is_none());
        }
    }

    #[test]
    fn verdict_separates_no_from_unknown() {
        assert_eq!(verdict(5, 3, 0), Verdict::Yes);
        assert_eq!(verdict(5, 2, 3), Verdict::No);
        // Two no, one yes, two silent: the silent two could still make a quorum of yes.
        assert_eq!(verdict(5, 1, 2), Verdict::Unknown);
        assert_eq!(verdict(1, 0, 1), Verdict::No);
        assert_eq!(verdict(1, 0, 0), Verdict::Unknown);
        assert_eq!(verdict(4, 2, 2), Verdict::No);
        assert_eq!(verdict(4, 2, 1), Verdict::Unknown);
    }
}
