//! Fencing numbers (`--fence`): every grant of a lock name gets a number greater than that of
//! every earlier grant of the name, for the protected resource to remember and refuse to go back
//! from (Kleppmann, "How to do distributed locking", 2016).
//!
//! The construction is a quorum register over per-server counters.
//!
//! 1. The acquire round, on every server that grants (SET NX succeeds), also reads that server's
//!    counter for the key, atomically with the SET (the acquire script of attempt.rs, given the
//!    counters as keys after the candidates: no extra round). A round decided early reads the counters of the
//!    quorum that decided it, which is all the argument below needs.
//! 2. With a quorum granted and validity left, `fence = max(those counters) + 1`.
//! 3. One more round, on the servers that granted only, runs a compare-on-token script: if the
//!    lock key still holds our token, `counter = max(counter, fence)`. The grant counts only if
//!    a quorum of servers confirms that write, and only if validity measured from the original
//!    T1 is still positive after this round; otherwise the acquisition fails and is deleted
//!    everywhere, exactly like one without a quorum.
//!
//! Why the numbers only grow. Let grant G1 get fence F1 and a later grant G2 get F2; G1 counted
//! only after its write-back landed on a quorum W1, and G2 was granted by a quorum Q2. Two
//! majorities intersect: take a server s in both. On s, the lock key held G1's token without a
//! break from G1's SET NX to G1's write-back (only G1 ever writes that token, and NX cannot
//! overwrite it), so G2's SET NX on s, which needs the key absent, came either before G1's SET
//! or after G1's write-back. Before is impossible for a later grant: G2's key on s would have
//! had to vanish before G1 took s, so G2's validity (which ends before its key can expire,
//! thanks to the drift allowance) ended before G1 was even granted. So G2's SET on s came after
//! G1's write-back, and the same script that did that SET read s's counter, already >= F1:
//! F2 >= F1 + 1. The compare-on-token matters: a paused holder's late write-back cannot land
//! where it no longer holds the key, so it can never raise a counter "behind" a later grant's
//! read and make W1 a quorum it never held.
//!
//! Counters only ever grow (a write that is not larger is skipped) and never expire. Like the
//! lock itself this needs servers that keep their data: a server that restarts empty forgets
//! its counter. That is harmless only when every later quorum still meets the write-back quorum
//! on a server that kept it (the test `fence_survives_the_split_quorum_schedule` restarts one in
//! such a schedule); the write-back reaches a quorum, not everyone, so a later quorum that meets
//! it only on the restarted server reads an old number. Hence persistence for fencing
//! (docs/recipes.md); a delayed restart, which is enough for the locks, is not enough for the
//! counters.
//!
//! The counter key is `keys::fence` of the lock (or slot) key, a small hash
//! with fields `fence` (the counter) and `token` (the holder it was last issued to, so that
//! `status` can tell whether the current holder has a fence). Lock names cannot contain control
//! characters, so no lock name's key can collide with it.

use super::engine::{Held, LockError, Redlock};
use super::keys::{self, Layout};
use super::nodes::Reply;
use super::quorum::{self, tally};
use super::script::{lua, lua_part, Lua, Part};
use crate::clock::BootInstant;
use std::time::Duration;

/// The write-back of step 3 (fence/write.lua).
pub(super) static WRITE_FENCE: Lua = lua!(lua_part!("fence/write.lua"));

/// How a counter is read, for the script that shows it with its lock (fence/read.lua, a part
/// of inspect.rs's `INSPECT`): `status` learns the holder's fence in the same round trip.
pub(super) const READ: Part = lua_part!("fence/read.lua");

impl Redlock {
    /// Steps 2 and 3 above for a lock just granted on `key`. `counters` has, for each server
    /// that granted, the counter its acquire script read, and `None` for the others. Returns
    /// the grant with its fence, or why it does not count (the caller cleans up).
    pub(super) fn write_fence(
        &mut self,
        held: Held,
        counters: &[Option<u64>],
    ) -> Result<Held, LockError> {
        let fence = counters.iter().flatten().max().copied().unwrap_or(0) + 1;
        let targets: Vec<bool> = counters.iter().map(Option::is_some).collect();
        let key = held.key.clone();
        let counter_key = keys::fence(&key);
        let started = BootInstant::now();
        // Decided once a quorum wrote it: the argument above needs a quorum W1, no more; a late
        // write-back raises a counter to a number already issued, which is harmless.
        let patient = self.observer.is_some();
        let written = |written: &Option<bool>| *written == Some(true);
        let replies: Vec<Reply<Option<bool>>> = self
            .nodes
            .round_on_decided(
                &targets,
                |con| {
                    let layout = Layout::of(con);
                    let written: i64 = WRITE_FENCE
                        .key(&*layout.name(&key))
                        .key(&*layout.name(&counter_key))
                        .arg(&held.token)
                        .arg(fence)
                        .invoke(con)?;
                    Ok(Some(written == 1))
                },
                |replies| !patient && quorum::settled(replies, written),
            )
            .into_iter()
            .map(|reply| {
                reply.unwrap_or(Reply {
                    result: Ok(None),
                    at: started,
                    latency: Duration::ZERO,
                })
            })
            .collect();
        let outcome = tally(&replies, written);
        // Validity still counts from the acquire round's T1: the extra round is paid for out
        // of the same TTL.
        let validity = outcome
            .quorum_reached_at(self.quorum())
            .and_then(|at| quorum::validity(held.ttl, at.since(held.since)));
        self.observe(
            "fence",
            &key,
            &replies,
            started,
            validity,
            |written| match written {
                Some(true) => (format!("fence {fence} written"), true),
                Some(false) => ("not held by this token".into(), false),
                None => ("not asked (did not grant)".into(), false),
            },
        );
        match validity {
            Some(validity) => Ok(Held {
                validity,
                votes: outcome.yes,
                fence: Some(fence),
                ..held
            }),
            None => Err(LockError::Unavailable {
                detail: format!(
                    "fence {fence} was confirmed by {} of the {} servers needed with validity left",
                    outcome.yes,
                    self.quorum()
                ),
            }),
        }
    }
}

/// The fence of the lock's current holder `token`, from every server's counter (`None` where
/// a server did not answer): the counter where it was issued to that token (they agree; the
/// largest is taken).
pub(crate) fn holder_fence(fences: &[Option<(u64, Option<String>)>], token: &str) -> Option<u64> {
    fences
        .iter()
        .flatten()
        .filter(|(_, to)| to.as_deref() == Some(token))
        .map(|(fence, _)| *fence)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_fence_only_counts_counters_issued_to_the_holder() {
        let fences = [
            Some((7, Some("a".to_string()))),
            Some((9, Some("b".to_string()))),
            None,
        ];
        assert_eq!(holder_fence(&fences, "a"), Some(7));
        assert_eq!(holder_fence(&fences, "c"), None);
    }
}
