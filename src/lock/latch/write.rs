//! `set` and `done`: a check before any latch is created (the module comment's rules 5 and 6).
//! A first round creates nothing: it checks the count and counts the id down where the latch
//! exists. decide.rs then says whether a second round may give the latch to the servers
//! without it, and with which count and TTL. A run refused on what the servers showed takes back
//! what it wrote, in a last round, so that a refusal leaves nothing behind.

use super::decide::{plan, LatchError, Plan};
use super::lua::WITHDRAW;
use super::model::{Found, Latch, Made, Shape, Touched};
use super::rounds::{found, Touch};
use super::view::View;
use crate::lock::keys::Layout;
use crate::lock::nodes::{NodeError, Reply};
use crate::lock::Redlock;

/// A latch `set` on a quorum.
#[derive(Debug, Clone)]
pub(crate) struct Set {
    /// Servers where this run created it (the others had it already).
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

/// What a run wrote.
struct Written {
    /// Servers that hold the latch with its count (and the id, for a count-down).
    votes: usize,
    /// Servers where the second round created it.
    created: usize,
    /// Whether those were given back a latch a majority held (rather than a new one).
    repair: bool,
    view: View,
}

impl Redlock {
    /// Creates `latch` with `shape` where it is missing, unless some server holds it with
    /// another count; exits 0 when a quorum holds it with that count (the ones that had it
    /// already included).
    pub(crate) fn latch_set(&mut self, latch: &Latch, shape: Shape) -> Result<Set, LatchError> {
        let written = self.latch_write(latch, "latch-set", Some(shape), None)?;
        Ok(Set {
            created: written.created,
            votes: written.votes,
            view: written.view,
        })
    }

    /// Counts `id` down on `latch` with `record` (who, and when). With `create`, a missing latch
    /// is created first, as `set` does; without it, servers that lost the latch are given it
    /// again when a majority of all servers hold it with one count, with that count and their
    /// shortest TTL.
    pub(crate) fn latch_done(
        &mut self,
        latch: &Latch,
        id: (&str, &str),
        create: Option<Shape>,
    ) -> Result<Counted, LatchError> {
        let written = self.latch_write(latch, "latch-done", create, Some(id))?;
        Ok(Counted {
            votes: written.votes,
            repaired: if written.repair { written.created } else { 0 },
            view: written.view,
        })
    }

    fn latch_write(
        &mut self,
        latch: &Latch,
        step: &'static str,
        shape: Option<Shape>,
        id: Option<(&str, &str)>,
    ) -> Result<Written, LatchError> {
        let want = shape.map(|shape| shape.count);
        let check = Touch {
            count: want.unwrap_or(0),
            ttl: None,
            id,
        };
        let (mut replies, mut view) = self.touch_round(latch, step, &check);
        let mut made: Vec<Made> = replies
            .iter()
            .map(|reply| wrote(&reply.result, &check))
            .collect();
        let (count, ttl, repair) = match plan(&replies, want) {
            Plan::Repair { count, ttl } => (count, ttl, true),
            Plan::Create => (want.unwrap_or(0), shape.map(|shape| shape.ttl), false),
            Plan::Refuse(err) => {
                self.latch_withdraw(latch, id, &made, want.unwrap_or(0));
                return Err(err);
            }
            Plan::Undecided { holding } => return Err(self.latch_undecided(&replies, holding)),
        };
        let lacking: Vec<bool> = replies
            .iter()
            .map(|reply| matches!(reply.result, Ok(Touched::Found(Found::Absent, _))))
            .collect();
        let mut created = 0;
        if let Some(ttl) = ttl.filter(|_| lacking.contains(&true)) {
            // Every server without it gets it, not only as many as a quorum needs: the latch
            // should survive the next restart too.
            let give = Touch {
                count,
                ttl: Some(ttl),
                id,
            };
            let again = self.nodes.round_on(&lacking, |con| give.send(latch, con));
            for (index, reply) in again.into_iter().enumerate() {
                let Some(reply) = reply else { continue };
                let this = wrote(&reply.result, &give);
                created += usize::from(this.created && reply.result.is_ok());
                made[index] = made[index].and(this);
                view.read(index, &found(&reply.result), reply.at);
                replies[index] = reply;
            }
        }
        let votes = holding(&replies, count);
        if votes >= self.quorum() {
            return Ok(Written {
                votes,
                created,
                repair,
                view,
            });
        }
        // Between the rounds, another run made the latch with another count, or servers
        // stopped answering.
        match plan(&replies, Some(count)) {
            Plan::Refuse(err) => {
                self.latch_withdraw(latch, id, &made, count);
                Err(err)
            }
            _ => Err(self.latch_undecided(&replies, votes)),
        }
    }

    /// Takes back what a refused run `made` on each server: a latch it created there with
    /// `count`, and its `id` where it recorded it (lua/withdraw.lua). A server that did not
    /// answer is sent it too, on the connection that carried the request, so that it runs
    /// after that request if the request lands late.
    fn latch_withdraw(
        &mut self,
        latch: &Latch,
        id: Option<(&str, &str)>,
        made: &[Made],
        count: u32,
    ) {
        let (id, record) = id.unwrap_or_default();
        let created: Vec<bool> = made.iter().map(|made| made.created).collect();
        let recorded: Vec<bool> = made
            .iter()
            .map(|made| made.recorded && !made.created)
            .collect();
        // One round each: a latch this run did not create is never deleted, even one that
        // holds nothing but this run's id.
        for (targets, count) in [(created, count), (recorded, 0)] {
            if targets.contains(&true) {
                self.nodes.round_on(&targets, |con| {
                    WITHDRAW
                        .key(&*Layout::of(con).name(latch.keys.key()))
                        .arg(count)
                        .arg(id)
                        .arg(record)
                        .invoke::<i64>(con)
                });
            }
        }
    }

    /// The refusal of a round that too few servers answered to decide: nothing is taken
    /// back (a server that did not answer may still apply the request).
    fn latch_undecided(&self, replies: &[Reply<Touched>], holding: usize) -> LatchError {
        let reasons = self.reasons(replies);
        LatchError::Unavailable {
            detail: format!(
                "no quorum: {holding} of {} servers hold it, {} needed{}",
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

/// What `touch` wrote on a server, as its reply says; one that did not answer may have done
/// whatever the request could.
fn wrote(result: &Result<Touched, NodeError>, touch: &Touch<'_>) -> Made {
    match result {
        Ok(Touched::Found(_, made)) => *made,
        Ok(Touched::Other(_)) => Made::default(),
        Err(_) => Made {
            created: touch.ttl.is_some(),
            recorded: touch.id.is_some(),
        },
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
