//! A latch's rounds, one request per server each: `set` creates or checks it, `done` counts one
//! id down (and repairs the servers that lost the latch), `read` asks what every server holds,
//! `list` finds every latch under a prefix. They return values and typed errors.

use super::lua::{READ, TOUCH};
use super::model::{touched, Found, Latch, LatchCopy, ScriptReply, Shape, Touched};
use super::view::View;
use crate::clock::BootInstant;
use crate::human::printable;
use crate::lock::keys::{self, Layout, SEPARATOR};
use crate::lock::list::glob_escape;
use crate::lock::nodes::{NodeError, Reply};
use crate::lock::Redlock;
use crate::server::Session;
use redis::ConnectionLike;
use std::collections::{BTreeMap, BTreeSet};

/// Why a latch round did not succeed, in the terms the exit codes need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LatchError {
    /// The latch exists with another count, on `servers` servers.
    OtherCount { count: u32, servers: usize },
    /// A quorum answered, and none of them knows the latch.
    Unknown,
    /// Another client keeps a key of this type at the latch's key.
    Foreign { kind: String },
    /// Too few servers answered properly to decide; `detail` names them and why.
    Unavailable { detail: String },
}

/// A latch `set` on a quorum.
#[derive(Debug, Clone)]
pub(crate) struct Set {
    /// Servers where this round created it (the others had it already).
    pub(crate) created: usize,
    /// Servers that hold it with the count asked for.
    pub(crate) votes: usize,
    pub(crate) view: View,
}

/// A count-down recorded on a quorum.
#[derive(Debug, Clone)]
pub(crate) struct Counted {
    /// Servers that hold the id on the latch of the quorum's count.
    pub(crate) votes: usize,
    /// Servers that had lost the latch and were given it again.
    pub(crate) repaired: usize,
    pub(crate) view: View,
}

/// Every latch under a prefix, as every server showed it.
pub(crate) struct Listed {
    /// By latch name.
    pub(crate) latches: BTreeMap<String, View>,
    /// Servers that answered.
    pub(crate) answered: usize,
    /// `server: why` for each that did not.
    pub(crate) failures: Vec<String>,
}

/// What a round of `TOUCH` sends: the count and TTL to create a missing latch with, and the id
/// to count down with its record.
struct Touch<'a> {
    shape: Option<Shape>,
    id: Option<(&'a str, &'a str)>,
}

impl Touch<'_> {
    fn send(&self, latch: &Latch, con: &mut Session) -> redis::RedisResult<Touched> {
        let (count, ttl_ms) = self
            .shape
            .map_or((0, 0), |shape| (shape.count, shape.ttl.as_millis() as u64));
        let (id, record) = self.id.unwrap_or_default();
        let reply: ScriptReply = TOUCH
            .script()
            .key(&*Layout::of(con).name(latch.keys.key()))
            .arg(count)
            .arg(ttl_ms)
            .arg(id)
            .arg(record)
            .arg(latch.keys.channel())
            .invoke(con)?;
        touched(reply)
    }
}

impl Redlock {
    /// Creates `latch` with `shape` where it is missing; exits 0 when a quorum holds it with
    /// that count (the ones that had it already included).
    pub(crate) fn latch_set(&mut self, latch: &Latch, shape: Shape) -> Result<Set, LatchError> {
        let touch = Touch {
            shape: Some(shape),
            id: None,
        };
        let (replies, view) = self.touch_round(latch, "latch-set", &touch);
        let votes = holding(&replies, shape.count);
        if votes >= self.quorum() {
            let created = replies
                .iter()
                .filter(|reply| matches!(reply.result, Ok(Touched::Found(_, true))))
                .count();
            return Ok(Set {
                created,
                votes,
                view,
            });
        }
        Err(self.refusal(&replies, votes))
    }

    /// Counts `id` down on `latch` with `record` (who, and when). With `create`, a missing latch
    /// is created first (`set` and `done` in one round); without it, servers that lost the latch
    /// while others have it are given it again, with the others' count and shortest TTL.
    pub(crate) fn latch_done(
        &mut self,
        latch: &Latch,
        (id, record): (&str, &str),
        create: Option<Shape>,
    ) -> Result<Counted, LatchError> {
        let touch = Touch {
            shape: create,
            id: Some((id, record)),
        };
        let (mut replies, mut view) = self.touch_round(latch, "latch-done", &touch);
        let count = create
            .map(|shape| shape.count)
            .or_else(|| view.counting().count);
        let mut repaired = 0;
        let lost: Vec<bool> = replies
            .iter()
            .map(|reply| matches!(reply.result, Ok(Touched::Found(Found::Absent, _))))
            .collect();
        let shape = count.and_then(|count| repair_shape(&replies, count));
        if let Some(shape) = shape.filter(|_| lost.contains(&true)) {
            // Every server that lost it gets it back, not only as many as a quorum needs: the
            // latch should survive the next restart too.
            let repair = Touch {
                shape: Some(shape),
                id: Some((id, record)),
            };
            let again = self.nodes.round_on(&lost, |con| repair.send(latch, con));
            for (index, reply) in again.into_iter().enumerate() {
                let Some(reply) = reply else { continue };
                repaired += usize::from(matches!(reply.result, Ok(Touched::Found(_, true))));
                view.read(index, &found(&reply.result), reply.at);
                replies[index] = reply;
            }
        }
        let votes = count.map_or(0, |count| holding(&replies, count));
        if votes >= self.quorum() {
            return Ok(Counted {
                votes,
                repaired,
                view,
            });
        }
        Err(self.refusal(&replies, votes))
    }

    /// What every server holds of `latch`, merged into a view.
    pub(crate) fn latch_read(&mut self, latch: &Latch) -> View {
        let mut view = View::new(self.nodes.len());
        self.latch_read_into(latch, &mut view);
        view
    }

    /// Reads `latch` on every server and adds what each showed to `view`.
    pub(crate) fn latch_read_into(&mut self, latch: &Latch, view: &mut View) {
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let key = Layout::of(con).name(latch.keys.key()).into_owned();
            read(&key, con)
        });
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

    /// Every latch under `prefix` on every server.
    pub(crate) fn latch_list(&mut self, prefix: &str) -> Listed {
        let tail = format!("{SEPARATOR}latch");
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let layout = Layout::of(con);
            let patterns = layout.patterns(&glob_escape(prefix), &tail);
            let mut found = BTreeMap::new();
            // Every master of a cluster: a SCAN lists only its own node's keys.
            con.each_node(|node| {
                for pattern in &patterns {
                    let mut cursor: u64 = 0;
                    loop {
                        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                            .arg(cursor)
                            .arg("MATCH")
                            .arg(pattern)
                            .arg("COUNT")
                            .arg(1000)
                            .query(node)?;
                        for key in keys {
                            let name = layout
                                .plain(&key)
                                .and_then(|plain| keys::latch_name(prefix, &plain));
                            if let Some(name) = name {
                                found.insert(name, read(&key, node)?);
                            }
                        }
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
        self.observe("latch-list", prefix, &replies, started, None, |found| {
            (format!("{} latches", found.len()), true)
        });
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
            failures: self.reasons(&replies),
        }
    }

    /// One round of `touch`, and what it showed.
    fn touch_round(
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

    /// Why a round that did not reach a quorum of `votes` failed.
    fn refusal(&self, replies: &[Reply<Touched>], votes: usize) -> LatchError {
        let answered = replies.iter().filter(|r| r.result.is_ok()).count();
        let mut others: BTreeMap<u32, usize> = BTreeMap::new();
        let mut foreign = None;
        let mut known = false;
        for reply in replies {
            match &reply.result {
                Ok(Touched::Other(copy)) => *others.entry(copy.count).or_default() += 1,
                Ok(Touched::Found(Found::Foreign(kind), _)) => foreign = Some(kind.clone()),
                Ok(Touched::Found(Found::Latch(_), _)) => known = true,
                _ => {}
            }
        }
        if let Some((count, servers)) = others.into_iter().max_by_key(|(_, n)| *n) {
            return LatchError::OtherCount { count, servers };
        }
        if answered >= self.quorum() {
            if let Some(kind) = foreign {
                return LatchError::Foreign { kind };
            }
            if !known {
                return LatchError::Unknown;
            }
        }
        let reasons = self.reasons(replies);
        LatchError::Unavailable {
            detail: format!(
                "no quorum: {votes} of {} servers hold it, {} needed{}",
                self.nodes.len(),
                self.quorum(),
                if reasons.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", reasons.join("; "))
                }
            ),
        }
    }
}

/// What `key` (its name on that server) holds.
fn read(key: &str, con: &mut dyn ConnectionLike) -> redis::RedisResult<Found> {
    let reply: ScriptReply = READ.script().key(key).invoke(con)?;
    Ok(found(&Ok(touched(reply)?)).unwrap_or(Found::Absent))
}

/// What a server has, from its answer to `TOUCH`.
fn found(result: &Result<Touched, NodeError>) -> Result<Found, NodeError> {
    match result {
        Ok(Touched::Found(found, _)) => Ok(found.clone()),
        Ok(Touched::Other(copy)) => Ok(Found::Latch(copy.clone())),
        Err(err) => Err(err.clone()),
    }
}

/// Servers that hold the latch with `count`.
fn holding(replies: &[Reply<Touched>], count: u32) -> usize {
    replies
        .iter()
        .filter(|reply| {
            matches!(&reply.result, Ok(Touched::Found(Found::Latch(copy), _)) if copy.count == count)
        })
        .count()
}

/// What a server that lost the latch is given again: the count, and the shortest TTL left on
/// the servers that hold it with that count; `None` when none does, or none has a TTL.
fn repair_shape(replies: &[Reply<Touched>], count: u32) -> Option<Shape> {
    let ttl = replies
        .iter()
        .filter_map(|reply| match &reply.result {
            Ok(Touched::Found(Found::Latch(copy), _)) if copy.count == count => copy.ttl,
            _ => None,
        })
        .min()?;
    (!ttl.is_zero()).then_some(Shape { count, ttl })
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
