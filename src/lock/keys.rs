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
