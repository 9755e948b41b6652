//! What is being locked: a mutex (taken exclusively or shared), or a semaphore of N slots,
//! under one lock name. Built once by
//! `config` from the command line and handed to the engine, which takes every key it touches
//! from here; a grant (`Held`) carries the exact key it holds.

use super::keys::{self, LockKeys};

/// One lock name, what kind of lock it is, and what a grant of it must give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// The name as the user typed it, for messages.
    pub(crate) name: String,
    pub(crate) keys: LockKeys,
    pub(crate) kind: Kind,
    /// `--fence`: every grant also gets a fencing number (fence.rs).
    pub(crate) fence: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One holder at a time, on the key `<prefix><NAME>`.
    Mutex,
    /// One of any number of shared holders of the same key, which exclude every exclusive
    /// holder (shared.rs).
    Shared,
    /// Up to `slots` holders at once, each on a slot key of its own (attempt.rs).
    Semaphore { slots: usize },
}

impl Target {
    pub(crate) fn new(name: &str, keys: LockKeys, kind: Kind, fence: bool) -> Target {
        Target {
            name: name.to_string(),
            keys,
            kind,
            fence,
        }
    }

    /// How many keys a grant may hold one of: 1 for a mutex, N for a semaphore.
    pub(crate) fn width(&self) -> usize {
        match self.kind {
            Kind::Mutex | Kind::Shared => 1,
            Kind::Semaphore { slots } => slots,
        }
    }

    /// The key of candidate `index` (a semaphore's slot number; always 0 for a mutex).
    pub(crate) fn key(&self, index: usize) -> String {
        match self.kind {
            Kind::Mutex | Kind::Shared => self.keys.lock().to_string(),
            Kind::Semaphore { .. } => self.keys.slot(index),
        }
    }

    /// Every key a grant of this target may hold, in candidate order.
    pub(crate) fn all_keys(&self) -> Vec<String> {
        (0..self.width()).map(|index| self.key(index)).collect()
    }

    /// The slot a grant of candidate `index` holds, as `REDLOCK_SLOT` and `status` show it:
    /// none for a mutex.
    pub(crate) fn slot(&self, index: usize) -> Option<usize> {
        matches!(self.kind, Kind::Semaphore { .. }).then_some(index)
    }

    /// Whose waiters a release of any of this target's keys serves: the mutex's own, or the
    /// whole semaphore's, so that freeing any slot wakes the first of those waiting for any.
    pub(crate) fn stem(&self) -> String {
        match self.kind {
            Kind::Mutex | Kind::Shared => self.keys.lock().to_string(),
            Kind::Semaphore { .. } => self.keys.semaphore(),
        }
    }

    /// A semaphore's number of slots; `None` for a mutex.
    pub(crate) fn limit(&self) -> Option<usize> {
        match self.kind {
            Kind::Semaphore { slots } => Some(slots),
            Kind::Mutex | Kind::Shared => None,
        }
    }

    /// The key that records the number of slots of the semaphore of this name (limit.rs): for
    /// a mutex's target too, so that `status` and a release without `--limit` can tell that
    /// the name is also a semaphore.
    pub(crate) fn limit_key(&self) -> String {
        self.keys.limit()
    }

    /// The shared holders of this target's lock (a semaphore's stem has none, ever).
    pub(crate) fn readers(&self) -> String {
        keys::readers(&self.stem())
    }

    /// Whether a grant of this target is a shared one.
    pub(crate) fn is_shared(&self) -> bool {
        self.kind == Kind::Shared
    }

    /// The queue of this target's waiters.
    pub(crate) fn queue(&self) -> String {
        keys::queue(&self.stem())
    }

    /// The prefix of this target's waiters' wake-up channels.
    pub(crate) fn wake_prefix(&self) -> String {
        keys::wake_prefix(&self.stem())
    }

    /// Which of this target's keys `key` is (the index `key` takes), if any: how `exec`
    /// recognises the key an enclosing `exec` of the same target holds (`REDLOCK_KEY`).
    pub(crate) fn index_of(&self, key: &str) -> Option<usize> {
        match self.kind {
            Kind::Mutex | Kind::Shared => (key == self.keys.lock()).then_some(0),
            Kind::Semaphore { slots } => keys::slot_of(&self.keys, key).filter(|&s| s < slots),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(kind: Kind) -> Target {
        Target::new("job", LockKeys::new("redlock:", "job"), kind, false)
    }

    #[test]
    fn a_mutex_has_one_key_and_a_semaphore_one_per_slot() {
        let mutex = target(Kind::Mutex);
        assert_eq!(mutex.all_keys(), ["redlock:job"]);
        assert_eq!(mutex.slot(0), None);
        assert_eq!(mutex.queue(), "redlock:job\u{1f}queue");
        let semaphore = target(Kind::Semaphore { slots: 2 });
        assert_eq!(
            semaphore.all_keys(),
            ["redlock:job\u{1f}slots:0", "redlock:job\u{1f}slots:1"]
        );
        assert_eq!(semaphore.slot(1), Some(1));
        // Freeing any slot serves the semaphore's waiters.
        assert_eq!(semaphore.queue(), "redlock:job\u{1f}slots\u{1f}queue");
        assert_eq!(
            semaphore.wake_prefix(),
            "redlock:job\u{1f}slots\u{1f}wake\u{1f}"
        );
    }

    #[test]
    fn an_enclosing_exec_is_recognised_by_its_key() {
        let mutex = target(Kind::Mutex);
        assert_eq!(mutex.index_of("redlock:job"), Some(0));
        assert_eq!(mutex.index_of("redlock:job\u{1f}slots:0"), None);
        let semaphore = target(Kind::Semaphore { slots: 2 });
        assert_eq!(semaphore.index_of("redlock:job\u{1f}slots:1"), Some(1));
        assert_eq!(semaphore.index_of("redlock:job\u{1f}slots:2"), None);
        assert_eq!(semaphore.index_of("redlock:job"), None);
    }
}
