//! What a key a `SCAN` found under the prefix is, as `status` lists it: a lock, a semaphore's
//! slot, or something redlock keeps beside a lock.

use super::lock::{slot_number, SEPARATOR, SLOTS};

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
    match rest.strip_prefix(SLOTS).and_then(slot_number) {
        Some(slot) => Listed::Slot {
            name: base.to_string(),
            slot,
        },
        None => Listed::Beside,
    }
}

#[cfg(test)]
mod tests {
    use super::super::latch::LatchKeys;
    use super::super::lock::{fence, queue, readers, LockKeys};
    use super::*;

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
            keys.history(),
            keys.index(),
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
}
