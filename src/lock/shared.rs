//! Shared locks (`--shared`): any number of shared holders of a lock at once, or one exclusive
//! holder, never both, as `flock -s` and Redisson's read-write lock give, on N servers.
//!
//! How the holders are recorded, on each server. An exclusive holder is today's lock: the key
//! `<prefix><NAME>` holds its token. Shared holders share one value in that same key,
//! `keys::SHARED`, and each has an entry in the sorted set `keys::readers` (its token, scored by
//! when it expires on the server's clock); the key and the set expire with the last of them. A
//! shared grant on a server (`ACQUIRE`) adds an entry only where the key is absent or already
//! marked shared (or reserved for a batch of shared waiters, queue/mod.rs), and sets the key to
//! the mark; an exclusive grant is a `SET NX`, which the mark refuses. Clients that only know
//! `SET NX` (redsync, node-redlock, pottery, redis-py) are refused by the mark exactly as by a
//! writer's token, and the mark refuses nothing to redlock's shared holders.
//!
//! Why no exclusive grant overlaps a shared one. Each is granted as a lock is (attempt.rs): a
//! quorum of servers, validity = ttl − elapsed − drift from before the first request. Let a
//! writer W hold a quorum Qw and a reader R a quorum Qr, both within validity; two majorities
//! share a server s. On s, throughout W's validity the key holds W's token: only W's own release
//! or its expiry (after W's validity, by the drift allowance) can change it. Throughout R's
//! validity the key holds the mark: R's entry stays until its score passes (after R's
//! validity), every change to the set keeps the key's expiry at the last score, and the mark is
//! only removed when the set is empty (R's own release, or `release --force`). A key cannot hold
//! W's token and the mark at once, so the two validities do not overlap. A minority of servers
//! down, slow or paused changes nothing in this argument (it only needs the shared server s to
//! be one that answered both); a server restarted empty forgets holders like any Redlock server,
//! which docs/guarantees.md's persistence or delayed-restart rule covers for shared holders as for
//! exclusive ones.
//!
//! Why a reader that crashed stops counting after its TTL. Its entry is scored with its expiry
//! and removed by the next change to the set once that time has passed (`shared_settle`), and
//! the key and the set carry the expiry of their last entry, so with no live reader left both
//! simply expire. Nothing waits for a crashed reader longer than its TTL.
//!
//! Writers are not starved. A reader that arrives while an exclusive waiter that is still
//! listening (a live `--wait`) queued before it joins the queue behind that writer instead of
//! the current readers (`shared_writer_ahead`); if it finds the key free then, it wakes the
//! head of the queue and reserves the key for it (queue/mod.rs, step 3). When the last current
//! reader leaves, its release hands the lock to the head of the queue, the writer, and the
//! reservation keeps later readers out while the writer takes it over (step 4); when the
//! writer releases, the shared waiters behind it are woken together, and each of them, no
//! longer in the queue, is let in ahead of any writer still queued (it queued before, so it was
//! in the batch). The order in the queue only decides who asks first; a reader refused because
//! a writer waits is still a reader that asks again on its schedule, and a writer that crashed
//! stops listening and so stops holding readers back.

use super::history;
use super::keys;
use super::list;
use super::queue;
use super::script::{lua, lua_part, Constant, Lua, Part};

/// The shared holders' steps as Lua functions (shared/functions.lua), for the scripts that take
/// them.
pub(super) const FUNCTIONS: Part = lua_part!("shared/functions.lua").naming(&[
    Constant::text("SHARED", keys::SHARED),
    Constant::text("SHARED_MARK", queue::SHARED_MARK),
]);

/// The shared acquire (shared/acquire.lua): attempt.rs's `ACQUIRE` for a shared holder.
pub(super) static ACQUIRE: Lua = lua!(
    queue::FUNCTIONS,
    FUNCTIONS,
    list::INDEX,
    lua_part!("shared/acquire.lua").naming(&[
        Constant::text("SHARED", keys::SHARED),
        Constant::text("RESERVATION", keys::RESERVATION),
        Constant::text("BATCH_RESERVATION", queue::BATCH_RESERVATION),
    ]),
);

/// A shared holder leaves (shared/release.lua), recording its run.
pub(super) static RELEASE: Lua = lua!(
    queue::FUNCTIONS,
    queue::FREED,
    FUNCTIONS,
    history::RECORD,
    lua_part!("shared/release.lua"),
);

/// A shared holder's new TTL (shared/extend.lua).
pub(super) static EXTEND: Lua = lua!(FUNCTIONS, lua_part!("shared/extend.lua"));

/// Puts back a shared holder's expiry after a failed extension (shared/restore.lua).
pub(super) static RESTORE: Lua = lua!(FUNCTIONS, lua_part!("shared/restore.lua"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_name_the_mark_and_the_batch_reservation() {
        let source = ACQUIRE.source();
        assert!(source.contains("\nlocal SHARED = 'redlock:shared'\n"));
        assert!(source.contains("\nlocal BATCH_RESERVATION = 'readers'\n"));
        assert!(source.contains("== SHARED"));
        assert!(source.contains("== RESERVATION .. BATCH_RESERVATION"));
        let functions = lua!(FUNCTIONS);
        assert!(functions.source().contains("local SHARED_MARK = 'r:'\n"));
        assert!(functions.source().contains("~= SHARED_MARK"));
    }
}
