//! What the servers showed of one latch, merged server by server as reads and count-down
//! messages arrive, and the verdict on it: open, waiting, partial, absent or unknown (the
//! module comment's rule 3: a quorum holding one count, and the union of their ids).

use super::lua::Heard;
use super::model::{Found, LatchCopy};
use crate::clock::BootInstant;
use crate::lock::nodes::NodeError;
use crate::lock::quorum;
use std::collections::BTreeMap;
use std::time::Duration;

/// A server's copy whose expiry moves later than this is another copy (the latch expired, or
/// the server restarted empty, and it was created again): what was seen of the old one is
/// dropped. A copy's expiry otherwise never moves (nothing extends a latch); this allows for
/// the time its answer took.
const NEW_COPY_SLACK: Duration = Duration::from_secs(1);

/// One server, as last seen.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
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

/// One server's copy, as `status NAME` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerCopy {
    /// Why it did not answer.
    pub(crate) error: Option<String>,
    /// The count of the latch it holds, if it holds one (still alive).
    pub(crate) count: Option<u32>,
    /// How many ids it holds.
    pub(crate) ids: usize,
    pub(crate) ttl: Option<Duration>,
    /// The type of another client's key there.
    pub(crate) foreign: Option<String>,
}

/// One latch as every server showed it.
#[derive(Debug, Clone)]
pub(crate) struct View {
    seen: Vec<Seen>,
}

impl View {
    pub(crate) fn new(servers: usize) -> View {
        View {
            seen: vec![Seen::Down(NodeError::Down("not asked".into())); servers],
        }
    }

    /// Each server's copy as of now, in server order.
    pub(crate) fn copies(&self) -> Vec<ServerCopy> {
        let now = BootInstant::now();
        self.seen
            .iter()
            .map(|seen| {
                let mut copy = ServerCopy {
                    error: None,
                    count: None,
                    ids: 0,
                    ttl: None,
                    foreign: None,
                };
                match seen {
                    Seen::Down(err) => copy.error = Some(err.to_string()),
                    Seen::Absent => {}
                    Seen::Foreign(kind) => copy.foreign = Some(kind.clone()),
                    Seen::Latch {
                        count,
                        expires,
                        ids,
                    } if expires.is_none_or(|at| at > now) => {
                        copy.count = Some(*count);
                        copy.ids = ids.len();
                        copy.ttl = expires.map(|at| at.since(now));
                    }
                    Seen::Latch { .. } => {}
                }
                copy
            })
            .collect()
    }

    /// What server `index` answered to a read at `at` (or what a count-down left there). A
    /// server that does not answer keeps the copy it last showed: its ids were counted down all
    /// the same, and the copy still expires when it would have.
    pub(crate) fn read(&mut self, index: usize, found: &Result<Found, NodeError>, at: BootInstant) {
        let seen = &mut self.seen[index];
        *seen = match found {
            Err(_) if matches!(seen, Seen::Latch { .. }) => return,
            Err(err) => Seen::Down(err.clone()),
            Ok(Found::Absent) => Seen::Absent,
            Ok(Found::Foreign(kind)) => Seen::Foreign(kind.clone()),
            Ok(Found::Latch(copy)) => merged(seen, copy, at),
        };
    }

    /// A count-down message from server `index`. Returns whether the server should be read
    /// again: it holds more ids than were seen from it (a message was lost), or its copy is not
    /// the one we saw.
    pub(crate) fn heard(&mut self, index: usize, heard: &Heard) -> bool {
        match self.seen.get_mut(index) {
            Some(Seen::Latch { count, ids, .. }) if *count == heard.count => {
                ids.entry(heard.id.clone())
                    .or_insert_with(|| heard.record.clone());
                ids.len() < heard.held
            }
            _ => true,
        }
    }

    /// The verdict as of now: copies past their expiry count as gone.
    pub(crate) fn counting(&self) -> Counting {
        let now = BootInstant::now();
        let servers = self.seen.len();
        let quorum = quorum::quorum(servers);
        let mut answered = 0;
        let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
        let mut foreign: BTreeMap<&str, usize> = BTreeMap::new();
        let live = |seen: &&Seen| match seen {
            Seen::Latch { expires, .. } => expires.is_none_or(|at| at > now),
            _ => false,
        };
        for seen in &self.seen {
            match seen {
                Seen::Down(_) => continue,
                Seen::Foreign(kind) => *foreign.entry(kind).or_default() += 1,
                Seen::Latch { count, .. } if live(&seen) => *counts.entry(*count).or_default() += 1,
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
            for seen in self.seen.iter().filter(live) {
                let Seen::Latch {
                    count: c,
                    expires,
                    ids: here,
                } = seen
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
}

/// A server's copy after it showed `copy` at `at`: what was seen of the same copy before, with
/// the ids it shows now added (an id is never removed from a copy).
fn merged(before: &Seen, copy: &LatchCopy, at: BootInstant) -> Seen {
    let expires = copy.ttl.map(|ttl| at.add(ttl));
    let mut ids = copy.ids.clone();
    if let Seen::Latch {
        count,
        expires: was,
        ids: seen,
    } = before
    {
        let same = *count == copy.count
            && match (was, expires) {
                (Some(was), Some(now)) => now <= was.add(NEW_COPY_SLACK),
                (None, None) => true,
                _ => false,
            };
        if same {
            for (id, record) in seen {
                ids.entry(id.clone()).or_insert_with(|| record.clone());
            }
        }
    }
    Seen::Latch {
        count: copy.count,
        expires,
        ids,
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

    fn copy(count: u32, ids: &[&str]) -> Result<Found, NodeError> {
        Ok(Found::Latch(LatchCopy {
            count,
            ttl: Some(Duration::from_secs(60)),
            ids: ids
                .iter()
                .map(|id| (id.to_string(), String::new()))
                .collect(),
        }))
    }

    fn down() -> Result<Found, NodeError> {
        Err(NodeError::Down("connection refused".into()))
    }

    fn view(replies: &[Result<Found, NodeError>]) -> View {
        let mut view = View::new(replies.len());
        let at = BootInstant::now();
        for (index, reply) in replies.iter().enumerate() {
            view.read(index, reply, at);
        }
        view
    }

    #[test]
    fn the_union_over_a_quorum_opens_it() {
        // Three count-downs, each recorded on a different quorum of five servers.
        let v = view(&[
            copy(3, &["a", "b"]),
            copy(3, &["a", "c"]),
            copy(3, &["b", "c"]),
            down(),
            down(),
        ]);
        let counting = v.counting();
        assert_eq!(counting.state, LatchState::Open);
        assert_eq!(counting.ids.len(), 3);
        assert_eq!(counting.missing(), 0);
    }

    #[test]
    fn a_minority_never_decides() {
        // Two servers hold three ids, but two servers are not a quorum of five.
        let v = view(&[
            copy(3, &["a", "b", "c"]),
            copy(3, &["a", "b", "c"]),
            down(),
            down(),
            down(),
        ]);
        assert_eq!(v.counting().state, LatchState::Unknown);
        // Restarted empty: answering, but not holding it.
        let v = view(&[
            copy(3, &["a", "b", "c"]),
            copy(3, &["a", "b", "c"]),
            Ok(Found::Absent),
            Ok(Found::Absent),
            down(),
        ]);
        assert_eq!(v.counting().state, LatchState::Partial);
        // A quorum with two ids is waiting for the third.
        let v = view(&[
            copy(3, &["a", "b"]),
            copy(3, &["a"]),
            copy(3, &[]),
            Ok(Found::Absent),
            down(),
        ]);
        let counting = v.counting();
        assert_eq!(counting.state, LatchState::Waiting);
        assert_eq!(counting.missing(), 1);
        assert_eq!(counting.ids[0].servers, 2);
    }

    #[test]
    fn the_count_is_the_quorums() {
        // A stale minority with a smaller count cannot open it.
        let v = view(&[
            copy(1, &["a"]),
            copy(3, &["a"]),
            copy(3, &["a"]),
            copy(3, &[]),
        ]);
        let counting = v.counting();
        assert_eq!(counting.count, Some(3));
        assert_eq!(counting.state, LatchState::Waiting);
        // The minority's ids are not counted: they belong to another latch.
        let v = view(&[copy(1, &["x"]), copy(3, &["a"]), copy(3, &["b"])]);
        assert_eq!(v.counting().ids.len(), 2);
    }

    #[test]
    fn nothing_anywhere_is_absent_and_a_stopped_server_keeps_its_copy() {
        let v = view(&[Ok(Found::Absent), Ok(Found::Absent), down()]);
        assert_eq!(v.counting().state, LatchState::Absent);
        let mut v = view(&[copy(2, &["a"]), copy(2, &["b"]), copy(2, &[])]);
        let later = BootInstant::now();
        v.read(0, &down(), later);
        v.read(1, &down(), later);
        assert_eq!(v.counting().state, LatchState::Open);
    }

    #[test]
    fn a_message_adds_an_id_and_asks_for_a_read_only_when_one_was_missed() {
        let mut v = view(&[copy(3, &["a"]), copy(3, &["a"]), copy(3, &["a"])]);
        let heard = |held, id: &str| Heard {
            count: 3,
            held,
            id: id.into(),
            record: String::new(),
        };
        assert!(!v.heard(0, &heard(2, "b")));
        // Server 1 holds three ids: we saw one and hear the third, so one was missed.
        assert!(v.heard(1, &heard(3, "c")));
        // Another count: another copy, read it.
        assert!(v.heard(
            2,
            &Heard {
                count: 4,
                ..heard(2, "b")
            }
        ));
        assert_eq!(v.counting().ids.len(), 3);
        assert_eq!(v.counting().state, LatchState::Open);
    }

    #[test]
    fn a_copy_made_again_forgets_the_old_ones_ids() {
        let mut v = View::new(1);
        let at = BootInstant::now();
        v.read(0, &copy(2, &["a"]), at);
        let mut again = LatchCopy {
            count: 2,
            ttl: Some(Duration::from_secs(60)),
            ids: [("b".to_string(), String::new())].into(),
        };
        // The same copy, read later with less TTL left: ids add up.
        v.read(0, &Ok(Found::Latch(again.clone())), at);
        assert_eq!(v.counting().ids.len(), 2);
        // A copy that expires later than the one we saw is a new one.
        again.ttl = Some(Duration::from_secs(3600));
        v.read(0, &Ok(Found::Latch(again)), at);
        assert_eq!(v.counting().ids.len(), 1);
    }
}
