//! A latch's names: its hash and the channel its count-downs are announced on, beside the lock
//! of the same name, and the latch NAME a hash found under the prefix belongs to.

use super::lock::{SEPARATOR, WAKE};

const LATCH: &str = "latch";

/// The field of a latch's hash that holds its count; every other field is an id counted down.
pub(crate) const LATCH_COUNT: &str = "\x1fcount";

/// The key and channel of one latch name under one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LatchKeys {
    key: String,
    /// The length of the prefix `key` starts with (`index`).
    prefix: usize,
}

impl LatchKeys {
    /// The keys of latch `name` under `prefix`. The name is checked by `config`, not here.
    pub(crate) fn new(prefix: &str, name: &str) -> LatchKeys {
        LatchKeys {
            key: format!("{prefix}{name}{SEPARATOR}{LATCH}"),
            prefix: prefix.len(),
        }
    }

    /// The latch's hash, `<prefix><NAME>␟latch`.
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// The index of the keys set under the latch's prefix (keys::index).
    pub(crate) fn index(&self) -> String {
        super::lock::index(&self.key[..self.prefix])
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

#[cfg(test)]
mod tests {
    use super::super::lock::{fence, queue, wake_prefix, LockKeys};
    use super::*;

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
            lock.history(),
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
