//! The verdict on a latch from what each server was last seen holding: open, waiting, partial,
//! absent or unknown (the module comment's rule 3: a quorum holding one count, and the union of
//! their ids).

use crate::clock::BootInstant;
use crate::lock::nodes::NodeError;
use crate::lock::quorum;
use std::collections::BTreeMap;
use std::time::Duration;

/// One server, as last seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seen {
    /// Never answered (yet).
    Down(NodeError),
    Absent,
    Foreign(String),
    Latch {
        count: u32,
        /// When it expires, on our clock; `None`: never.
        expires: Option<BootInstant>,
        ids: BTreeMap<String, String>,
    },
}

impl Seen {
    /// Whether it holds the latch still at `now`: a copy past its expiry is gone.
    pub(super) fn live(&self, now: BootInstant) -> bool {
        match self {
            Seen::Latch { expires, .. } => expires.is_none_or(|at| at > now),
            _ => false,
        }
    }
}

/// The latch's state, the same word in `status`, its list and `--json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LatchState {
    /// A quorum holds it with one count, and at least that many ids are counted down.
    Open,
    /// A quorum holds it, and fewer ids than its count are counted down.
    Waiting,
    /// Enough servers answered, and fewer than a quorum hold it with one count.
    Partial,
    /// Enough servers answered, and none holds it.
    Absent,
    /// Too few servers answered to tell.
    Unknown,
}

impl LatchState {
    pub(crate) fn word(self) -> &'static str {
        match self {
            LatchState::Open => "open",
            LatchState::Waiting => "waiting",
            LatchState::Partial => "partial",
            LatchState::Absent => "absent",
            LatchState::Unknown => "unknown",
        }
    }
}

/// One id counted down, over the servers that hold the latch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CountedId {
    pub(crate) id: String,
    /// Its record (a token: who, and when), as the first server that showed one had it.
    pub(crate) record: Option<String>,
    /// How many of the servers holding the latch have it.
    pub(crate) servers: usize,
}

/// The verdict on a latch, and what it rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Counting {
    pub(crate) state: LatchState,
    /// The count most servers hold it with.
    pub(crate) count: Option<u32>,
    /// Servers holding it with that count.
    pub(crate) holding: usize,
    /// Servers that answered.
    pub(crate) answered: usize,
    pub(crate) servers: usize,
    pub(crate) quorum: usize,
    /// The ids counted down on the servers holding it (their union), oldest record first.
    pub(crate) ids: Vec<CountedId>,
    /// The shortest TTL left on the servers holding it.
    pub(crate) ttl: Option<Duration>,
    /// The type of another client's key at the latch's key, on the most servers.
    pub(crate) foreign: Option<String>,
}

impl Counting {
    /// How many more ids it takes to open.
    pub(crate) fn missing(&self) -> u32 {
        self.count
            .map_or(0, |count| count.saturating_sub(self.ids.len() as u32))
    }
}

/// The verdict on `seen`, every server as last seen, as of now: copies past their expiry count
/// as gone.
pub(super) fn counting(seen: &[Seen]) -> Counting {
    let now = BootInstant::now();
    let servers = seen.len();
    let quorum = quorum::quorum(servers);
    let mut answered = 0;
    let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
    let mut foreign: BTreeMap<&str, usize> = BTreeMap::new();
    for server in seen {
        match server {
            Seen::Down(_) => continue,
            Seen::Foreign(kind) => *foreign.entry(kind).or_default() += 1,
            Seen::Latch { count, .. } if server.live(now) => {
                *counts.entry(*count).or_default() += 1
            }
            _ => {}
        }
        answered += 1;
    }
    // The count most servers hold (a tie: the larger count, which opens later).
    let best = counts
        .iter()
        .max_by_key(|(count, holding)| (**holding, **count))
        .map(|(count, holding)| (*count, *holding));
    let mut ids: BTreeMap<&str, CountedId> = BTreeMap::new();
    let mut ttl: Option<Duration> = None;
    if let Some((count, _)) = best {
        for server in seen.iter().filter(|server| server.live(now)) {
            let Seen::Latch {
                count: c,
                expires,
                ids: here,
            } = server
            else {
                continue;
            };
            if *c != count {
                continue;
            }
            if let Some(at) = expires {
                let left = at.since(now);
                ttl = Some(ttl.map_or(left, |t| t.min(left)));
            }
            for (id, record) in here {
                let counted = ids.entry(id).or_insert_with(|| CountedId {
                    id: id.clone(),
                    record: None,
                    servers: 0,
                });
                counted.servers += 1;
                if counted.record.is_none() && !record.is_empty() {
                    counted.record = Some(record.clone());
                }
            }
        }
    }
    let mut ids: Vec<CountedId> = ids.into_values().collect();
    ids.sort_by_key(|counted| (recorded_at(counted), counted.id.clone()));
    let holding = best.map_or(0, |(_, holding)| holding);
    let state = match best {
        Some((count, holding)) if holding >= quorum => {
            if ids.len() >= count as usize {
                LatchState::Open
            } else {
                LatchState::Waiting
            }
        }
        _ if answered < quorum => LatchState::Unknown,
        Some(_) => LatchState::Partial,
        None if !foreign.is_empty() => LatchState::Partial,
        None => LatchState::Absent,
    };
    Counting {
        state,
        count: best.map(|(count, _)| count),
        holding,
        answered,
        servers,
        quorum,
        ids,
        ttl,
        foreign: foreign
            .into_iter()
            .max_by_key(|(_, n)| *n)
            .map(|(kind, _)| kind.to_string()),
    }
}

/// When an id was counted down, as its record says (unknown records last).
fn recorded_at(counted: &CountedId) -> u64 {
    counted
        .record
        .as_deref()
        .and_then(crate::token::holder)
        .map_or(u64::MAX, |holder| holder.acquired_unix_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(count: u32, ids: &[&str]) -> Seen {
        Seen::Latch {
            count,
            expires: Some(BootInstant::now().add(Duration::from_secs(60))),
            ids: ids
                .iter()
                .map(|id| (id.to_string(), String::new()))
                .collect(),
        }
    }

    fn down() -> Seen {
        Seen::Down(NodeError::Down("connection refused".into()))
    }

    #[test]
    fn the_union_over_a_quorum_opens_it() {
        // Three count-downs, each recorded on a different quorum of five servers.
        let v = [
            copy(3, &["a", "b"]),
            copy(3, &["a", "c"]),
            copy(3, &["b", "c"]),
            down(),
            down(),
        ];
        let counting = super::counting(&v);
        assert_eq!(counting.state, LatchState::Open);
        assert_eq!(counting.ids.len(), 3);
        assert_eq!(counting.missing(), 0);
    }

    #[test]
    fn a_minority_never_decides() {
        // Two servers hold three ids, but two servers are not a quorum of five.
        let v = [
            copy(3, &["a", "b", "c"]),
            copy(3, &["a", "b", "c"]),
            down(),
            down(),
            down(),
        ];
        assert_eq!(super::counting(&v).state, LatchState::Unknown);
        // Restarted empty: answering, but not holding it.
        let v = [
            copy(3, &["a", "b", "c"]),
            copy(3, &["a", "b", "c"]),
            Seen::Absent,
            Seen::Absent,
            down(),
        ];
        assert_eq!(super::counting(&v).state, LatchState::Partial);
        // A quorum with two ids is waiting for the third.
        let v = [
            copy(3, &["a", "b"]),
            copy(3, &["a"]),
            copy(3, &[]),
            Seen::Absent,
            down(),
        ];
        let counting = super::counting(&v);
        assert_eq!(counting.state, LatchState::Waiting);
        assert_eq!(counting.missing(), 1);
        assert_eq!(counting.ids[0].servers, 2);
    }

    #[test]
    fn the_count_is_the_quorums() {
        // A stale minority with a smaller count cannot open it.
        let v = [
            copy(1, &["a"]),
            copy(3, &["a"]),
            copy(3, &["a"]),
            copy(3, &[]),
        ];
        let counting = super::counting(&v);
        assert_eq!(counting.count, Some(3));
        assert_eq!(counting.state, LatchState::Waiting);
        // The minority's ids are not counted: they belong to another latch.
        let v = [copy(1, &["x"]), copy(3, &["a"]), copy(3, &["b"])];
        assert_eq!(super::counting(&v).ids.len(), 2);
    }
}
