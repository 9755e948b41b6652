//! A semaphore's limit: its number of slots, remembered on each server in the key
//! `<prefix><NAME>␟slots␟limit` (keys.rs), so that a user who gives NAME another `--limit` is
//! told so (exit 64) instead of silently sharing some of the slots, and so that `status`,
//! `release` and `extend` without `--limit` can find a semaphore's slots.
//!
//! Two rules, each one Lua function run inside the scripts that touch the slots, so neither
//! costs a round of its own:
//!
//! - **Check** (`limit_other`). The acquire script (attempt.rs), before it sets anything,
//!   compares the key with its own N. A key that says another number refuses the attempt on
//!   that server, with that number; the engine then withdraws whatever the round set elsewhere
//!   and reports the mismatch, so a refused `--limit` leaves nothing behind.
//! - **Settle** (`limit_settle`). Every script that changes a slot's life ends by setting the
//!   key to N with the PTTL of the longest-lived slot on that server, or by deleting it when no
//!   slot is left there: the acquire script after a grant, extend, keep (`--hold-at-least`),
//!   release (also when it hands the slot to a waiter), the clean-up of an attempt, and
//!   `release --force`.
//!
//! Why settle, rather than a TTL pushed up at each grant: with it, on every server, the key
//! exists exactly while some slot of the semaphore does, kept slots and slots handed to a waiter
//! included, and expires with the last of them (it was given the longest PTTL, so slots that
//! merely expire take it along). It never lives shorter than the semaphore's holders, so a check
//! never misses a live semaphore; and it does not linger after them, so N may change as soon as
//! every slot is free, where a key kept for a TTL would refuse the new N for that long. The one
//! change to a slot's life outside these scripts is the restore after a failed extension
//! (holder.rs), which only puts back a shorter expiry: the key then outlives the slots by that
//! much, which only makes the check stricter, and goes at its own expiry.
//!
//! Why the check is sound: the holders of a semaphore of N hold their slots on a quorum, and
//! every one of those servers has the key saying N; any quorum of ours shares a server with
//! theirs, which refuses us. So no grant with another N happens while the semaphore has
//! holders, with any minority of servers down or slow. A server that lost the key (restarted
//! empty) is a minority, as for any lock. A mismatch seen on any server refuses, even on a
//! minority: someone used NAME with that N moments ago, and it is the command line that is
//! wrong.
//!
//! Why settle may look at slots 0..N−1 only, and must leave alone a key that says another
//! number: every slot on a server whose key says N was set by an acquire script that passed
//! the check with that N (the key is created with the first grant and outlives every slot), so
//! none is N or above; a key that says M ≠ N belongs to slots this caller does not know.

use super::engine::Redlock;
use super::script::{lua_part, Part};
use super::target::Target;

/// The two rules as Lua functions (limit/functions.lua), for every script that takes one of
/// them.
pub(super) const FUNCTIONS: Part = lua_part!("limit/functions.lua");

/// The keys a script that changes a slot's life takes last, after its own, so that it can
/// settle the limit: a semaphore's limit key and then all its slots (none for a mutex). The
/// script finds the limit key right after its own keys and the slots after it.
pub(super) fn settle_keys(target: &Target) -> Vec<String> {
    match target.limit() {
        Some(_) => std::iter::once(target.limit_key())
            .chain(target.all_keys())
            .collect(),
        None => Vec::new(),
    }
}

/// What the servers' limit keys say of a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Limit {
    /// No server that answered has one: the name is no semaphore now.
    Absent,
    /// Every server that has one says this many slots.
    Slots(usize),
    /// The servers disagree (each number once, in order): nothing a redlock grant leaves
    /// behind, but a server can keep an old key through a partition.
    Disagree(Vec<usize>),
}

impl Limit {
    /// The verdict on what each server that answered says (`None`: no key there).
    pub(crate) fn of(found: impl IntoIterator<Item = Option<usize>>) -> Limit {
        let mut seen: Vec<usize> = found.into_iter().flatten().collect();
        seen.sort_unstable();
        seen.dedup();
        match seen.as_slice() {
            [] => Limit::Absent,
            [slots] => Limit::Slots(*slots),
            _ => Limit::Disagree(seen),
        }
    }

    /// A number of slots other than `slots` that some server records, if any.
    pub(crate) fn other_than(&self, slots: usize) -> Option<usize> {
        match self {
            Limit::Absent => None,
            Limit::Slots(found) => (*found != slots).then_some(*found),
            Limit::Disagree(found) => found.iter().copied().find(|&found| found != slots),
        }
    }
}

/// A limit key's value as a number of slots; `None` for none, or for anything else.
pub(super) fn parse(value: Option<&str>) -> Option<usize> {
    value?.parse().ok().filter(|&slots| slots > 0)
}

impl Redlock {
    /// What each server's limit key of `target`'s name says (one round); servers that do not
    /// answer say nothing.
    pub(crate) fn limit(&mut self, target: &Target) -> Limit {
        let key = target.limit_key();
        let replies = self.nodes.round(|con| {
            let value: Option<String> = redis::cmd("GET").arg(&key).query(con)?;
            Ok(parse(value.as_deref()))
        });
        Limit::of(replies.into_iter().filter_map(|reply| reply.result.ok()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_agree_disagree_or_have_none() {
        assert_eq!(Limit::of([None, None]), Limit::Absent);
        assert_eq!(Limit::of([Some(3), None, Some(3)]), Limit::Slots(3));
        assert_eq!(
            Limit::of([Some(5), Some(3), Some(5)]),
            Limit::Disagree(vec![3, 5])
        );
        assert_eq!(Limit::Slots(3).other_than(3), None);
        assert_eq!(Limit::Slots(3).other_than(2), Some(3));
        assert_eq!(Limit::Disagree(vec![3, 5]).other_than(3), Some(5));
        assert_eq!(Limit::Absent.other_than(3), None);
    }

    #[test]
    fn only_a_positive_number_is_a_limit() {
        assert_eq!(parse(Some("3")), Some(3));
        assert_eq!(parse(Some("0")), None);
        assert_eq!(parse(Some("x")), None);
        assert_eq!(parse(None), None);
    }
}
