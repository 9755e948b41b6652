//! Looking at a target without taking it: what each server holds of each of its keys and who
//! waits in its queue, every lock under a prefix, which slot a token holds, and the forced
//! delete for stuck locks. The verdict on what the servers said is verdict.rs's.

use super::engine::{LockError, Redlock};
use super::keys::{self, Layout, Listed};
use super::limit::{self, Limit};
use super::nodes::{NodeError, Reply};
use super::queue::{self, HandOver};
use super::script::{Constant, Lua, Part};
use super::target::Target;
use super::verdict::{describe_state, key_state, KeyState, ServerState};
use crate::clock::BootInstant;
use std::collections::BTreeMap;
use std::time::Duration;

/// What one server holds of a target, in one round trip (inspect/inspect.lua).
pub(super) static INSPECT: Lua = Lua::new(&[Part::new(include_str!("inspect/inspect.lua"))
    .naming(&[Constant::number("MAX_WAITERS", MAX_WAITERS)])]);

/// The live shared holders of several locks (inspect/readers.lua).
pub(super) static READERS: Lua = Lua::new(&[Part::new(include_str!("inspect/readers.lua"))]);

/// `release --force` (inspect/force_release.lua).
pub(super) static FORCE_RELEASE: Lua = Lua::new(&[
    queue::FUNCTIONS,
    queue::FREED,
    limit::FUNCTIONS,
    Part::new(include_str!("inspect/force_release.lua")),
]);

/// The most waiters `status` lists.
const MAX_WAITERS: usize = 1000;

/// What every server holds of a target.
pub(crate) struct Inspection {
    /// Per key of the target (one for a mutex, one per slot, in order): every server's view.
    pub(crate) keys: Vec<Vec<ServerState>>,
    /// Who waits, in arrival order, over every server that answered.
    pub(crate) waiters: Vec<Waiting>,
    /// What the servers record as the number of slots of the semaphore of the target's name,
    /// for a mutex's target too.
    pub(crate) limit: Limit,
    /// When the round started: what the servers showed is at least this old.
    pub(crate) started: BootInstant,
}

/// One waiter in a target's queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Waiting {
    /// The token that names the waiter (its holder facts say who waits).
    pub(crate) token: String,
    /// Whether it waits for a shared lock.
    pub(crate) shared: bool,
    /// When it started waiting, in unix ms (its earliest score on any server).
    pub(crate) since_unix_ms: u64,
    /// On how many servers it is queued.
    pub(crate) servers: usize,
}

/// One server's keys under a prefix and its view of each, or why it could not say.
pub(crate) type Listing = Result<BTreeMap<String, KeyState>, NodeError>;

impl Redlock {
    /// Deletes `key` (one of `target`'s) on every server whatever its value, handing it to the
    /// next waiter. Returns what each server removed.
    pub(crate) fn force_release(&mut self, target: &Target, key: &str) -> Vec<ServerState> {
        let hand_over = HandOver::new(target, self.nodes.timeout(), None);
        let readers = keys::readers(key);
        let settle = limit::settle_keys(target);
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let layout = Layout::of(con);
            let mut invocation = FORCE_RELEASE.script().key(&*layout.name(key));
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
        script_keys.push(target.readers());
        script_keys.push(target.limit_key());
        script_keys.push(target.queue());
        let started = BootInstant::now();
        type Found = (
            Vec<(String, Option<String>, i64)>,
            Vec<String>,
            Vec<(String, i64)>,
            Option<String>,
        );
        let replies = self.nodes.round(|con| {
            let layout = Layout::of(con);
            let mut invocation = INSPECT.script().prepare_invoke();
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
                let held = found.iter().filter(|(kind, _, _)| kind != "none").count();
                match found.len() {
                    1 => (if held == 1 { "held" } else { "absent" }.into(), held == 1),
                    n => (format!("{held} of {n} slots taken"), held > 0),
                }
            },
        );
        let mut waiters: BTreeMap<String, Waiting> = BTreeMap::new();
        for (_, entries, _, _) in replies
            .iter()
            .filter_map(|reply| reply.result.as_ref().ok())
        {
            for pair in entries.chunks(2) {
                let [entry, score] = pair else { continue };
                let since = score.parse::<f64>().map_or(0, |s| s.max(0.0) as u64);
                let (token, shared) = queue::entry_token(entry);
                let waiting = waiters.entry(entry.clone()).or_insert(Waiting {
                    token: token.to_string(),
                    shared,
                    since_unix_ms: since,
                    servers: 0,
                });
                waiting.servers += 1;
                waiting.since_unix_ms = waiting.since_unix_ms.min(since);
            }
        }
        let mut waiters: Vec<Waiting> = waiters.into_values().collect();
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
                                |(kind, value, pttl)| {
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
        let limit = Limit::of(
            replies
                .iter()
                .filter_map(|reply| reply.result.as_ref().ok())
                .map(|(_, _, _, limit)| limit::parse(limit.as_deref())),
        );
        Inspection {
            keys,
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

    /// Every key under `prefix` on every server, with each server's view of it.
    pub(crate) fn list(&mut self, prefix: &str) -> Vec<(String, Listing)> {
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let layout = Layout::of(con);
            let mut found = BTreeMap::new();
            // Every master of a cluster: a SCAN lists only its own node's keys.
            con.each_node(|node| {
                for pattern in layout.patterns(&glob_escape(prefix), "") {
                    let mut cursor: u64 = 0;
                    loop {
                        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                            .arg(cursor)
                            .arg("MATCH")
                            .arg(&pattern)
                            .arg("COUNT")
                            .arg(1000)
                            .query(node)?;
                        // Waiter queues and fencing counters live beside their locks; they are
                        // not locks. A semaphore's slots are.
                        let keys: Vec<(String, String)> = keys
                            .into_iter()
                            .filter_map(|key| {
                                let plain = layout.plain(&key)?.into_owned();
                                let ours = plain.starts_with(prefix)
                                    && keys::parse(prefix, &plain) != Listed::Beside;
                                ours.then_some((key, plain))
                            })
                            .collect();
                        read_listed(layout, &keys, node, &mut found)?;
                        if next == 0 {
                            break;
                        }
                        cursor = next;
                    }
                }
                Ok(())
            })?;
            Ok(found)
        });
        self.observe("list", prefix, &replies, started, None, |found| {
            (format!("{} keys", found.len()), true)
        });
        self.servers()
            .iter()
            .zip(replies)
            .map(|(server, reply)| (server.display.clone(), reply.result))
            .collect()
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

/// What `keys` (each as named on `node`, and as named here) hold on `node`, added to `found`
/// under the name here. Multi-key reads go per batch: a cluster's per hash slot.
fn read_listed(
    layout: Layout,
    keys: &[(String, String)],
    node: &mut dyn redis::ConnectionLike,
    found: &mut BTreeMap<String, KeyState>,
) -> redis::RedisResult<()> {
    if keys.is_empty() {
        return Ok(());
    }
    let mut pipe = redis::pipe();
    for (key, _) in keys {
        pipe.cmd("TYPE").arg(key).cmd("PTTL").arg(key);
    }
    let facts: Vec<(String, i64)> = pipe.query(node)?;
    let mut strings = Vec::new();
    for ((key, plain), (kind, pttl)) in keys.iter().zip(facts) {
        if kind == "string" {
            strings.push((key.clone(), (plain.clone(), pttl)));
        } else if kind != "none" {
            found.insert(plain.clone(), key_state(&kind, None, pttl));
        }
    }
    let named: BTreeMap<String, (String, i64)> = strings.into_iter().collect();
    let names: Vec<String> = named.keys().cloned().collect();
    let mut shared = Vec::new();
    for batch in layout.batches(&names) {
        let values: Vec<Option<String>> = redis::cmd("MGET").arg(&batch).query(node)?;
        for (key, value) in batch.into_iter().zip(values) {
            let Some((plain, pttl)) = named.get(&key) else {
                continue;
            };
            if value.as_deref() == Some(keys::SHARED) {
                shared.push((key.clone(), plain.clone()));
            }
            if value.is_some() {
                found.insert(plain.clone(), key_state("string", value, *pttl));
            }
        }
    }
    // The shared holders of each lock marked shared, per batch of their readers' keys.
    let readers: Vec<String> = shared
        .iter()
        .map(|(_, plain)| layout.name(&keys::readers(plain)).into_owned())
        .collect();
    for batch in layout.batches(&readers) {
        let mut invocation = READERS.script().prepare_invoke();
        for key in &batch {
            invocation.key(key);
        }
        let lists: Vec<Vec<(String, i64)>> = invocation.invoke(node)?;
        for (key, list) in batch.iter().zip(lists) {
            let Some(index) = readers.iter().position(|r| r == key) else {
                continue;
            };
            let plain = &shared[index].1;
            if let Some(state) = found.remove(plain) {
                found.insert(plain.clone(), with_readers(state, &list));
            }
        }
    }
    Ok(())
}

/// A key marked shared, with the shared holders the server listed (`INSPECT`, `list`).
fn with_readers(state: KeyState, readers: &[(String, i64)]) -> KeyState {
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

/// Escapes SCAN's glob characters so a prefix matches itself only.
pub(super) fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "*?[]\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_escape_makes_prefix_literal() {
        assert_eq!(glob_escape("a*b?[c]\\"), "a\\*b\\?\\[c\\]\\\\");
    }
}
