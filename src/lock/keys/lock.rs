//! A lock's names: its key, a semaphore's slots and limit, and what redlock keeps beside them
//! (queue, wake-up channels, shared holders, fencing counters, run history), built, and taken
//! apart where a name comes back to us.

/// Separates a lock key from what redlock keeps beside it.
pub(crate) const SEPARATOR: char = '\x1f';

pub(super) const SLOTS: &str = "slots";
const LIMIT: &str = "limit";
const READERS: &str = "readers";
const QUEUE: &str = "queue";
pub(super) const WAKE: &str = "wake";
const FENCE: &str = "fence";
const HISTORY: &str = "history";
const INDEX: &str = "index";

/// The keys of one lock name under one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LockKeys {
    key: String,
    /// The length of the prefix `key` starts with (`index`).
    prefix: usize,
}

impl LockKeys {
    /// The keys of lock `name` under `prefix`. The name is checked by `config`, not here.
    pub(crate) fn new(prefix: &str, name: &str) -> LockKeys {
        LockKeys {
            key: format!("{prefix}{name}"),
            prefix: prefix.len(),
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

    /// The key of a semaphore's slot `slot`: the stem, then `:` and the slot (`slot_number`).
    pub(crate) fn slot(&self, slot: usize) -> String {
        format!("{}:{slot}", self.semaphore())
    }

    /// The key that says how many slots the semaphore NAME has (limit.rs).
    pub(crate) fn limit(&self) -> String {
        format!("{}{SEPARATOR}{LIMIT}", self.semaphore())
    }

    /// The index of the keys set under this lock's prefix (`index`).
    pub(crate) fn index(&self) -> String {
        index(&self.key[..self.prefix])
    }

    /// The run history of the name (lock/history.rs): one list for the mutex NAME, its shared
    /// holders and the semaphore NAME's slots alike, each entry saying which it was.
    pub(crate) fn history(&self) -> String {
        format!("{}{SEPARATOR}{HISTORY}", self.key)
    }
}

/// The slot number in what follows a semaphore's stem in a slot key (`:S`, see
/// `LockKeys::slot`), if that is what it is.
pub(super) fn slot_number(after_stem: &str) -> Option<usize> {
    let slot = after_stem.strip_prefix(':')?;
    if slot.is_empty() || !slot.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    slot.parse().ok()
}

/// The slot number of `key` if it is one of the semaphore `keys`' slots.
pub(crate) fn slot_of(keys: &LockKeys, key: &str) -> Option<usize> {
    slot_number(key.strip_prefix(keys.semaphore().as_str())?)
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

/// The index of the keys redlock sets under `prefix` (a sorted set of them, lock/list.rs): what
/// `status` lists on a server too large to walk. No lock NAME is empty, so no lock's key is it.
pub(crate) fn index(prefix: &str) -> String {
    format!("{prefix}{SEPARATOR}{INDEX}")
}

/// The lock key a key or channel named here belongs to: the text before the first separator.
/// Its hash slot is that of everything kept beside it on a cluster.
pub(crate) fn owner(name: &str) -> &str {
    name.split_once(SEPARATOR).map_or(name, |(lock, _)| lock)
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
        assert_eq!(keys.history(), "redlock:deploy\u{1f}history");
        assert_eq!(keys.index(), "redlock:\u{1f}index");
        assert_eq!(
            fence(&keys.slot(2)),
            "redlock:deploy\u{1f}slots:2\u{1f}fence"
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
}
