//! Step 4 of an attempt (attempt.rs): deleting what the round set and did not win, and the
//! queue's step 5 (queue/mod.rs): a waiter leaving the queue when it won or gave up. Both go
//! out as one small script, sent with its source because it may follow a request whose reply is
//! late (`Lua::eval`).

use super::nodes::{Cleanup, NodeError, Pending, Reply};
use super::queue::{self, Waiter};
use super::script::Lua;
use super::target::Target;
use super::vote::Vote;
use super::Redlock;
use std::sync::Arc;

/// The clean-up after an attempt: deletes our token (ARGV[1]) from whichever of KEYS (all but
/// the last) hold it, and with an entry (ARGV[2]) leaves the queue (the last key), telling the
/// listeners on ARGV[3] to stop. It wakes nobody: what it deletes never was a grant.
fn withdraw_source() -> String {
    format!(
        "{}{}",
        queue::LEAVE,
        r"
for i = 1, #KEYS - 1 do
  if redis.call('type', KEYS[i]).ok == 'string' and redis.call('get', KEYS[i]) == ARGV[1] then
    redis.call('del', KEYS[i])
  end
end
if ARGV[2] ~= '' then queue_leave(KEYS[#KEYS], ARGV[2], ARGV[3]) end
return 1"
    )
}

static WITHDRAW: Lua = Lua::new(withdraw_source);

/// What one attempt does after its round: delete `keys` where they hold our token, and leave
/// the queue when `leave` names the waiter.
#[derive(Clone)]
struct Withdrawal {
    keys: Vec<String>,
    token: String,
    leave: Option<(String, String)>,
}

impl Withdrawal {
    fn send(&self, con: &mut redis::Connection) -> redis::RedisResult<()> {
        let (entry, prefix) = self.leave.clone().unwrap_or_default();
        let _: i64 = WITHDRAW
            .eval(&self.keys)
            .arg(&self.token)
            .arg(entry)
            .arg(prefix)
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
        let mut keys: Vec<String> = target
            .all_keys()
            .into_iter()
            .filter(|key| Some(key.as_str()) != kept)
            .collect();
        keys.push(target.queue());
        let withdrawal = Withdrawal {
            keys,
            token: token.to_string(),
            leave: waiter
                .filter(|_| granted)
                .map(|w| (w.entry.clone(), w.told_prefix(target))),
        };
        let kept_index =
            kept.and_then(|kept| (0..target.width()).find(|&index| target.key(index) == kept));
        let late: Cleanup<Vote> = {
            let withdrawal = withdrawal.clone();
            Arc::new(move |con, vote: Option<&Vote>| {
                let needed = match vote {
                    // No answer: the SET may have landed (left alone after a grant).
                    None => !granted,
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
        pending.settle(Some(late));
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
                        Err(NodeError::Down(_)) => !granted,
                        Err(NodeError::ForeignType) => false,
                    }
            })
            .collect();
        if targets.contains(&true) {
            self.nodes
                .round_on(&targets, |con| withdrawal.send(con).map(|()| true));
        }
    }

    /// A waiter that gives up leaves the queue on every server and stops its listeners.
    pub(super) fn leave(&mut self, target: &Target, waiter: &Waiter) {
        let withdrawal = Withdrawal {
            keys: vec![target.queue()],
            token: String::new(),
            leave: Some((waiter.entry.clone(), waiter.told_prefix(target))),
        };
        self.nodes.round(|con| withdrawal.send(con));
    }
}
