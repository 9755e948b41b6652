//! Every server's copy of a history made into one list of runs: one per token, with the servers
//! that recorded it (a run on fewer than a quorum is partial), newest first, then cut to what
//! `--since` and `--last` ask for.

use super::entry::{Ended, Entry};
use crate::lock::{NodeError, Stored};
use crate::token;
use std::collections::{btree_map, BTreeMap, HashSet};
use std::time::Duration;

/// One run, as the servers recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Run {
    pub(super) entry: Entry,
    /// How many servers recorded it.
    pub(super) servers: usize,
}

impl Run {
    /// When it started: the acquisition time its token carries, else its end less what it held.
    pub(super) fn started_unix_ms(&self) -> Option<u64> {
        token::holder(&self.entry.token)
            .map(|holder| holder.acquired_unix_ms)
            .or_else(|| {
                let held = self.entry.held?.as_millis() as u64;
                Some(self.entry.ended_unix_ms.saturating_sub(held))
            })
    }
}

/// What `--since` and `--last` keep.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Cut {
    /// Runs that ended at or after this, in unix ms.
    pub(super) ended_since_unix_ms: Option<u64>,
    pub(super) last: Option<usize>,
}

impl Cut {
    pub(super) fn new(since: Option<Duration>, last: Option<usize>, now_unix_ms: u64) -> Cut {
        Cut {
            ended_since_unix_ms: since
                .map(|since| now_unix_ms.saturating_sub(since.as_millis() as u64)),
            last,
        }
    }
}

/// The runs in `copies` (each server's, or why it could not say), newest first, as `cut` keeps
/// them. Entries nobody here can read (another layout) are left out. A token with more than one
/// entry is shown by its newest on the first server that has it, unless an entry of it anywhere
/// says `lost`: written when a give-back found the lock gone (lock/history.rs), it is the last
/// word on that run. O(n log n) in the entries, so that a long history reads at once.
pub(super) fn merge(copies: &[&Result<Stored, NodeError>], cut: Cut) -> Vec<Run> {
    let mut by_token: BTreeMap<String, Run> = BTreeMap::new();
    for stored in copies.iter().filter_map(|copy| copy.as_ref().ok()) {
        // A server counts once for a token, however many entries it has of it.
        let mut here: HashSet<String> = HashSet::with_capacity(stored.entries.len());
        for entry in stored.entries.iter().filter_map(|text| Entry::parse(text)) {
            if !here.insert(entry.token.clone()) {
                if entry.ended == Ended::Lost {
                    if let Some(run) = by_token.get_mut(&entry.token) {
                        run.entry = entry;
                    }
                }
                continue;
            }
            match by_token.entry(entry.token.clone()) {
                btree_map::Entry::Occupied(mut known) => {
                    let run = known.get_mut();
                    run.servers += 1;
                    if entry.ended == Ended::Lost {
                        run.entry = entry;
                    }
                }
                btree_map::Entry::Vacant(new) => {
                    new.insert(Run { entry, servers: 1 });
                }
            }
        }
    }
    let mut runs: Vec<Run> = by_token
        .into_values()
        .filter(|run| {
            cut.ended_since_unix_ms
                .is_none_or(|since| run.entry.ended_unix_ms >= since)
        })
        .collect();
    // The key reads the token once per run, not once per comparison.
    runs.sort_by_cached_key(|run| {
        std::cmp::Reverse((run.started_unix_ms(), run.entry.ended_unix_ms))
    });
    runs.truncate(cut.last.unwrap_or(usize::MAX));
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(token: &str, ended_unix_ms: u64) -> String {
        ended_as(token, ended_unix_ms, Ended::Ok)
    }

    fn ended_as(token: &str, ended_unix_ms: u64, ended: Ended) -> String {
        Entry {
            token: token.to_string(),
            ended,
            ended_unix_ms,
            held: Some(Duration::from_millis(10)),
            waited: None,
            fence: None,
            slot: None,
            shared: false,
        }
        .encode()
    }

    fn stored(entries: &[String]) -> Result<Stored, NodeError> {
        Ok(Stored {
            entries: entries.to_vec(),
            expires_in: None,
        })
    }

    #[test]
    fn one_run_per_token_counted_on_each_server_that_has_it() {
        let (a, b, c) = (entry("a", 1_000), entry("b", 2_000), entry("c", 3_000));
        let copies = [
            stored(&[c.clone(), b.clone(), a.clone()]),
            stored(&[
                b.clone(),
                b.clone(),
                a.clone(),
                "2 from a newer layout".into(),
            ]),
            Err(NodeError::Down("refused".into())),
        ];
        let copies: Vec<&Result<Stored, NodeError>> = copies.iter().collect();
        let runs = merge(&copies, Cut::default());
        let seen: Vec<(&str, usize)> = runs
            .iter()
            .map(|run| (run.entry.token.as_str(), run.servers))
            .collect();
        // Newest first (foreign tokens: by their end less what they held); `b` twice on one
        // server counts once there.
        assert_eq!(seen, [("c", 1), ("b", 2), ("a", 2)]);
        let since = merge(&copies, Cut::new(Some(Duration::from_secs(2)), None, 4_000));
        assert_eq!(since.len(), 2);
        let last = merge(&copies, Cut::new(None, Some(1), 4_000));
        assert_eq!(last[0].entry.token, "c");
    }

    #[test]
    fn a_lost_entry_of_a_run_is_the_last_word_on_it() {
        // The give-back recorded `ok` everywhere, then found the token gone and appended `lost`
        // (lock/history.rs); one server missed the append.
        let ok = entry("a", 1_000);
        let lost = ended_as("a", 1_001, Ended::Lost);
        let copies = [
            stored(std::slice::from_ref(&ok)),
            stored(&[lost.clone(), ok.clone()]),
            stored(&[lost, ok]),
        ];
        let copies: Vec<&Result<Stored, NodeError>> = copies.iter().collect();
        let runs = merge(&copies, Cut::default());
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].entry.ended, Ended::Lost);
        assert_eq!(runs[0].servers, 3);
    }

    #[test]
    fn a_long_history_merges_one_run_per_token() {
        // Many entries on each of three servers (speed is measured by hand, not by a test).
        let entries: Vec<String> = (0..10_000u64)
            .map(|n| entry(&format!("token-{n}"), 1_000 + n))
            .collect();
        let copies = [stored(&entries), stored(&entries), stored(&entries)];
        let copies: Vec<&Result<Stored, NodeError>> = copies.iter().collect();
        let runs = merge(&copies, Cut::default());
        assert_eq!(runs.len(), 10_000);
        assert!(runs.iter().all(|run| run.servers == 3));
        assert_eq!(runs[0].entry.token, "token-9999");
    }
}
