//! How a server kind names what redlock keeps beside a lock key: exactly as built here on a
//! plain server or a Sentinel group, in the lock key's hash slot on a Redis Cluster.
//!
//! On a Redis Cluster (`Layout::Cluster`) a script may only touch keys of one hash slot, so
//! everything beside a lock key L must hash to L's slot. When L has a hash tag (`{…}`, not
//! empty) the names in the table (keys/mod.rs) already do, and are kept. Otherwise each is
//! written `␟{L}␟suffix`, whose hash tag is L itself; and when L has a `}` but no tag,
//! `␟{T}L␟suffix`, T being the first of `0`, `1`, … `z`, `10`, … (base 36) that hashes to L's
//! slot. The leading `␟` keeps these apart from any name in the table (no lock key starts with
//! a control character, so none is `{L}` followed by a separator), and from the lock keys a
//! `SCAN` for `<prefix>*` finds. The names everywhere else in redlock (`Held`, `REDLOCK_KEY`,
//! `status`) are the ones in the table; `Layout::name` gives a key's name on a server as the
//! request for it is written.

use super::lock::SEPARATOR;
use crate::server::{hash_slot, hash_tag, Session};
use std::borrow::Cow;

/// How a server kind names what redlock keeps beside a lock key (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// A plain server or a Sentinel group: the names in the table, exactly, which other
    /// redlock versions use too.
    Plain,
    /// A Redis Cluster: every key beside a lock key in the lock key's hash slot.
    Cluster,
}

impl Layout {
    /// The layout of the server `session` talks to.
    pub(crate) fn of(session: &Session) -> Layout {
        if session.is_cluster() {
            Layout::Cluster
        } else {
            Layout::Plain
        }
    }

    /// The name `key` (a name built in keys/) has on a server of this layout.
    pub(crate) fn name(self, key: &str) -> Cow<'_, str> {
        let Some((lock, suffix)) = key.split_once(SEPARATOR) else {
            return Cow::Borrowed(key);
        };
        if self == Layout::Plain || hash_tag(lock.as_bytes()).is_some() {
            return Cow::Borrowed(key);
        }
        Cow::Owned(if lock.contains('}') {
            let tag = slot_tag(hash_slot(lock));
            format!("{SEPARATOR}{{{tag}}}{lock}{SEPARATOR}{suffix}")
        } else {
            format!("{SEPARATOR}{{{lock}}}{SEPARATOR}{suffix}")
        })
    }

    /// `name` of each of `keys`.
    pub(crate) fn names(self, keys: &[String]) -> Vec<String> {
        keys.iter().map(|key| self.name(key).into_owned()).collect()
    }

    /// The name built in keys/ for `found`, a key found on a server of this layout, or `None`
    /// when no name of ours has that name there.
    pub(crate) fn plain(self, found: &str) -> Option<Cow<'_, str>> {
        let Some(wrapped) = found.strip_prefix(SEPARATOR) else {
            return Some(Cow::Borrowed(found));
        };
        if self == Layout::Plain {
            return None;
        }
        let (tag, after) = wrapped.strip_prefix('{')?.split_once('}')?;
        let (lock, suffix) = match after.strip_prefix(SEPARATOR) {
            Some(suffix) => (tag, suffix),
            None => after.split_once(SEPARATOR)?,
        };
        let plain = format!("{lock}{SEPARATOR}{suffix}");
        (self.name(&plain) == found).then_some(Cow::Owned(plain))
    }

    /// `SCAN` patterns that find, on a server of this layout, every key whose name starts
    /// with `prefix` (a glob, escaped) and ends with `tail` (no glob characters).
    pub(crate) fn patterns(self, prefix: &str, tail: &str) -> Vec<String> {
        let plain = format!("{prefix}*{tail}");
        match self {
            Layout::Plain => vec![plain],
            Layout::Cluster => vec![plain, format!("{SEPARATOR}{{*{tail}")],
        }
    }

    /// `keys` in batches that one command may take together: all of them on a plain server,
    /// those of one hash slot on a cluster.
    pub(crate) fn batches(self, keys: &[String]) -> Vec<Vec<String>> {
        match self {
            Layout::Plain if keys.is_empty() => Vec::new(),
            Layout::Plain => vec![keys.to_vec()],
            Layout::Cluster => {
                let mut batches: Vec<(u16, Vec<String>)> = Vec::new();
                for key in keys {
                    let slot = hash_slot(key);
                    match batches.iter_mut().find(|(s, _)| *s == slot) {
                        Some((_, batch)) => batch.push(key.clone()),
                        None => batches.push((slot, vec![key.clone()])),
                    }
                }
                batches.into_iter().map(|(_, batch)| batch).collect()
            }
        }
    }
}

/// The first base-36 number (`0`…`9`, `a`…`z`, `10`, …) that hashes to `slot`: the tag of a
/// lock key with a stray `}`. Every slot has one of at most four digits (a test checks).
fn slot_tag(slot: u16) -> String {
    (0u32..)
        .map(base36)
        .find(|tag| hash_slot(tag) == slot)
        .unwrap_or_default()
}

fn base36(mut n: u32) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit(n % 36, 36).unwrap_or('0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().collect()
}

#[cfg(test)]
mod tests {
    use super::super::latch::LatchKeys;
    use super::super::lock::{fence, owner, queue, readers, LockKeys};
    use super::*;

    /// Every name redlock keeps for lock key `lock`.
    fn beside(lock: &str) -> Vec<String> {
        let keys = LockKeys::new("", lock);
        vec![
            queue(keys.lock()),
            fence(keys.lock()),
            readers(keys.lock()),
            keys.slot(3),
            fence(&keys.slot(3)),
            queue(&keys.semaphore()),
            keys.history(),
            LatchKeys::new("", lock).key().to_string(),
        ]
    }

    #[test]
    fn on_a_cluster_everything_beside_a_lock_key_is_in_its_slot() {
        let names = [
            "deploy",
            "redlock:deploy",
            "{app}:deploy",
            "redlock:{app}deploy",
            "a{b",
            "a}b",
            "}",
            "{",
            "{}",
            "a{}b",
            "{}{x}",
            "}{x}",
            "x}{}",
            "{{x}}",
            "{deploy}",
            "\u{4e16}{",
        ];
        let mut all: Vec<String> = Vec::new();
        for lock in names {
            for key in beside(lock) {
                let name = Layout::Cluster.name(&key);
                assert_eq!(hash_slot(&*name), hash_slot(lock), "{key:?} as {name:?}");
                assert_eq!(Layout::Plain.name(&key), key);
                assert_eq!(
                    Layout::Cluster.plain(&name).as_deref(),
                    Some(key.as_str()),
                    "{name:?}"
                );
                all.push(name.into_owned());
            }
            assert_eq!(Layout::Cluster.name(lock), lock);
            all.push(lock.to_string());
        }
        // No two keys of any of these locks share a name.
        let count = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), count);
        // A tag already there: today's names, exactly.
        assert_eq!(
            Layout::Cluster.name("{app}:x\u{1f}queue"),
            "{app}:x\u{1f}queue"
        );
        assert_eq!(
            Layout::Cluster.name("redlock:x\u{1f}queue"),
            "\u{1f}{redlock:x}\u{1f}queue"
        );
        // A stray '}' and no tag: a short tag of the same slot, then the lock key.
        let stray = Layout::Cluster.name("a}b\u{1f}fence");
        assert!(
            stray.starts_with("\u{1f}{") && stray.ends_with("}a}b\u{1f}fence"),
            "{stray:?}"
        );
        // Keys that are not ours are not taken for ours.
        for other in [
            "\u{1f}{a}x",
            "\u{1f}{0}abc\u{1f}queue",
            "\u{1f}{{app}x}\u{1f}queue",
            "\u{1f}x",
        ] {
            assert_eq!(Layout::Cluster.plain(other), None, "{other:?}");
        }
        assert_eq!(Layout::Plain.plain("\u{1f}{a}\u{1f}queue"), None);
        assert_eq!(owner("redlock:x\u{1f}slots\u{1f}wake\u{1f}e"), "redlock:x");
    }

    #[test]
    fn every_slot_has_a_tag_of_four_base36_digits_at_most() {
        assert_eq!(base36(0), "0");
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
        let mut tags = vec![None; 16384];
        for n in 0u32..36u32.pow(4) {
            let tag = base36(n);
            tags[usize::from(hash_slot(&tag))].get_or_insert(tag);
        }
        assert!(tags.iter().all(Option::is_some));
        assert_eq!(
            slot_tag(hash_slot("a}b")),
            tags[usize::from(hash_slot("a}b"))].clone().unwrap()
        );
    }

    #[test]
    fn a_cluster_is_scanned_for_both_forms_and_read_per_slot() {
        assert_eq!(Layout::Plain.patterns("redlock:", ""), ["redlock:*"]);
        assert_eq!(
            Layout::Cluster.patterns("redlock:", "\u{1f}latch"),
            ["redlock:*\u{1f}latch", "\u{1f}{*\u{1f}latch"]
        );
        let keys: Vec<String> = ["{a}1", "b", "{a}2"].map(String::from).into();
        assert_eq!(Layout::Plain.batches(&keys), std::slice::from_ref(&keys));
        assert!(Layout::Plain.batches(&[]).is_empty());
        assert_eq!(
            Layout::Cluster.batches(&keys),
            [vec!["{a}1".to_string(), "{a}2".into()], vec!["b".into()]]
        );
    }
}
