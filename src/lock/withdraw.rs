//! Step 4 of an attempt (attempt.rs): deleting what the round set and did not win, and the
//! queue's step 5 (queue/mod.rs): a waiter leaving the queue when it won or gave up, passing on
//! any reservation left for it. Both go out as one script, sent with its source because it may
//! follow a request whose reply is late (`Lua::eval`).

use super::engine::Redlock;
use super::keys::Layout;
use super::limit;
use super::nodes::{Cleanup, NodeError, Pending, Reply};
use super::queue::{self, HandOver, Waiter};
use super::quorum;
use super::script::{lua, lua_part, Lua};
use super::shared;
use super::target::Target;
use super::vote::Vote;
use crate::server::Session;
use std::sync::Arc;

/// The clean-up after an attempt, and a waiter's leaving (withdraw/withdraw.lua).
pub(super) static WITHDRAW: Lua = lua!(
    queue::FUNCTIONS,
    shared::FUNCTIONS,
    limit::FUNCTIONS,
    lua_part!("withdraw/withdraw.lua"),
);

/// What one attempt does after its round: delete `keys` where they hold our token, and leave
/// the queue when `leave` names the waiter (its entry).
#[derive(Clone)]
struct Withdrawal {
    /// The target's keys, its readers for a shared target or its limit key for a semaphore,
    /// then its queue.
    keys: Vec<String>,
    shared: bool,
    semaphore: bool,
    token: String,
    /// The key a grant holds: our token stays there.
    kept: String,
    leave: Option<String>,
    wake_prefix: String,
    reserve_ms: u64,
}

impl Withdrawal {
    fn new(target: &Target, timeout: std::time::Duration) -> Withdrawal {
        let hand_over = HandOver::new(target, timeout, None);
        let mut keys = target.all_keys();
        if target.is_shared() {
            keys.push(target.readers());
        }
        let semaphore = target.limit().is_some();
        if semaphore {
            keys.push(target.limit_key());
        }
        keys.push(hand_over.queue);
        Withdrawal {
            keys,
            shared: target.is_shared(),
            semaphore,
            token: String::new(),
            kept: String::new(),
            leave: None,
            wake_prefix: hand_over.wake_prefix,
            reserve_ms: hand_over.reserve_ms,
        }
    }

    fn send(&self, con: &mut Session) -> redis::RedisResult<()> {
        let entry = self.leave.clone().unwrap_or_default();
        let layout = Layout::of(con);
        let _: i64 = WITHDRAW
            .eval(&layout.names(&self.keys))
            .arg(&self.token)
            .arg(entry)
            .arg(&self.wake_prefix)
            .arg(self.reserve_ms)
            .arg(&*layout.name(&self.kept))
            .arg(if self.shared { "1" } else { "0" })
            .arg(if self.semaphore { "1" } else { "0" })
            .query(con)?;
        Ok(())
    }
}

impl Redlock {
    /// Step 4 of the module comment, and after a grant step 5 of the queue's: the winner leaves
    /// the queue on the servers that refused it (a refused waiter joins it), and, behind their
    /// late reply, on those the round did not wait for.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tidy(
        &mut self,
        target: &Target,
        token: &str,
        waiter: Option<&Waiter>,
        kept: Option<&str>,
        replies: &[Reply<Vote>],
        unasked: &[bool],
        pending: Pending<Vote>,
    ) {
        let granted = kept.is_some();
        let withdrawal = Withdrawal {
            token: token.to_string(),
            kept: kept.unwrap_or_default().to_string(),
            leave: waiter.filter(|_| granted).map(|w| w.entry.clone()),
            ..Withdrawal::new(target, self.nodes.timeout())
        };
        let kept_index =
            kept.and_then(|kept| (0..target.width()).find(|&index| target.key(index) == kept));
        let late: Cleanup<Vote> = {
            let withdrawal = withdrawal.clone();
            Arc::new(move |con, vote: Option<&Vote>| {
                let needed = match vote {
                    // No answer: the SET may have landed (left alone after a grant, unless it
                    // may have set another slot of a semaphore, or the waiter stayed queued).
                    None => !granted || withdrawal.semaphore || withdrawal.leave.is_some(),
                    Some(vote) => match vote.won {
                        Some(index) => Some(index) != kept_index,
                        None => withdrawal.leave.is_some(),
                    },
                };
                if needed {
                    withdrawal.send(con)?;
                }
                Ok(())
            })
        };
        // A grant goes on to run its command: a queue place or a semaphore slot it may have
        // left on a late server must not wait for the next round to be cleaned up.
        let at_once = granted && (withdrawal.semaphore || withdrawal.leave.is_some());
        self.nodes.settle(pending, Some(late), at_once);
        let targets: Vec<bool> = replies
            .iter()
            .zip(unasked)
            .map(|(reply, unasked)| {
                !unasked
                    && match &reply.result {
                        Ok(vote) if vote.won.is_some() => vote.won != kept_index,
                        // Refused: nothing of ours to delete; after a grant, a queue to leave.
                        Ok(_) => withdrawal.leave.is_some(),
                        // No answer: the SET may have landed (left alone after a grant).
                        Err(NodeError::Down(_) | NodeError::NotWaitedFor) => !granted,
                        Err(NodeError::ForeignType) => false,
                    }
            })
            .collect();
        if targets.contains(&true) {
            self.nodes
                .round_on(&targets, |con| withdrawal.send(con).map(|()| true));
        }
    }

    /// A waiter that gives up leaves the queue on every server, stops its listeners, and passes
    /// on any reservation a release left for it. Decided once a quorum answered: nothing is
    /// reported of it, and a late leave does on a minority what it would have done in time (a
    /// place it does not remove there lapses with its lease, queue/mod.rs), so a stopped minority
    /// does not cost a waiter that gives up the whole --timeout.
    pub(super) fn leave(&mut self, target: &Target, waiter: &Waiter) {
        let withdrawal = Withdrawal {
            leave: Some(waiter.entry.clone()),
            ..Withdrawal::new(target, self.nodes.timeout())
        };
        let patient = self.observer.is_some();
        self.nodes.round_decided(
            |con| withdrawal.send(con),
            |replies| !patient && quorum::settled(replies, |_| true),
        );
    }
}
