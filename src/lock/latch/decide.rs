//! What a latch's first round decides before anything is created (the module comment's rules 5
//! and 6): the count a majority of all servers holds, whether the latch may be created where it
//! is missing, or why not. Pure, so that each case is a unit test.

use super::model::{Found, Touched};
use crate::lock::nodes::Reply;
use crate::lock::quorum;
use std::collections::BTreeMap;
use std::time::Duration;

/// Why a latch round did not succeed, in the terms the exit codes need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LatchError {
    /// The latch exists with another count, on `servers` servers.
    OtherCount { count: u32, servers: usize },
    /// No majority of all the servers holds the latch with one count, and those that did not
    /// answer could not make one: too many lost it (restarted empty). `count` is the count
    /// most of them hold, on `holding` servers.
    NoMajority {
        count: u32,
        holding: usize,
        quorum: usize,
        servers: usize,
    },
    /// A quorum answered, and none of them knows the latch.
    Unknown,
    /// Another client keeps a key of this type at the latch's key.
    Foreign { kind: String },
    /// Too few servers answered properly to decide; `detail` names them and why.
    Unavailable { detail: String },
}

/// What the first round allows the second to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Plan {
    /// A majority of all the servers holds the latch with `count`: the servers that answered
    /// without it get it with that count and `ttl`, the shortest TTL those holders have left
    /// (`None`: none has one, so nothing is given back).
    Repair { count: u32, ttl: Option<Duration> },
    /// No count is on a majority, none other than the one asked for was seen, and the servers
    /// without the latch would make a quorum with those holding that count: it is created where
    /// it is missing, with the caller's count and TTL.
    Create,
    /// The servers that answered settle it: no. What this run wrote is taken back.
    Refuse(LatchError),
    /// Too few servers answered to tell; `holding` hold the count asked for (or, asked none,
    /// the count most hold).
    Undecided { holding: usize },
}

/// What one round showed, server by server.
#[derive(Debug, Default)]
struct LatchTally {
    unanswered: usize,
    absent: usize,
    /// Servers holding the latch, by count, with the shortest TTL among them.
    counts: BTreeMap<u32, (usize, Option<Duration>)>,
    /// The type of another client's key, where one was found.
    foreign: Option<String>,
}

impl LatchTally {
    fn of(replies: &[Reply<Touched>]) -> LatchTally {
        let mut tally = LatchTally::default();
        for reply in replies {
            let copy = match &reply.result {
                Err(_) => {
                    tally.unanswered += 1;
                    continue;
                }
                Ok(Touched::Found(Found::Absent, _)) => {
                    tally.absent += 1;
                    continue;
                }
                Ok(Touched::Found(Found::Foreign(kind), _)) => {
                    tally.foreign = Some(kind.clone());
                    continue;
                }
                Ok(Touched::Found(Found::Latch(copy), _)) | Ok(Touched::Other(copy)) => copy,
            };
            let (holding, ttl) = tally.counts.entry(copy.count).or_default();
            *holding += 1;
            *ttl = match (*ttl, copy.ttl) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        tally
    }

    fn holding(&self, count: u32) -> usize {
        self.counts.get(&count).map_or(0, |(holding, _)| *holding)
    }

    /// The count most servers hold (a tie: the larger, which opens later), and on how many.
    fn most(&self) -> Option<(u32, usize)> {
        self.counts
            .iter()
            .map(|(count, (holding, _))| (*count, *holding))
            .max_by_key(|(count, holding)| (*holding, *count))
    }

    /// A count other than `count` that some server holds, on the most servers.
    fn other_than(&self, count: u32) -> Option<(u32, usize)> {
        self.counts
            .iter()
            .filter(|(other, _)| **other != count)
            .map(|(other, (holding, _))| (*other, *holding))
            .max_by_key(|(other, holding)| (*holding, *other))
    }
}

/// The plan after a first round that created nothing, for a run that asks for `want` (`set`,
/// or `done`/`wait` with `--count`) or for whatever count the latch has (`done`).
pub(super) fn plan(replies: &[Reply<Touched>], want: Option<u32>) -> Plan {
    let servers = replies.len();
    let quorum = quorum::quorum(servers);
    let tally = LatchTally::of(replies);
    let answered = servers - tally.unanswered;
    if let Some((count, holding)) = tally.most().filter(|(_, holding)| *holding >= quorum) {
        return match want {
            Some(want) if want != count => Plan::Refuse(LatchError::OtherCount {
                count,
                servers: holding,
            }),
            _ => Plan::Repair {
                count,
                ttl: tally.counts[&count].1.filter(|ttl| !ttl.is_zero()),
            },
        };
    }
    let foreign = || {
        tally
            .foreign
            .clone()
            .filter(|_| answered >= quorum)
            .map(|kind| Plan::Refuse(LatchError::Foreign { kind }))
    };
    match (want, tally.most()) {
        (Some(want), _) => {
            if let Some((count, servers)) = tally.other_than(want) {
                return Plan::Refuse(LatchError::OtherCount { count, servers });
            }
            let holding = tally.holding(want);
            if tally.absent + holding >= quorum {
                return Plan::Create;
            }
            foreign().unwrap_or(Plan::Undecided { holding })
        }
        (None, None) if answered >= quorum => {
            foreign().unwrap_or(Plan::Refuse(LatchError::Unknown))
        }
        (None, None) => Plan::Undecided { holding: 0 },
        // Every server that did not answer might hold the count most do: a majority may yet.
        (None, Some((_, holding))) if holding + tally.unanswered >= quorum => {
            Plan::Undecided { holding }
        }
        (None, Some((count, holding))) => Plan::Refuse(LatchError::NoMajority {
            count,
            holding,
            quorum,
            servers,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::{LatchCopy, Made};
    use super::*;
    use crate::clock::BootInstant;
    use crate::lock::nodes::NodeError;

    fn latch(count: u32, ttl_s: u64) -> Touched {
        let copy = LatchCopy {
            count,
            ttl: Some(Duration::from_secs(ttl_s)),
            ids: BTreeMap::new(),
        };
        Touched::Found(Found::Latch(copy), Made::default())
    }

    fn replies(touched: Vec<Option<Touched>>) -> Vec<Reply<Touched>> {
        touched
            .into_iter()
            .map(|touched| Reply {
                result: touched.ok_or(NodeError::Down("stopped".into())),
                at: BootInstant::now(),
                latency: Duration::ZERO,
            })
            .collect()
    }

    fn absent() -> Option<Touched> {
        Some(Touched::Found(Found::Absent, Made::default()))
    }

    #[test]
    fn a_majority_of_all_servers_repairs_with_its_count_and_shortest_ttl() {
        let round = replies(vec![
            absent(),
            absent(),
            Some(latch(3, 60)),
            Some(latch(3, 50)),
            Some(latch(3, 70)),
        ]);
        let repair = Plan::Repair {
            count: 3,
            ttl: Some(Duration::from_secs(50)),
        };
        assert_eq!(plan(&round, None), repair);
        assert_eq!(plan(&round, Some(3)), repair);
        assert_eq!(
            plan(&round, Some(2)),
            Plan::Refuse(LatchError::OtherCount {
                count: 3,
                servers: 3
            })
        );
    }

    #[test]
    fn a_plurality_of_those_that_answered_is_no_majority() {
        // Two servers given count 2 by a refused set (as before the fix), one restarted empty,
        // one stopped, one holding the real count 3: the two are no majority, and the one
        // stopped might make them one, so nothing is given back.
        let round = replies(vec![
            Some(latch(2, 60)),
            Some(latch(2, 60)),
            absent(),
            None,
            Some(latch(3, 60)),
        ]);
        assert_eq!(plan(&round, None), Plan::Undecided { holding: 2 });
        // With every server answering, two of five is no majority, and never will be.
        let round = replies(vec![
            Some(latch(2, 60)),
            Some(latch(2, 60)),
            absent(),
            Some(latch(3, 60)),
            Some(latch(3, 60)),
        ]);
        assert_eq!(
            plan(&round, None),
            Plan::Refuse(LatchError::NoMajority {
                count: 3,
                holding: 2,
                quorum: 3,
                servers: 5
            })
        );
        // The schedule: one holder and one stopped cannot make three.
        let round = replies(vec![absent(), absent(), absent(), None, Some(latch(3, 60))]);
        assert!(matches!(
            plan(&round, None),
            Plan::Refuse(LatchError::NoMajority { holding: 1, .. })
        ));
    }

    #[test]
    fn a_count_is_created_only_where_no_other_count_was_seen_and_a_quorum_answered() {
        // Two servers restarted empty, three hold count 3: a set of 2 writes nothing.
        let round = replies(vec![
            absent(),
            absent(),
            Some(Touched::Other(LatchCopy {
                count: 3,
                ttl: None,
                ids: BTreeMap::new(),
            })),
            None,
            None,
        ]);
        assert_eq!(
            plan(&round, Some(2)),
            Plan::Refuse(LatchError::OtherCount {
                count: 3,
                servers: 1
            })
        );
        let fresh = replies(vec![absent(), absent(), absent(), None, None]);
        assert_eq!(plan(&fresh, Some(2)), Plan::Create);
        let few = replies(vec![absent(), Some(latch(2, 60)), None, None, None]);
        assert_eq!(plan(&few, Some(2)), Plan::Undecided { holding: 1 });
    }

    #[test]
    fn a_latch_nobody_knows_or_another_clients_key_is_refused() {
        let round = replies(vec![absent(), absent(), None]);
        assert_eq!(plan(&round, None), Plan::Refuse(LatchError::Unknown));
        let round = replies(vec![absent(), None, None]);
        assert_eq!(plan(&round, None), Plan::Undecided { holding: 0 });
        let foreign = Some(Touched::Found(
            Found::Foreign("string".into()),
            Made::default(),
        ));
        let round = replies(vec![foreign.clone(), foreign.clone(), absent()]);
        let refused = Plan::Refuse(LatchError::Foreign {
            kind: "string".into(),
        });
        assert_eq!(plan(&round, None), refused);
        assert_eq!(plan(&round, Some(2)), refused);
        // One foreign key among servers that would make a quorum without it: created.
        let round = replies(vec![foreign, absent(), absent()]);
        assert_eq!(plan(&round, Some(2)), Plan::Create);
    }
}
