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
//! 2. **`done` exits 0 only once its id is recorded on a quorum.** The replies of its rounds
//!    count (write.rs); a server that already had the id counts as recorded.
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
//!    the id and its record (`LatchHeard`). A waiter subscribes before its second read, adds what it
//!    hears to that server's copy, and reads again only when a server says it holds more ids
//!    than the waiter saw from it (a message was lost). So a thousand waiters cost one PUBLISH
//!    per count-down per server, and no reads. A notification only adds an id a server
//!    recorded; a periodic re-read (`RECHECK`) and a read when the latch expires are the
//!    safety net for lost ones (wait.rs).
//! 5. **Expiry.** A waiter that saw the latch on a quorum and then sees it on fewer (expired,
//!    or lost) stops with 75 and says so.
//! 6. **A count comes only from the user or from a majority of all servers, and a refusal
//!    writes nothing** (write.rs, decide.rs). Rule 3 trusts the count a quorum holds, so what
//!    matters is how a server comes to hold a count. A first round never creates: it checks
//!    the count and counts the id down where the latch exists. Only then may a second round
//!    give the latch to the servers that answered without it:
//!    - **Repair**: a majority of *all* servers (not of those that answered) holds it with one
//!      count C. The others get C, with the shortest TTL the holders have left, so a repair
//!      never outlives the latch. A plurality is not enough: with two servers restarted empty
//!      and one stopped, the two that answered with some count may be a stale minority.
//!    - **Create**: `set` (or `done`/`wait` with `--count`) asked for N, no server that
//!      answered holds another count, and the servers without it with those holding N make a
//!      quorum. Then no count was established: one held by a quorum would show on a server of
//!      any quorum that answered, unless a majority had lost it (below).
//!
//!    A run refused on what the servers showed (75: another count, or no majority; 64) takes
//!    back what it wrote: the latch where this run created it and nothing else is in it, and
//!    its id where it holds this run's record (lua/withdraw.lua), also on a server that did not
//!    answer, behind the request. A run that could not tell (69: too few answered) takes back
//!    nothing, as rule 3 says: its job did finish, and its retry counts nothing twice.
//!
//!    **Restarts.** A server restarted empty holds no count at all, never another one: it is
//!    given one back only by a repair (a majority's count) or by a creation that found no other
//!    count on a quorum that answered. So while a majority of servers keeps the latch, no server
//!    ever holds another count, whatever a minority restarts, stops or is refused. Say count 3
//!    on five servers, servers 1 and 2 restarted empty: `set --count 2` sees count 3 and writes
//!    nothing; then server 3 restarts empty and server 4 stops: only server 5 holds the latch,
//!    no majority can, and `done` refuses (75) and writes nothing (server 4 may apply it when it
//!    runs again, and then two servers hold count 3: still not a quorum). The latch is then
//!    lost, as a lock is when a majority restarts empty: it never opens, and `set` with its
//!    count creates it again where it is missing. If a majority loses it and only those answer,
//!    a `set` with another count creates that one: as for locks, persistence or a delayed
//!    restart is what keeps a majority from forgetting at once (docs/recipes.md).
//!
//!    **Races.** Two runs setting different counts at once: each server takes one of them
//!    (the script is atomic), so at most one reaches a quorum, and the other takes its
//!    copies back. A concurrent `set` of the same count may count a copy the refused run then
//!    deletes as one of its votes; that can only make the latch hold on fewer servers (it opens
//!    later, never earlier), and a second `set` puts it back. Likewise a refused `done` removes
//!    its id only while the id holds its own record, which a concurrent retry of the same id
//!    may have counted as already there: that count-down is then missed until it is retried.
//! 7. **A count-down with no count.** `done` on a latch no server that answered knows is an
//!    error (64), not a silent create, unless it was given `--count` (then it is `set` and
//!    `done` in one run).
//!
//! - model.rs: a latch, its shape and one server's copy; lua.rs: the scripts and the message;
//!   rounds.rs: the request, read and list, one round each; decide.rs: what a first round
//!   allows (rule 6); write.rs: set and done;
//!   view.rs: what the servers showed, merged; verdict.rs: the verdict on it (rule 3);
//!   wait.rs: waiting for it to open.

mod decide;
mod lua;
mod model;
mod rounds;
mod verdict;
mod view;
mod wait;
mod write;

pub(crate) use decide::LatchError;
pub(crate) use model::{Latch, Shape, MAX_COUNT};
pub(crate) use rounds::{read, Listed};
pub(crate) use verdict::{CountedId, Counting, LatchState};
pub(crate) use wait::{LatchWait, Waited};

#[cfg(test)]
pub(super) use lua::scripts;
