//! Every Redis key and channel name redlock writes or reads, built and taken apart here and
//! nowhere else: the lock key, a semaphore's slots and limit, a lock's queue of waiters and their
//! wake-up channels, the reservation a release leaves for the waiter it woke, fencing counters,
//! a name's run history, and a latch's key, count field and channel.
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
//! | run history of the name (a list, newest first; lock/history.rs) | `<prefix><NAME>␟history` |
//! | latch NAME (a hash: `␟count`, then one field per id counted down) | `<prefix><NAME>␟latch` |
//! | channel of a latch's count-downs | `<prefix><NAME>␟latch␟wake` |
//! | index of the lock, slot and latch keys set under the prefix (a sorted set; lock/list.rs) | `<prefix>␟index` |
//!
//! A lock name cannot contain a control character (`config` refuses it), so no lock's key can
//! ever be one of these names, under any prefix without one. A latch name and a count-down id
//! are held to the same rule, so a latch NAME and a lock NAME never share a key, and no id is
//! ever the latch's `␟count` field. A released lock handed to a waiter holds the value
//! `next:<waiter>` for a moment (`RESERVATION`), and a lock held by shared holders holds
//! `SHARED`: values, not keys, but named here so that the scripts and `status` agree on them.
//!
//! - lock.rs: a lock's names (the separator and every suffix but the latch's); latch.rs: a
//!   latch's; values.rs: `RESERVATION` and `SHARED`.
//! - listed.rs: what a key a `SCAN` found under the prefix is.
//! - cluster.rs: the same names on a Redis Cluster, each in its lock key's hash slot (`Layout`).

mod cluster;
mod latch;
mod listed;
mod lock;
mod values;

pub(crate) use cluster::Layout;
pub(crate) use latch::{latch_name, LatchKeys, LATCH_COUNT};
pub(crate) use listed::{parse, Listed};
pub(crate) use lock::{
    fence, index, owner, queue, readers, slot_of, wake_prefix, LockKeys, SEPARATOR,
};
pub(crate) use values::{is_reservation, RESERVATION, SHARED};
