//! The candidates of one attempt (attempt.rs): the order in which its servers try them, when the
//! votes in hand decide the round (its step 3), and which candidate a quorum set (step 2).
//!
//! A semaphore's servers may disagree (one had slot 0 taken and set slot 1, the others set slot
//! 0): the order of the keys is the same on every server of a round (so servers that agree on
//! which slots are free pick the same one) and rotated at random on every attempt (so no slot is
//! always tried first, and a slot held for long does not make every waiter queue behind it).

use crate::lock::nodes::{NodeError, Reply};
use crate::lock::vote::Vote;

/// The order in which this attempt's servers try the `width` candidates: all servers the same,
/// rotated by a random offset.
pub(super) fn candidate_order(width: usize) -> Vec<usize> {
    let offset = random_below(width);
    (0..width).map(|i| (offset + i) % width).collect()
}

/// Whether the replies in hand settle the round (step 3): a quorum for one candidate, or no
/// candidate that can still reach one, from at least a quorum of answers; or a semaphore of
/// another size, which refuses the attempt.
pub(super) fn decided(
    replies: &[Option<Reply<Vote>>],
    needed: usize,
    servers: usize,
    width: usize,
) -> bool {
    let mut counts = vec![0usize; width];
    let mut answered = 0;
    for reply in replies.iter().flatten() {
        match &reply.result {
            // The attempt is refused whatever the others say (limit.rs).
            Ok(vote) if vote.other_limit.is_some() => return true,
            Ok(vote) => {
                answered += 1;
                if let Some(index) = vote.won {
                    counts[index] += 1;
                }
            }
            Err(NodeError::ForeignType) => answered += 1,
            Err(NodeError::Down(_) | NodeError::NotWaitedFor) => {}
        }
    }
    let best = counts.into_iter().max().unwrap_or(0);
    best >= needed || (best + (servers - answered) < needed && answered >= needed)
}

/// The candidate a quorum of servers set, if any: each server sets at most one per round, so at
/// most one can have a quorum.
pub(super) fn winning_candidate(
    replies: &[Reply<Vote>],
    needed: usize,
    width: usize,
) -> Option<usize> {
    let mut counts = vec![0usize; width];
    for reply in replies {
        if let Ok(Vote {
            won: Some(index), ..
        }) = &reply.result
        {
            counts[*index] += 1;
        }
    }
    counts.iter().position(|&count| count >= needed)
}

/// A uniformly random number in [0, n).
fn random_below(n: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    (u64::from_le_bytes(bytes) % n as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::BootInstant;
    use std::time::Duration;

    fn reply(won: Option<usize>) -> Option<Reply<Vote>> {
        Some(Reply {
            result: Ok(Vote {
                won,
                value: None,
                pttl: -1,
                rank: None,
                foreign: None,
                counter: 0,
                other_limit: None,
            }),
            at: BootInstant::now(),
            latency: Duration::ZERO,
        })
    }

    fn down() -> Option<Reply<Vote>> {
        Some(Reply {
            result: Err(NodeError::Down("refused".into())),
            at: BootInstant::now(),
            latency: Duration::ZERO,
        })
    }

    #[test]
    fn a_round_is_decided_by_a_quorum_for_one_key_or_none_left_possible() {
        // Mutex, 5 servers: 3 yes decide; 3 no (with 3 answers) decide; 2 no do not.
        assert!(decided(
            &[reply(Some(0)), reply(Some(0)), reply(Some(0)), None, None],
            3,
            5,
            1
        ));
        assert!(decided(
            &[reply(None), reply(None), reply(None), None, None],
            3,
            5,
            1
        ));
        assert!(!decided(
            &[reply(None), reply(None), None, None, None],
            3,
            5,
            1
        ));
        // Down servers are not answers: too few answers wait for the rest.
        assert!(!decided(
            &[reply(None), down(), down(), None, None],
            3,
            5,
            1
        ));
        // A semaphore: slots 0, 1, 0 with 2 silent: slot 0 can still reach 3.
        assert!(!decided(
            &[reply(Some(0)), reply(Some(1)), reply(Some(0)), None, None],
            3,
            5,
            2
        ));
        // Slots 0, 1, 1, 0 with one silent: either can still; with a refusal, neither.
        let split = |last| {
            [
                reply(Some(0)),
                reply(Some(1)),
                reply(Some(1)),
                reply(Some(0)),
                last,
            ]
        };
        assert!(!decided(&split(None), 3, 5, 2));
        assert!(decided(&split(reply(None)), 3, 5, 2));
    }

    #[test]
    fn at_most_one_candidate_wins() {
        let replies: Vec<Reply<Vote>> = [reply(Some(1)), reply(Some(1)), reply(Some(0))]
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(winning_candidate(&replies, 2, 2), Some(1));
        assert_eq!(winning_candidate(&replies, 3, 2), None);
    }

    #[test]
    fn the_order_is_a_rotation_of_every_candidate() {
        for width in [1, 2, 7] {
            let mut order = candidate_order(width);
            order.sort();
            assert_eq!(order, (0..width).collect::<Vec<_>>());
        }
    }
}
