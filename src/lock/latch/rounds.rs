//! A latch's rounds, one request per server each: `Touch`, the request that checks, creates or
//! counts down a latch (write.rs sends it for `set` and `done`), `read`, which asks what every
//! server holds, and `list`, which finds every latch under a prefix.

use super::lua::{READ, TOUCH};
use super::model::{touched, Found, Latch, LatchCopy, ScriptReply, Touched};
use super::view::View;
use crate::clock::BootInstant;
use crate::human::printable;
use crate::lock::keys::Layout;
use crate::lock::nodes::{NodeError, Reply};
use crate::lock::Redlock;
use crate::server::Session;
use redis::ConnectionLike;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Every latch under a prefix, as every server showed it.
pub(crate) struct Listed {
    /// By latch name.
    pub(crate) latches: BTreeMap<String, View>,
    /// Servers that answered.
    pub(crate) answered: usize,
    /// `server: why` for each that did not.
    pub(crate) failures: Vec<String>,
}

/// One `TOUCH` request: the count the latch must have (0: any), the TTL to create a missing one
/// with (`None`: create nothing), and the id to count down with its record.
pub(super) struct Touch<'a> {
    pub(super) count: u32,
    pub(super) ttl: Option<Duration>,
    pub(super) id: Option<(&'a str, &'a str)>,
}

impl Touch<'_> {
    pub(super) fn send(&self, latch: &Latch, con: &mut Session) -> redis::RedisResult<Touched> {
        let ttl_ms = self.ttl.map_or(0, |ttl| ttl.as_millis() as u64);
        let (id, record) = self.id.unwrap_or_default();
        let layout = Layout::of(con);
        let mut invocation = TOUCH.key(&*layout.name(latch.keys.key()));
        // Not on a cluster: the index is in a hash slot of its own (lock/list.rs).
        if layout == Layout::Plain {
            invocation.key(latch.keys.index());
        }
        let reply: ScriptReply = invocation
            .arg(self.count)
            .arg(ttl_ms)
            .arg(id)
            .arg(record)
            .arg(latch.keys.channel())
            .invoke(con)?;
        touched(reply)
    }
}

impl Redlock {
    /// What every server holds of `latch`, merged into a view.
    pub(crate) fn latch_read(&mut self, latch: &Latch) -> View {
        let mut view = View::new(self.nodes.len());
        self.latch_read_into(latch, &mut view, None);
        view
    }

    /// Reads `latch` on every server and adds what each showed to `view`.
    /// With `listen`, every wire subscribes to that channel behind the read, in the same burst:
    /// a count-down the read did not see is announced to us (wait.rs).
    pub(crate) fn latch_read_into(&mut self, latch: &Latch, view: &mut View, listen: Option<&str>) {
        let started = BootInstant::now();
        let op = |con: &mut Session| {
            let key = Layout::of(con).name(latch.keys.key()).into_owned();
            read(&key, con)
        };
        let replies = match listen {
            Some(channel) => self.nodes.round_listening(op, channel),
            None => self.nodes.round(op),
        };
        self.observe(
            "latch-read",
            &printable(latch.keys.key()),
            &replies,
            started,
            None,
            describe,
        );
        for (index, reply) in replies.iter().enumerate() {
            view.read(index, &reply.result, reply.at);
        }
    }

    /// Every latch under `prefix` on every server (a listing: lock/list.rs).
    pub(crate) fn latch_list(&mut self, prefix: &str, walk_all: bool) -> (Listed, Vec<String>) {
        let found = self.list(prefix, walk_all);
        (found.latches, found.indexed)
    }

    /// The latches each server's listing found, latch by latch.
    pub(crate) fn latches_of(&self, replies: &[Reply<BTreeMap<String, Found>>]) -> Listed {
        let names: BTreeSet<&String> = replies
            .iter()
            .filter_map(|reply| reply.result.as_ref().ok())
            .flat_map(|found| found.keys())
            .collect();
        let mut latches = BTreeMap::new();
        for name in names {
            let mut view = View::new(self.nodes.len());
            for (index, reply) in replies.iter().enumerate() {
                // A server that answered without this latch does not have it.
                let found = match &reply.result {
                    Ok(found) => Ok(found.get(name).cloned().unwrap_or(Found::Absent)),
                    Err(err) => Err(err.clone()),
                };
                view.read(index, &found, reply.at);
            }
            latches.insert(name.clone(), view);
        }
        Listed {
            latches,
            answered: replies.iter().filter(|reply| reply.result.is_ok()).count(),
            failures: self.reasons(replies),
        }
    }

    /// One round of `touch`, and what it showed.
    pub(super) fn touch_round(
        &mut self,
        latch: &Latch,
        step: &'static str,
        touch: &Touch<'_>,
    ) -> (Vec<Reply<Touched>>, View) {
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| touch.send(latch, con));
        self.observe(
            step,
            &printable(latch.keys.key()),
            &replies,
            started,
            None,
            |t| describe(&found(&Ok(t.clone())).unwrap_or(Found::Absent)),
        );
        let mut view = View::new(self.nodes.len());
        for (index, reply) in replies.iter().enumerate() {
            view.read(index, &found(&reply.result), reply.at);
        }
        (replies, view)
    }
}

/// What `key` (its name on that server) holds.
pub(crate) fn read(key: &str, con: &mut dyn ConnectionLike) -> redis::RedisResult<Found> {
    let reply: ScriptReply = READ.key(key).invoke(con)?;
    Ok(found(&Ok(touched(reply)?)).unwrap_or(Found::Absent))
}

/// What a server has, from its answer to `TOUCH`.
pub(super) fn found(result: &Result<Touched, NodeError>) -> Result<Found, NodeError> {
    match result {
        Ok(Touched::Found(found, _)) => Ok(found.clone()),
        Ok(Touched::Other(copy)) => Ok(Found::Latch(copy.clone())),
        Err(err) => Err(err.clone()),
    }
}

/// A server's answer in a word or two, for `-v`.
fn describe(found: &Found) -> (String, bool) {
    match found {
        Found::Absent => ("absent".into(), false),
        Found::Foreign(kind) => (format!("a {kind} of another client"), false),
        Found::Latch(LatchCopy { count, ids, .. }) => {
            (format!("{} of {count} done", ids.len()), true)
        }
    }
}
