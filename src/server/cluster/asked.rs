//! Several nodes asked for the slot map at once (the URL's seeds, the masters already known),
//! each on a thread of its own. The first map to come is used; the others' connections, as
//! they come, are kept for the requests that need those nodes, so that a seed that serves a
//! key's slot is not connected to a second time.

use super::super::blocking::{Blocking, Dialer};
use super::map::Map;
use super::node::Node;
use crate::clock::BootInstant;
use redis::RedisResult;
use std::sync::mpsc;

/// Stack of a thread that asks one node for the map: the redis client needs little.
const ASKER_STACK: usize = 256 * 1024;

/// One node's map, and the connection it came over.
pub(super) type SlotsAnswer = RedisResult<(Map, Blocking)>;

/// The nodes asked, and their answers still to come.
pub(crate) struct Asked {
    nodes: Vec<Node>,
    answers: mpsc::Receiver<(usize, SlotsAnswer)>,
    /// Whose answer has come.
    heard: Vec<bool>,
    /// Connections of answers that came while another was waited for.
    arrived: Vec<(Node, Blocking)>,
}

impl Asked {
    /// Asks each of `nodes` (with its dialer) for the map, at once, each by `deadline`.
    pub(super) fn start(nodes: Vec<(Node, RedisResult<Dialer>)>, deadline: BootInstant) -> Asked {
        let (answers, asked) = mpsc::channel();
        let mut named = Vec::new();
        for (index, (node, dialer)) in nodes.into_iter().enumerate() {
            named.push(node.clone());
            let answers = answers.clone();
            // Not joined: a black-holed node's thread ends by the deadline, later.
            let spawned = std::thread::Builder::new()
                .stack_size(ASKER_STACK)
                .spawn(move || {
                    let answer = dialer.and_then(|dialer| ask(&dialer, &node, deadline));
                    let _ = answers.send((index, answer));
                });
            // Without a thread, that node is not asked: the others may still answer.
            let _ = spawned;
        }
        Asked {
            heard: vec![false; named.len()],
            nodes: named,
            answers: asked,
            arrived: Vec::new(),
        }
    }

    /// The next answer to come by `deadline`, and whose it is; `None` once none will.
    pub(super) fn next(&mut self, deadline: BootInstant) -> Option<(Node, SlotsAnswer)> {
        let (index, answer) = self.answers.recv_timeout(deadline.remaining()).ok()?;
        self.heard[index] = true;
        Some((self.nodes[index].clone(), answer))
    }

    /// How many nodes were asked.
    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The connection to `node` made for asking it, if it was asked and answered by `deadline`
    /// (its answer is waited for: it left when the first did).
    pub(crate) fn connection(&mut self, node: &Node, deadline: BootInstant) -> Option<Blocking> {
        if let Some(at) = self.arrived.iter().position(|(arrived, _)| arrived == node) {
            return Some(self.arrived.swap_remove(at).1);
        }
        let index = self.nodes.iter().position(|asked| asked == node)?;
        while !self.heard[index] {
            let (from, answer) = self.next(deadline)?;
            if let Ok((_, connection)) = answer {
                if from == *node {
                    return Some(connection);
                }
                self.arrived.push((from, connection));
            }
        }
        None
    }
}

/// One node's map, and the connection it came over; the set-up (AUTH) goes with the question.
pub(super) fn ask(dialer: &Dialer, node: &Node, deadline: BootInstant) -> SlotsAnswer {
    let mut connection = dialer.open(deadline, false)?;
    let reply: redis::Value = redis::cmd("CLUSTER").arg("SLOTS").query(&mut connection)?;
    let map = Map::from_slots(&reply, node).map_err(std::io::Error::other)?;
    Ok((map, connection))
}
