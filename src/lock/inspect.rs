//! Looking at a target without taking it: what each server holds of each of its keys and who
//! waits in its queue, which slot a token holds, and the forced delete for stuck locks. Every
//! lock under a prefix is list.rs's; the verdict on what the servers said is verdict.rs's.

use super::engine::{LockError, Redlock};
use super::fence;
use super::keys::{self, Layout};
use super::limit::{self, Limit};
use super::nodes::Reply;
use super::queue::{self, HandOver};
use super::script::{lua, lua_part, Constant, Lua};
use super::target::Target;
use super::verdict::{describe_state, key_state, KeyState, ServerState};
use crate::clock::BootInstant;
use std::collections::BTreeMap;
use std::time::Duration;

/// What one server holds of a target, its fences included, in one round trip
/// (inspect/inspect.lua).
pub(super) static INSPECT: Lua = lua!(
    fence::READ,
    lua_part!("inspect/inspect.lua").naming(&[Constant::number("MAX_WAITERS", MAX_WAITERS)]),
);

/// `release --force` (inspect/force_release.lua).
pub(super) static FORCE_RELEASE: Lua = lua!(
    queue::FUNCTIONS,
    queue::FREED,
    limit::FUNCTIONS,
    lua_part!("inspect/force_release.lua"),
);

/// The most waiters `status` lists.
const MAX_WAITERS: usize = 1000;

/// What every server holds of a target.
pub(crate) struct Inspection {
    /// Per key of the target (one for a mutex, one per slot, in order): every server's view.
    pub(crate) keys: Vec<Vec<ServerState>>,
    /// Per key, every server's fencing counter: the last fence issued and the token it went to
    /// (`None` where the server did not answer), for `fence::holder_fence`.
    pub(crate) fences: Vec<Vec<Option<Counter>>>,
    /// Who waits, in arrival order, over every server that answered.
    pub(crate) waiters: Vec<QueuedWaiter>,
    /// What the servers record as the number of slots of the semaphore of the target's name,
    /// for a mutex's target too.
    pub(crate) limit: Limit,
    /// When the round started: what the servers showed is at least this old.
    pub(crate) started: BootInstant,
}

/// A fencing counter as a server shows it: the last fence issued, and the token it went to.
pub(crate) type Counter = (u64, Option<String>);

/// One waiter in a target's queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueuedWaiter {
    /// The token that names the waiter (its holder facts say who waits).
    pub(crate) token: String,
    /// Whether it waits for a shared lock.
    pub(crate) shared: bool,
    /// When it started waiting, in unix ms (its earliest score on any server).
    pub(crate) since_unix_ms: u64,
    /// On how many servers it is queued.
    pub(crate) servers: usize,
}

impl Redlock {
    /// Deletes `key` (one of `target`'s) on every server whatever its value, handing it to the
    /// next waiter. Returns what each server removed.
    pub(crate) fn force_release(&mut self, target: &Target, key: &str) -> Vec<ServerState> {
        let hand_over = HandOver::new(target, self.nodes.timeout(), None);
        let readers = keys::readers(key);
        let settle = limit::settle_keys(target);
        let started = BootInstant::now();
        let replies = self.nodes.round_everywhere(|con| {
            let layout = Layout::of(con);
            let mut invocation = FORCE_RELEASE.key(&*layout.name(key));
            invocation
                .key(&*layout.name(&hand_over.queue))
                .key(&*layout.name(&readers))
                .key(layout.names(&settle));
            let (removed, value, kind): (i64, Option<String>, String) =
                hand_over.args(&mut invocation).invoke(con)?;
            Ok(if removed == 1 {
                key_state(&kind, value, -1)
            } else {
                KeyState::Absent
            })
        });
        self.observe(
            "force-release",
            key,
            &replies,
            started,
            None,
            describe_state,
        );
        self.states(replies)
    }

    /// What every server knows about each of `target`'s keys, and who waits for it.
    pub(crate) fn inspect(&mut self, target: &Target) -> Inspection {
        let mut script_keys = target.all_keys();
        let counters: Vec<String> = script_keys.iter().map(|key| keys::fence(key)).collect();
        script_keys.extend(counters);
        script_keys.push(target.readers());
        script_keys.push(target.limit_key());
        script_keys.push(target.queue());
        let started = BootInstant::now();
        type Found = (
            Vec<(String, Option<String>, i64, Counter)>,
            Vec<String>,
            Vec<(String, i64)>,
            Option<String>,
        );
        let replies = self.nodes.round(|con| {
            let layout = Layout::of(con);
            let mut invocation = INSPECT.prepare_invoke();
            for key in &script_keys {
                invocation.key(&*layout.name(key));
            }
            let found: Found = invocation.invoke(con)?;
            Ok(found)
        });
        self.observe(
            "inspect",
            &target.stem(),
            &replies,
            started,
            None,
            |(found, _, _, _)| {
                let held = found.iter().filter(|(kind, ..)| kind != "none").count();
                match found.len() {
                    1 => (if held == 1 { "held" } else { "absent" }.into(), held == 1),
                    n => (format!("{held} of {n} slots taken"), held > 0),
                }
            },
        );
        let mut waiters: BTreeMap<String, QueuedWaiter> = BTreeMap::new();
        for (_, entries, _, _) in replies
            .iter()
            .filter_map(|reply| reply.result.as_ref().ok())
        {
            for pair in entries.chunks(2) {
                let [entry, score] = pair else { continue };
                let since = score.parse::<f64>().map_or(0, |s| s.max(0.0) as u64);
                let (token, shared) = queue::entry_token(entry);
                let waiting = waiters.entry(entry.clone()).or_insert(QueuedWaiter {
                    token: token.to_string(),
                    shared,
                    since_unix_ms: since,
                    servers: 0,
                });
                waiting.servers += 1;
                waiting.since_unix_ms = waiting.since_unix_ms.min(since);
            }
        }
        let mut waiters: Vec<QueuedWaiter> = waiters.into_values().collect();
        waiters.sort_by(|a, b| (a.since_unix_ms, &a.token).cmp(&(b.since_unix_ms, &b.token)));
        let keys = (0..target.width())
            .map(|index| {
                self.servers()
                    .iter()
                    .zip(&replies)
                    .map(|(server, reply)| ServerState {
                        server: server.display.clone(),
                        master: reply.result.is_ok().then(|| server.master()).flatten(),
                        node: reply.result.is_ok().then(|| server.node()).flatten(),
                        state: match &reply.result {
                            Ok((found, _, readers, _)) => Ok(found.get(index).map_or(
                                KeyState::Absent,
                                |(kind, value, pttl, _)| {
                                    with_readers(key_state(kind, value.clone(), *pttl), readers)
                                },
                            )),
                            Err(err) => Err(err.clone()),
                        },
                        latency: reply.latency,
                    })
                    .collect()
            })
            .collect();
        let fences = (0..target.width())
            .map(|index| {
                replies
                    .iter()
                    .map(|reply| {
                        let (found, ..) = reply.result.as_ref().ok()?;
                        found.get(index).map(|(.., counter)| counter.clone())
                    })
                    .collect()
            })
            .collect();
        let limit = Limit::of(
            replies
                .iter()
                .filter_map(|reply| reply.result.as_ref().ok())
                .map(|(_, _, _, limit)| limit::parse(limit.as_deref())),
        );
        Inspection {
            keys,
            fences,
            waiters,
            limit,
            started,
        }
    }

    /// Which of `target`'s keys `token` holds: a mutex's own key (no round), or the slot most
    /// servers show it in; `LimitMismatch` when the servers record another number of slots.
    pub(crate) fn find_key(&mut self, target: &Target, token: &str) -> Result<String, LockError> {
        let Some(slots) = target.limit() else {
            return Ok(target.key(0));
        };
        let inspection = self.inspect(target);
        if let Some(slots) = inspection.limit.other_than(slots) {
            return Err(LockError::LimitMismatch { slots });
        }
        let mut best: Option<(usize, usize)> = None;
        for (index, servers) in inspection.keys.iter().enumerate() {
            let holding = servers
                .iter()
                .filter(
                    |s| matches!(&s.state, Ok(KeyState::Present { token: t, .. }) if t == token),
                )
                .count();
            if holding > 0 && best.is_none_or(|(_, most)| holding > most) {
                best = Some((index, holding));
            }
        }
        if let Some((index, _)) = best {
            return Ok(target.key(index));
        }
        let answered = inspection.keys.first().map_or(0, |servers| {
            servers.iter().filter(|s| s.state.is_ok()).count()
        });
        if answered >= self.quorum() {
            Err(LockError::NotHeld {
                acted: 0,
                undone: 0,
            })
        } else {
            Err(LockError::Unavailable {
                detail: format!(
                    "no quorum: {answered} of {} servers answered, {} needed",
                    self.nodes.len(),
                    self.quorum()
                ),
            })
        }
    }

    fn states(&self, replies: Vec<Reply<KeyState>>) -> Vec<ServerState> {
        self.servers()
            .iter()
            .zip(replies)
            .map(|(server, reply)| ServerState {
                server: server.display.clone(),
                master: reply.result.is_ok().then(|| server.master()).flatten(),
                node: reply.result.is_ok().then(|| server.node()).flatten(),
                state: reply.result,
                latency: reply.latency,
            })
            .collect()
    }
}

/// A key marked shared, with the shared holders the server listed (`INSPECT`, `list`).
pub(super) fn with_readers(state: KeyState, readers: &[(String, i64)]) -> KeyState {
    match state {
        KeyState::Present { token, ttl } if token == keys::SHARED => KeyState::Shared {
            readers: readers
                .iter()
                .map(|(token, left)| {
                    let left = Duration::from_millis(u64::try_from(*left).unwrap_or(0));
                    (token.clone(), left)
                })
                .collect(),
            ttl,
        },
        other => other,
    }
}
