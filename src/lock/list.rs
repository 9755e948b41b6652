//! Every lock under a prefix on every server (`status` without a name): the keys a SCAN finds,
//! each with what the server holds there, shared holders included.

use super::engine::Redlock;
use super::inspect::with_readers;
use super::keys::{self, Layout, Listed};
use super::latch;
use super::nodes::{NodeError, Nodes, Reply};
use super::script::{lua, lua_part, Lua, Part};
use super::verdict::{key_state, KeyState};
use crate::clock::BootInstant;
use redis::ConnectionLike;
use std::collections::BTreeMap;
use std::time::Duration;

/// The live shared holders of several locks (list/readers.lua).
pub(super) static READERS: Lua = lua!(lua_part!("list/readers.lua"));

/// `index_add`, which enters a key a script set in the index of its prefix (list/index.lua):
/// for the scripts that set a lock's, a slot's or a latch's key.
pub(super) const INDEX: Part = lua_part!("list/index.lua");

/// One server's keys under a prefix and its view of each, or why it could not say.
pub(crate) type Listing = Result<BTreeMap<String, KeyState>, NodeError>;

/// What a listing found: each server's locks, the latches, and which servers it read from the
/// index rather than by walking their keys.
pub(crate) struct Found {
    pub(crate) locks: Vec<(String, Listing)>,
    pub(crate) latches: latch::Listed,
    /// The servers of more than `INDEXED_ABOVE` keys, listed from the index of the keys redlock
    /// set (a lock another client took there is not in it).
    pub(crate) indexed: Vec<String>,
}

/// A server of more keys than this is listed from the index of the keys redlock set under the
/// prefix (keys::index, list/index.lua) rather than by walking every key: a walk costs the
/// server about 1 µs a key (a SCAN of 1,000,000 keys took 1.4 s on Redis 7.0), the index
/// one read per key it names. The walk finds what other clients (redsync, redis-py) set too;
/// `--scan` asks for it at any size.
pub(crate) const INDEXED_ABOVE: u64 = 100_000;

impl Redlock {
    /// Every key under `prefix` on every server, with each server's view of it, and every
    /// latch: one walk of each server's keys for both (a walk is most of a listing's cost on a
    /// server shared with many other keys), or on a server of more than `INDEXED_ABOVE` keys
    /// (unless `walk_all`) one read of the index.
    pub(crate) fn list(&mut self, prefix: &str, walk_all: bool) -> Found {
        let started = BootInstant::now();
        let (mut nodes, may_index) = self.sized_for_listing();
        let index = keys::index(prefix);
        let replies = nodes.round(|con| {
            let layout = Layout::of(con);
            let mut found = BTreeMap::new();
            let mut latches = BTreeMap::new();
            let mut indexed = false;
            // Every master of a cluster: a SCAN lists only its own node's keys.
            con.each_node(|node| {
                let mut take = |keys: Vec<String>, node: &mut dyn ConnectionLike| {
                    // Waiter queues and fencing counters live beside their locks; they are
                    // not locks. A semaphore's slots are; a latch is read as one.
                    let mut ours = Vec::new();
                    for key in keys {
                        let Some(plain) = layout.plain(&key).map(|p| p.into_owned()) else {
                            continue;
                        };
                        if let Some(name) = keys::latch_name(prefix, &plain) {
                            latches.insert(name, latch::read(&key, node)?);
                        } else if plain.starts_with(prefix)
                            && keys::parse(prefix, &plain) != Listed::Beside
                        {
                            ours.push((key, plain));
                        }
                    }
                    read_listed(layout, &ours, node, &mut found)
                };
                // No index on a cluster (it would be in a hash slot of its own). A server that
                // cannot say its size (DBSIZE denied) is walked, as before the index. Where
                // sizing found every server small, each is walked without asking again.
                if layout == Layout::Plain && !walk_all && may_index {
                    let size: u64 = match redis::cmd("DBSIZE").query(node) {
                        Ok(size) => size,
                        // The server's own refusal (an ACL); a connection's failure ends here.
                        Err(err) if err.code().is_some() => 0,
                        Err(err) => return Err(err),
                    };
                    if size > INDEXED_ABOVE {
                        indexed = true;
                        let keys: Vec<String> = redis::cmd("ZRANGE")
                            .arg(&index)
                            .arg(0)
                            .arg(-1)
                            .query(node)?;
                        return take(keys, node);
                    }
                }
                for pattern in layout.patterns(&glob_escape(prefix), "") {
                    scan(node, &pattern, &mut take)?;
                }
                Ok(())
            })?;
            Ok((found, latches, indexed))
        });
        self.observe(
            "list",
            prefix,
            &replies,
            started,
            None,
            |(found, latches, indexed)| {
                let from = if *indexed { " (from the index)" } else { "" };
                (
                    format!("{} keys, {} latches{from}", found.len(), latches.len()),
                    true,
                )
            },
        );
        let indexed = self
            .servers()
            .iter()
            .zip(&replies)
            .filter(|(_, reply)| matches!(reply.result, Ok((_, _, true))))
            .map(|(server, _)| server.display.clone())
            .collect();
        let (locks, latches): (Vec<Reply<_>>, Vec<Reply<_>>) = replies
            .into_iter()
            .map(|reply| {
                let (locks, latches) = match reply.result {
                    Ok((locks, latches, _)) => (Ok(locks), Ok(latches)),
                    Err(err) => (Err(err.clone()), Err(err)),
                };
                let (at, latency) = (reply.at, reply.latency);
                (
                    Reply {
                        result: locks,
                        at,
                        latency,
                    },
                    Reply {
                        result: latches,
                        at,
                        latency,
                    },
                )
            })
            .unzip();
        let listed = self
            .servers()
            .iter()
            .zip(locks)
            .map(|(server, reply)| (server.display.clone(), reply.result))
            .collect();
        Found {
            locks: listed,
            latches: self.latches_of(&latches),
            indexed,
        }
    }
}

/// How many keys one SCAN page walks (its `COUNT`). A listing is one request per server,
/// replayed over its replies so far each time one arrives (server/replay.rs): its client cost
/// grows with the square of the pages, its round trips with their number, and one page costs
/// the server about 0.3 to 1.3 µs per key walked (Redis 7.0, 1,000,000 keys, an idle and a
/// loaded 2-core VM). 10,000 keys a page keeps a page within a quarter of the default 200 ms
/// --timeout even loaded (13 ms measured) and a million keys to 100 pages: 0.1 s of client CPU
/// where 1,000 a page took 2.3 s.
const PAGE: usize = 10_000;

/// What a listing that ran out of time says of why.
pub(crate) const SLOW_LISTING: &str = "a listing walks every key on each server (SCAN), with --timeout for each 10,000 keys: raise --timeout, or grant the user DBSIZE, which sizes the listing";

impl Redlock {
    /// The servers, for a listing: a listing walks every key of each server, a page at a time,
    /// so it is one request of many pages, timed as a whole: `--timeout` for each page the
    /// largest server needs (`DBSIZE`, asked first within `--timeout`), and one more for the
    /// reads of what the pages found. A server with few keys costs one `--timeout`, as any
    /// request; one shared with 1,000,000 other keys 101 of them at most, where it took 1 to
    /// 3 s (a loaded VM). A server that refuses `DBSIZE` (an ACL from before it was needed)
    /// gets one `--timeout`, as before.
    ///
    /// Also whether any server may be over `INDEXED_ABOVE` keys: false when every server said
    /// it has fewer, so that the listing walks them all without asking `DBSIZE` again. Which
    /// servers are over it, the listing asks itself: a round sends one request to every server
    /// and cannot hand each its own answer from this one.
    pub(super) fn sized_for_listing(&mut self) -> (Nodes, bool) {
        let sizes = self.nodes.round(|con| {
            let sizes: Vec<u64> = con.each_node(|node| redis::cmd("DBSIZE").query(node))?;
            Ok(sizes.into_iter().max().unwrap_or(0))
        });
        let answered: Vec<u64> = sizes
            .iter()
            .filter_map(|reply| reply.result.as_ref().ok().copied())
            .collect();
        let keys = answered.iter().max().copied().unwrap_or(0);
        let may_index = answered.len() < sizes.len() || keys > INDEXED_ABOVE;
        let timeout = self.nodes.timeout();
        let nodes = Nodes::new(self.servers().to_vec(), listing_budget(timeout, keys));
        (nodes, may_index)
    }
}

/// `timeout` for each page of `keys` keys, and one more.
fn listing_budget(timeout: Duration, keys: u64) -> Duration {
    let pages = keys.div_ceil(PAGE as u64).max(1);
    timeout.saturating_mul(u32::try_from(pages + 1).unwrap_or(u32::MAX))
}

/// Every key on `node` that `pattern` matches, a SCAN batch at a time, each batch handed to
/// `batch` with the node (to read what the keys hold).
pub(super) fn scan(
    node: &mut dyn ConnectionLike,
    pattern: &str,
    mut batch: impl FnMut(Vec<String>, &mut dyn ConnectionLike) -> redis::RedisResult<()>,
) -> redis::RedisResult<()> {
    let mut cursor: u64 = 0;
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(PAGE)
            .query(node)?;
        batch(keys, node)?;
        if next == 0 {
            return Ok(());
        }
        cursor = next;
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
        let mut invocation = READERS.prepare_invoke();
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
    fn a_listing_has_a_timeout_for_each_page_and_one_more() {
        let timeout = Duration::from_millis(200);
        assert_eq!(listing_budget(timeout, 0), timeout * 2);
        assert_eq!(listing_budget(timeout, 10_000), timeout * 2);
        assert_eq!(listing_budget(timeout, 1_000_020), timeout * 102);
    }

    #[test]
    fn glob_escape_makes_prefix_literal() {
        assert_eq!(glob_escape("a*b?[c]\\"), "a\\*b\\?\\[c\\]\\\\");
    }
}
