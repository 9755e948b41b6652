//! Every Redis key and channel name redlock writes or reads, built and taken apart here and
//! nowhere else: the lock key, a semaphore's slots and limit, a lock's queue of waiters and their
//! wake-up channels, the reservation a release leaves for the waiter it woke, fencing counters,
//! and a latch's key, count field and channel.
//!
//! The lock NAME is the key `<prefix><NAME>`: a plain string holding the holder's token, the
//! layout redsync, node-redlock, pottery and redis-py share. Everything redlock keeps beside a
//! lock key is that key followed by `␟` (0x1F, the ASCII unit separator) and a suffix:
//!
//! | what | key |
//! | --- | --- |
//! | lock (mutex) | `<prefix><NAME>` |
//! | semaphore slot S | `<prefix><NAME>␟slots:S` |
//! | a semaphore's number of slots (limit.rs) | `<prefix><NAME>␟slots␟limit` |
//! | fencing counter of a lock or slot key K | `K␟fence` |
//! | shared holders of a lock (sorted set) | `<prefix><NAME>␟readers` |
//! | queue of waiters (sorted set) | `<prefix><NAME>␟queue`, a semaphore's `<prefix><NAME>␟slots␟queue` |
//! | wake-up channel of waiter W | `<prefix><NAME>␟wake␟W`, a semaphore's `<prefix><NAME>␟slots␟wake␟W` |
//! | latch NAME (a hash: `␟count`, then one field per id counted down) | `<prefix><NAME>␟latch` |
//! | channel of a latch's count-downs | `<prefix><NAME>␟latch␟wake` |
//!
//! A lock name cannot contain a control character (`config` refuses it), so no lock's key can
//! ever be one of these names, under any prefix without one. A latch name and a count-down id
//! are held to the same rule, so a latch NAME and a lock NAME never share a key, and no id is
//! ever the latch's `␟count` field. A released lock handed to a waiter holds the value
//! `next:<waiter>` for a moment (`RESERVATION`), and a lock held by shared holders holds
//! `SHARED`: values, not keys, but named here so that the scripts and `status` agree on them.
//!
//! On a Redis Cluster (`Layout::Cluster`) a script may only touch keys of one hash slot, so
//! everything beside a lock key L must hash to L's slot. When L has a hash tag (`{…}`, not
//! empty) the names above already do, and are kept. Otherwise each is written `␟{L}␟suffix`,
//! whose hash tag is L itself; and when L has a `}` but no tag, `␟{T}L␟suffix`, T being the
//! first of `0`, `1`, … `z`, `10`, … (base 36) that hashes to L's slot. The leading `␟`
//! keeps these apart from any name above (no lock key starts with a control character, so
//! none is `{L}` followed by a separator), and from the lock keys a `SCAN` for `<prefix>*`
//! finds. The names everywhere else in redlock (`Held`, `REDLOCK_KEY`, `status`) are the ones
//! above; `Layout::name` gives a key's name on a server as the request for it is written.

use crate::server::{hash_slot, hash_tag, Session};
use std::borrow::Cow;

/// Separates a lock key from what redlock keeps beside it.
pub(crate) const SEPARATOR: char = '\x1f';

/// The value a release leaves in a lock key for the waiter it woke: this, then the waiter.
pub(crate) const RESERVATION: &str = "next:";

/// The value of a lock key while shared holders hold it (their tokens are in `readers`). Any
/// other client sees a lock held by someone, which it is.
pub(crate) const SHARED: &str = "redlock:shared";

const SLOTS: &str = "slots";
const LIMIT: &str = "limit";
const READERS: &str = "readers";
const QUEUE: &str = "queue";
const WAKE: &str = "wake";
const FENCE: &str = "fence";
const LATCH: &str = "latch";

/// The field of a latch's hash that holds its count; every other field is an id counted down.
pub(crate) const LATCH_COUNT: &str = "\x1fcount";

/// The keys of one lock name under one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LockKeys {
    key: String,
}

impl LockKeys {
    /// The keys of lock `name` under `prefix`. The name is checked by `config`, not here.
    pub(crate) fn new(prefix: &str, name: &str) -> LockKeys {
        LockKeys {
            key: format!("{prefix}{name}"),
        }
    }

    /// The mutex's key, `<prefix><NAME>`.
    pub(crate) fn lock(&self) -> &str {
        &self.key
    }

    /// The stem of a semaphore's slots, queue and channels; never set itself.
    pub(crate) fn semaphore(&self) -> String {
        format!("{}{SEPARATOR}{SLOTS}", self.key)
    }

    /// The key of a semaphore's slot `slot`.
    pub(crate) fn slot(&self, slot: usize) -> String {
        format!("{}:{slot}", self.semaphore())
    }

    /// The key that says how many slots the semaphore NAME has (limit.rs).
    pub(crate) fn limit(&self) -> String {
        format!("{}{SEPARATOR}{LIMIT}", self.semaphore())
    }
}

/// The queue of waiters of the lock (or semaphore stem) `stem`.
pub(crate) fn queue(stem: &str) -> String {
    format!("{stem}{SEPARATOR}{QUEUE}")
}

/// The prefix of the wake-up channels of `stem`'s waiters: a waiter's channel is this followed
/// by its entry in the queue.
pub(crate) fn wake_prefix(stem: &str) -> String {
    format!("{stem}{SEPARATOR}{WAKE}{SEPARATOR}")
}

/// The sorted set of the shared holders of the lock `key`: their tokens, scored by when each
/// expires (milliseconds on the server's clock).
pub(crate) fn readers(key: &str) -> String {
    format!("{key}{SEPARATOR}{READERS}")
}

/// The fencing counter of the lock or slot key `key`.
pub(crate) fn fence(key: &str) -> String {
    format!("{key}{SEPARATOR}{FENCE}")
}

/// The key and channel of one latch name under one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LatchKeys {
    key: String,
}

impl LatchKeys {
    /// The keys of latch `name` under `prefix`. The name is checked by `config`, not here.
    pub(crate) fn new(prefix: &str, name: &str) -> LatchKeys {
        LatchKeys {
            key: format!("{prefix}{name}{SEPARATOR}{LATCH}"),
        }
    }

    /// The latch's hash, `<prefix><NAME>␟latch`.
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// Where a count-down is announced to the latch's waiters.
    pub(crate) fn channel(&self) -> String {
        format!("{}{SEPARATOR}{WAKE}", self.key)
    }
}

/// The latch NAME whose hash `key` is, if it is one under `prefix`.
pub(crate) fn latch_name(prefix: &str, key: &str) -> Option<String> {
    let name = key
        .strip_prefix(prefix)?
        .strip_suffix(LATCH)?
        .strip_suffix(SEPARATOR)?;
    (!name.is_empty() && !name.contains(SEPARATOR)).then(|| name.to_string())
}

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

    /// The name `key` (a name built in this file) has on a server of this layout.
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

    /// The name built in this file for `found`, a key found on a server of this layout, or
    /// `None` when no name of ours has that name there.
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

/// The lock key a key or channel named here belongs to: the text before the first separator.
/// Its hash slot is that of everything kept beside it on a cluster.
pub(crate) fn owner(name: &str) -> &str {
    name.split_once(SEPARATOR).map_or(name, |(lock, _)| lock)
}

/// Whether a lock key's value is a release's reservation rather than a holder's token.
pub(crate) fn is_reservation(value: &str) -> bool {
    value.starts_with(RESERVATION)
}

/// What a key found under the prefix is, as `status` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Listed {
    /// A lock: the key of the lock NAME.
    Lock { name: String },
    /// Slot `slot` of the semaphore NAME.
    Slot { name: String, slot: usize },
    /// Something redlock keeps beside a lock (a queue, a fencing counter, a latch): not a lock.
    Beside,
}

/// Takes apart a key found under `prefix` (the caller found it there; a key without the prefix
/// is taken whole).
pub(crate) fn parse(prefix: &str, key: &str) -> Listed {
    let name = key.strip_prefix(prefix).unwrap_or(key);
    let Some((base, rest)) = name.split_once(SEPARATOR) else {
        return Listed::Lock {
            name: name.to_string(),
        };
    };
    match rest.strip_prefix(SLOTS).and_then(|r| r.strip_prefix(':')) {
        Some(slot) if !slot.is_empty() && slot.bytes().all(|b| b.is_ascii_digit()) => {
            match slot.parse() {
                Ok(slot) => Listed::Slot {
                    name: base.to_string(),
                    slot,
                },
                Err(_) => Listed::Beside,
            }
        }
        _ => Listed::Beside,
    }
}

/// The slot number of `key` if it is one of the semaphore `keys`' slots.
pub(crate) fn slot_of(keys: &LockKeys, key: &str) -> Option<usize> {
    let semaphore = keys.semaphore();
    let slot = key.strip_prefix(semaphore.as_str())?.strip_prefix(':')?;
    if slot.is_empty() || !slot.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    slot.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_the_documented_one() {
        let keys = LockKeys::new("redlock:", "deploy");
        assert_eq!(keys.lock(), "redlock:deploy");
        assert_eq!(keys.semaphore(), "redlock:deploy\u{1f}slots");
        assert_eq!(keys.slot(12), "redlock:deploy\u{1f}slots:12");
        assert_eq!(keys.limit(), "redlock:deploy\u{1f}slots\u{1f}limit");
        assert_eq!(queue(keys.lock()), "redlock:deploy\u{1f}queue");
        assert_eq!(
            queue(&keys.semaphore()),
            "redlock:deploy\u{1f}slots\u{1f}queue"
        );
        assert_eq!(wake_prefix(keys.lock()), "redlock:deploy\u{1f}wake\u{1f}");
        assert_eq!(fence(keys.lock()), "redlock:deploy\u{1f}fence");
        assert_eq!(readers(keys.lock()), "redlock:deploy\u{1f}readers");
        assert!(!SHARED.contains(SEPARATOR) && !is_reservation(SHARED));
        assert_eq!(
            fence(&keys.slot(2)),
            "redlock:deploy\u{1f}slots:2\u{1f}fence"
        );
        assert!(is_reservation("next:abc"));
        assert!(!is_reservation("0123abcd:host:1:2"));
    }

    #[test]
    fn keys_under_the_prefix_are_told_apart() {
        let keys = LockKeys::new("redlock:", "deploy");
        assert_eq!(
            parse("redlock:", keys.lock()),
            Listed::Lock {
                name: "deploy".into()
            }
        );
        assert_eq!(
            parse("redlock:", &keys.slot(7)),
            Listed::Slot {
                name: "deploy".into(),
                slot: 7
            }
        );
        for beside in [
            fence(keys.lock()),
            fence(&keys.slot(7)),
            queue(keys.lock()),
            queue(&keys.semaphore()),
            readers(keys.lock()),
            keys.limit(),
            keys.semaphore(),
            LatchKeys::new("redlock:", "deploy").key().to_string(),
            format!("{}:x", keys.semaphore()),
            format!("{}:", keys.semaphore()),
        ] {
            assert_eq!(parse("redlock:", &beside), Listed::Beside, "{beside:?}");
        }
        // A lock whose name merely looks like a slot is a lock.
        assert_eq!(
            parse("redlock:", "redlock:deploy:slots:1"),
            Listed::Lock {
                name: "deploy:slots:1".into()
            }
        );
    }

    #[test]
    fn a_slot_key_is_recognised_only_for_its_own_semaphore() {
        let keys = LockKeys::new("redlock:", "deploy");
        assert_eq!(slot_of(&keys, &keys.slot(3)), Some(3));
        assert_eq!(slot_of(&keys, keys.lock()), None);
        assert_eq!(slot_of(&keys, &fence(&keys.slot(3))), None);
        let other = LockKeys::new("redlock:", "deploy2");
        assert_eq!(slot_of(&keys, &other.slot(3)), None);
    }

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

    #[test]
    fn a_latch_lives_beside_the_lock_of_its_name() {
        let latch = LatchKeys::new("redlock:", "nightly-etl");
        assert_eq!(latch.key(), "redlock:nightly-etl\u{1f}latch");
        assert_eq!(latch.channel(), "redlock:nightly-etl\u{1f}latch\u{1f}wake");
        let lock = LockKeys::new("redlock:", "nightly-etl");
        // No key of the lock of the same name is the latch's, and no waiter's channel (its
        // prefix, then an entry) is the latch's channel.
        for beside in [
            lock.lock().to_string(),
            queue(lock.lock()),
            fence(lock.lock()),
            lock.semaphore(),
            lock.slot(0),
            queue(&lock.semaphore()),
        ] {
            assert_ne!(beside, latch.key());
        }
        for waiters in [wake_prefix(lock.lock()), wake_prefix(&lock.semaphore())] {
            assert!(!latch.channel().starts_with(&waiters));
        }
        assert_eq!(
            latch_name("redlock:", latch.key()).as_deref(),
            Some("nightly-etl")
        );
        // A lock named like a latch key is not a latch: its name would need the separator.
        assert_eq!(latch_name("redlock:", "redlock:nightly-etl:latch"), None);
        assert_eq!(latch_name("redlock:", "redlock:\u{1f}latch"), None);
        assert_eq!(
            latch_name("redlock:", "redlock:a\u{1f}slots\u{1f}latch"),
            None
        );
        assert_eq!(latch_name("other:", latch.key()), None);
        assert_eq!(latch_name("redlock:", &latch.channel()), None);
        // The count field is no id: ids, like names, have no control character.
        assert!(LATCH_COUNT.starts_with(SEPARATOR));
    }
}
