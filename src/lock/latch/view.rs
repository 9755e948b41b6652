//! What the servers showed of one latch, merged server by server as reads and count-down
//! messages arrive: each server's copy as last seen, kept while a server does not answer and
//! dropped when the latch was made again there. Its verdict is verdict.rs's.

use super::lua::LatchHeard;
use super::model::{Found, LatchCopy};
use super::verdict::{self, Counting, Seen};
use crate::clock::BootInstant;
use crate::lock::nodes::NodeError;
use std::time::Duration;

/// A server's copy whose expiry moves later than this is another copy (the latch expired, or
/// the server restarted empty, and it was created again): what was seen of the old one is
/// dropped. A copy's expiry otherwise never moves (nothing extends a latch); this allows for
/// the time its answer took.
const NEW_COPY_SLACK: Duration = Duration::from_secs(1);

/// One server's copy, as `status NAME` shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
                let mut copy = ServerCopy::default();
                match seen {
                    Seen::Down(err) => copy.error = Some(err.to_string()),
                    Seen::Foreign(kind) => copy.foreign = Some(kind.clone()),
                    Seen::Latch {
                        count,
                        expires,
                        ids,
                    } if seen.live(now) => {
                        copy.count = Some(*count);
                        copy.ids = ids.len();
                        copy.ttl = expires.map(|at| at.since(now));
                    }
                    Seen::Absent | Seen::Latch { .. } => {}
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
    pub(crate) fn heard(&mut self, index: usize, heard: &LatchHeard) -> bool {
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
        verdict::counting(&self.seen)
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

#[cfg(test)]
mod tests {
    use super::super::verdict::LatchState;
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
        let heard = |held, id: &str| LatchHeard {
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
            &LatchHeard {
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
