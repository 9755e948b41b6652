//! The queue of waiters: who waits for a lock, in which order, and how a release hands the lock
//! to the first of them instead of letting the whole crowd ask at once. This comment is the
//! protocol; functions.lua is its only text in Lua, and every script that touches the queue is
//! built from it.
//!
//! 1. **Join.** A waiting acquire that a server refuses joins that server's queue of the lock
//!    (`keys::queue`, a sorted set) under its entry, scored by when it started waiting (`ZADD
//!    NX`, so a waiter keeps its place across attempts). Every server must sort the same waiters
//!    alike, or a release would wake a different waiter on each and none would hear a quorum:
//!    each server's own clock at the join cannot give that (two waiters arriving together reach
//!    the servers in different orders), so the score is the waiter's own stamp, and the server's
//!    clock bounds it (`TIME` in the script): never later than the server's now, never earlier
//!    than `stamp_trusted` before it (a --timeout and a second, more than an honest stamp's age
//!    when its first request arrives). A waiter whose clock is behind, or ahead, is thus placed
//!    within that window of its arrival on the server's clock: it cannot pass a waiter that
//!    joined longer ago. The attempt's reply says the waiter's rank.
//!    Each join keeps the queue alive for at least half the waiter's lease, never shortening
//!    another waiter's: a live waiter asks again well within that, a crashed one is forgotten.
//! 2. **Listen.** A waiter subscribes on every server to its own channel, `keys::wake_prefix`
//!    followed by its entry, on the connection its attempts use, behind every attempt in the
//!    same burst (`Nodes::listen`): the server reads the SUBSCRIBE right after the script that
//!    queued it, so no release falls in between, the waiter listens during every pause,
//!    whichever attempt came before it, and needs no connection or thread more. (A Sentinel
//!    group's or a cluster's relay subscribes on a connection of its own before it runs the
//!    attempt handed over with the SUBSCRIBE, to the same effect: server/relay.rs.)
//! 3. **Hand over.** A release (or a hold that ends, or `release --force`) wakes the head of
//!    the queue: it publishes `go` on its channel, and if someone heard it, the head leaves the
//!    queue and the key is set to the reservation `next:<entry>` instead of being deleted; if
//!    nobody did (the waiter crashed or left), the entry is dropped and the next one tried, up to
//!    8. A shared waiter at the head is woken together with every shared waiter right behind it,
//!    a batch, and the reservation is then `next:readers`. A release never hands the lock to the
//!    releasing process's own entry. An attempt that finds a key free while a live waiter queued
//!    before it (or any, for an attempt not queued) does the same instead of setting it
//!    (`queue_defer`): a key that expired, a reservation that lapsed, or a newcomer's or a
//!    one-shot acquire's timing does not let anyone pass the head.
//! 4. **Take over.** The woken waiter asks as soon as a quorum of servers woke it (wait.rs), on
//!    the connections it listened on; on each server its acquire script replaces the reservation
//!    that names it with its token, exactly as a SET NX would have set a free key.
//!
//!    **What the reservation guarantees, and for how long.** From the hand-over on a server, for
//!    `reservation(timeout)` (twice the releaser's `--timeout`, at least 50 ms), only the woken
//!    head (or batch) can take the key there: every other SET, later waiter, newcomer or reader
//!    is refused, as by a held lock. That is the head's place in the queue from the moment it
//!    left it, until it has taken the key or refused it (a waiter that gives up passes a
//!    reservation naming it on, step 5). A live head asks within about one round trip of hearing
//!    the release (its own round trip is at most a `--timeout`, or it could win nothing), plus
//!    the wait for a quorum of wake-ups (`WAKE_GATHER`): well within twice a `--timeout`, also
//!    when its take-over is slow. A head that does not ask in that time (it crashed after it was
//!    woken, it is stopped, its network is partitioned) has its reservation lapse, and the key is
//!    free for the next waiter, whom the next attempt to find it free wakes (step 3): a head can
//!    hold up the others by one reservation at most.
//! 5. **Leave.** A waiter that wins leaves the queue on every server: in the script that granted
//!    it, then by a follow-up on the servers that refused it, and behind the late reply on the
//!    servers the round did not wait for. A waiter that gives up leaves the same way.
//!    A release that raced the win (it reached a server that had just refused the winner, while
//!    the winner was still queued there) may have left a reservation naming it: leaving passes
//!    any such reservation on to the next waiter, as a release would, so that nothing is kept
//!    for a waiter that no longer waits.
//!
//! Why this is safe: the queue never grants anything. Every grant is still a SET (NX, or over a
//! reservation naming the waiter) on a quorum of servers with validity left (attempt.rs). A
//! reservation is a lock held by nobody for a bounded time: it can only refuse others, so
//! exclusion is untouched; the same holds for a reservation an attempt makes for the head
//! instead of setting a free key (step 3). Why it keeps making progress: notifications and the
//! queue are optimisations only. A notification only makes a waiter ask sooner. A waiter whose
//! wake-up was lost, whose queue was dropped (a server restarted empty) or that was skipped
//! still asks on its own schedule (wait.rs), a dead waiter is skipped at once (nobody hears its
//! wake-up), and a reservation nobody takes expires, after which the next waiter is woken by
//! whoever finds the key free, or asks on its own schedule.

use super::keys::RESERVATION;
use super::script::{lua_part, Constant, Invocation, Part};
use super::target::Target;
use std::time::Duration;

/// The most shared waiters one release wakes together.
const BATCH_MAX: usize = 1000;
/// How many dead entries one release skips before it just deletes the key.
const DEAD_SKIPPED: usize = 8;
/// An entry for a shared waiter starts with this; any other entry is a single waiter's.
pub(crate) const SHARED_MARK: &str = "r:";
/// The reservation a release leaves for a batch of shared waiters.
pub(crate) const BATCH_RESERVATION: &str = "readers";

/// The queue's steps as Lua functions (functions.lua), for every script that takes one of them.
pub(super) const FUNCTIONS: Part = lua_part!("functions.lua").naming(&[
    Constant::text("RESERVATION", RESERVATION),
    Constant::text("BATCH_RESERVATION", BATCH_RESERVATION),
    Constant::text("SHARED_MARK", SHARED_MARK),
    Constant::number("DEAD_SKIPPED", DEAD_SKIPPED),
    Constant::number("BATCH_MAX", BATCH_MAX),
]);

/// The hand-over of the key a script frees (freed.lua), with `HandOver::args` its last
/// arguments; after `FUNCTIONS`.
pub(super) const FREED: Part = lua_part!("freed.lua");

/// How long a hand-over keeps the lock for the waiter it woke (step 4 says what that
/// guarantees): twice a `--timeout`, time for a live waiter to hear and answer however slow its
/// round trip, after which the next waiter may have it.
pub(crate) fn reservation(timeout: Duration) -> Duration {
    (timeout * 2).max(Duration::from_millis(50))
}

/// What a script that frees a key of `target` needs to hand it over: the queue is its second
/// key (the freed key the first), and these are its last three arguments, in this order
/// (freed.lua reads them there).
pub(crate) struct HandOver {
    pub(crate) queue: String,
    pub(crate) wake_prefix: String,
    pub(crate) reserve_ms: u64,
    own: String,
}

impl HandOver {
    /// A hand-over that wakes the first live waiter, never `own` (this process's entry).
    pub(crate) fn new(target: &Target, timeout: Duration, own: Option<&str>) -> HandOver {
        HandOver {
            queue: target.queue(),
            wake_prefix: target.wake_prefix(),
            reserve_ms: reservation(timeout).as_millis() as u64,
            own: own.unwrap_or_default().to_string(),
        }
    }

    /// Appends the three arguments `queue_hand_over` takes after the key and the queue.
    pub(crate) fn args<'a, 'l>(
        &self,
        invocation: &'a mut Invocation<'l>,
    ) -> &'a mut Invocation<'l> {
        invocation
            .arg(&self.wake_prefix)
            .arg(self.reserve_ms)
            .arg(&self.own)
    }
}

/// How much earlier than a server's clock a waiter's stamp may place it in the queue (step 1):
/// its first request's --timeout, and a second for a loaded client and NTP's skew.
pub(crate) fn stamp_trusted(timeout: Duration) -> Duration {
    timeout + Duration::from_secs(1)
}

/// A waiting acquire's place in the servers' queues.
pub(crate) struct Waiter {
    /// Its entry in the queue and the end of its channel's name: a fresh token (random, then the
    /// holder facts `status` shows as who waits), marked for a shared waiter.
    pub(crate) entry: String,
    /// When it started waiting, on its wall clock, in ms since the epoch: the queue's order,
    /// within what each server's clock allows (step 1).
    pub(crate) stamp_ms: u64,
    /// Whether an attempt of it was queued somewhere: a shared waiter no longer in a server's
    /// queue was then woken in a batch there (shared/acquire.lua).
    pub(crate) queued: bool,
    /// How long the queue is kept after it last asked: at least half of it is left each time.
    pub(crate) lease: Duration,
}

impl Waiter {
    /// The channel a release wakes it on (step 2): the target's wake prefix, then its entry.
    pub(crate) fn channel(&self, target: &Target) -> String {
        format!("{}{}", target.wake_prefix(), self.entry)
    }

    /// A waiter named by `id` (a fresh token) that retries about every `retry` (up to
    /// `longest_pause`) with rounds of up to `timeout`.
    pub(crate) fn new(id: String, longest_pause: Duration, timeout: Duration) -> Waiter {
        let stamp_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        Waiter {
            entry: id,
            stamp_ms,
            queued: false,
            // Two of our longest pauses and a round, twice: a live waiter asks again well
            // within half of it.
            lease: (longest_pause * 2 + timeout) * 2,
        }
    }
}

/// The queue entry of a waiter named by `token`, marked when it waits for a shared lock.
pub(crate) fn entry(token: &str, shared: bool) -> String {
    if shared {
        format!("{SHARED_MARK}{token}")
    } else {
        token.to_string()
    }
}

/// Who an entry in a queue is, as `status` shows a waiter: the holder facts of its token, and
/// whether it waits for a shared lock.
pub(crate) fn entry_token(entry: &str) -> (&str, bool) {
    match entry.strip_prefix(SHARED_MARK) {
        Some(token) => (token, true),
        None => (entry, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::script::lua;

    #[test]
    fn the_reservation_is_twice_a_timeout_and_at_least_50_ms() {
        assert_eq!(
            reservation(Duration::from_millis(400)),
            Duration::from_millis(800)
        );
        assert_eq!(
            reservation(Duration::from_millis(10)),
            Duration::from_millis(50)
        );
    }

    #[test]
    fn a_stamp_is_bounded_by_the_servers_clock() {
        let lua = lua!(FUNCTIONS);
        let lua = lua.source();
        assert!(lua.contains("math.max(math.min(tonumber(stamp), now), now - tonumber(trusted))"));
        assert_eq!(
            stamp_trusted(Duration::from_millis(200)),
            Duration::from_millis(1200)
        );
    }

    #[test]
    fn shared_entries_are_told_apart() {
        assert_eq!(entry_token(&entry("abc", true)), ("abc", true));
        assert_eq!(entry_token(&entry("abc", false)), ("abc", false));
        assert_eq!(entry_token("r:abc"), ("abc", true));
        assert_eq!(entry_token("0123abc"), ("0123abc", false));
        // A redlock token starts with hex digits, never with the shared mark.
        assert!(!"0123456789abcdef".contains('r'));
    }

    #[test]
    fn the_lua_names_the_documented_reservations() {
        let lua = lua!(FUNCTIONS);
        let lua = lua.source();
        assert!(lua.starts_with("local RESERVATION = 'next:'\n"));
        assert!(lua.contains("\nlocal BATCH_RESERVATION = 'readers'\n"));
        assert!(lua.contains("\nlocal SHARED_MARK = 'r:'\n"));
        assert!(lua.contains("RESERVATION .. entry"));
        assert!(lua.contains("RESERVATION .. BATCH_RESERVATION"));
        assert!(lua.contains("== SHARED_MARK"));
    }
}
