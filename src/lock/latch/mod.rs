//! A countdown latch on N independent servers: `set` makes latch NAME expect COUNT distinct ids,
//! `done` counts one id down, `wait` returns once COUNT distinct ids are counted. For "run the
//! report after the three ETL jobs on three hosts are done".
//!
//! On each server a latch is one hash (`keys::LatchKeys`): its count in the `␟count` field, and
//! one field per id counted down holding that count-down's record, a token made for it (who:
//! host and pid; when: its wall clock). The hash lives for the latch's TTL from its creation on
//! that server; nothing extends it.
//!
//! Why the latch never opens early and never misses a count-down:
//! 1. **Only a count-down writes an id.** The one script that adds a field (lua.rs, `TOUCH`)
//!    adds the id its `done` was given, and only if absent (`HSETNX`). So every id any server
//!    shows was counted down by a `done` run with it, whatever servers are down, stopped, slow or
//!    restarted empty; and an id counted down twice (a retried job) is one field, counted once.
//! 2. **`done` exits 0 only once its id is recorded on a quorum.** The replies of one round
//!    count (rounds.rs); a server that already had the id counts as recorded.
//! 3. **A waiter opens on the union over a quorum.** It needs a quorum of servers holding the
//!    latch with one count C (a minority holding another count, a stale latch of the same name,
//!    cannot lower it), and the ids it has seen from those servers, together, numbering at least
//!    C (verdict.rs). Any two quorums share a server, so the union over any quorum includes every
//!    id whose `done` exited 0: a count-down that reached a quorum is never missed. And by (1)
//!    the union holds only ids that were counted down: a minority down adds nothing, a server
//!    restarted empty shows fewer ids, never more, so the latch opens only after C distinct ids
//!    ran `done`. (A `done` that reached some servers but not a quorum exits 69 and may still
//!    have opened the latch: its job did finish, and running it again counts nothing twice.)
//! 4. **Waking costs one message per count-down, not a read per waiter.** A `done` that records
//!    a new id publishes, on the latch's channel, the count, how many ids that server now holds,
//!    the id and its record (`Heard`). A waiter subscribes before its second read, adds what it
//!    hears to that server's copy, and reads again only when a server says it holds more ids
//!    than the waiter saw from it (a message was lost). So a thousand waiters cost one PUBLISH
//!    per count-down per server, and no reads. A notification only adds an id a server
//!    recorded; a periodic re-read (`RECHECK`) and a read when the latch expires are the
//!    safety net for lost ones (wait.rs).
//! 5. **Expiry and repair.** A waiter that saw the latch on a quorum and then sees it on fewer
//!    (expired, or lost) stops with 75 and says so. A `done` that finds the latch missing on
//!    some servers (restarted empty) and present on others re-creates it there with the count
//!    the others hold and the shortest TTL they have left, so a repair never outlives the latch.
//!    A `done` on a latch no server that answered knows is an error, not a silent create,
//!    unless it was given `--count` (then it is `set` and `done` in one round).
//!
//! - model.rs: a latch, its shape and one server's copy; lua.rs: the scripts and the message;
//!   rounds.rs: set, done, read and list, one round each;
//!   view.rs: what the servers showed, merged; verdict.rs: the verdict on it (rule 3);
//!   wait.rs: waiting for it to open.

mod lua;
mod model;
mod rounds;
mod verdict;
mod view;
mod wait;

pub(crate) use model::{Latch, Shape, MAX_COUNT};
pub(crate) use rounds::{LatchError, Listed};
pub(crate) use verdict::{CountedId, Counting, LatchState};
pub(crate) use wait::{LatchWait, LatchWake, Waited};

#[cfg(test)]
pub(super) use lua::scripts;
