//! A Redis Cluster's nodes as one connection: each request sent to the master of its first
//! key's slot, `MOVED` and `ASK` followed, `TRYAGAIN` (a slot being migrated) asked again until
//! the deadline, and a node that failed us dropped and its map asked for again.
//!
//! Every step (finding the map, connecting, each reply) is bounded by the deadline the session
//! sets for the request (`Session::bound`), as a plain connection's read is.

use super::blocking::Blocking;
use super::cluster::{command_slot, Asked, Cluster, Map, Node, Redirect};
use crate::clock::BootInstant;
use redis::{ConnectionLike, RedisError, RedisResult, Value};
use std::sync::Arc;
use std::time::Duration;

/// How many times one request follows `MOVED` or `ASK` before giving up: a slot that moved
/// during a resharding, then `ASK` for a key already migrated, is two.
const REDIRECTS: usize = 3;

/// The pause between two tries of a request a node answered `TRYAGAIN` (the keys of a slot
/// being migrated are on both nodes): short against a migration's `MIGRATE` of a slot's keys.
const TRYAGAIN_PAUSE: Duration = Duration::from_millis(10);

/// A cluster's nodes as one connection.
pub(super) struct Routed {
    cluster: Arc<Cluster>,
    /// Open connections, by node: a round usually needs one, a failover or a migration two.
    open: Vec<(Node, Blocking)>,
    /// The other nodes asked for the map with the one that gave it: their connections, as
    /// their answers come.
    asked: Option<Asked>,
    /// Where a request without a key goes: the node that answered the last one. So a
    /// `SCRIPT LOAD` after `NOSCRIPT` reaches the node that said it, even one we were `ASK`ed to.
    last: Option<Node>,
    deadline: BootInstant,
}

impl Routed {
    /// Nothing is connected until the first request.
    pub(super) fn new(cluster: Arc<Cluster>) -> Routed {
        Routed {
            cluster,
            open: Vec::new(),
            asked: None,
            last: None,
            deadline: BootInstant::now(),
        }
    }

    /// Bounds every step of the requests that follow by `deadline`.
    pub(super) fn bound(&mut self, deadline: BootInstant) {
        self.deadline = deadline;
    }

    /// The slot map, keeping the connection a new one came over (and the others asked).
    pub(super) fn map(&mut self) -> RedisResult<Arc<Map>> {
        let (map, given) = self.cluster.map(self.deadline)?;
        if let Some(given) = given {
            self.open.retain(|(open, _)| *open != given.node);
            self.open.push((given.node, given.connection));
            self.asked = given.others;
        }
        Ok(map)
    }

    /// The open connection to `node`, the one made to ask it for the map, or a new one; its
    /// reads and writes bounded by the deadline.
    pub(super) fn connection(&mut self, node: &Node) -> RedisResult<&mut Blocking> {
        let index = match self.open.iter().position(|(open, _)| open == node) {
            Some(index) => index,
            None => {
                let asked = self.asked.as_mut();
                let connection = match asked.and_then(|a| a.connection(node, self.deadline)) {
                    Some(connection) => connection,
                    None => self
                        .cluster
                        .connect(node, self.deadline)
                        .inspect_err(|_| self.cluster.suspect())?,
                };
                self.open.push((node.clone(), connection));
                self.open.len() - 1
            }
        };
        let connection = &mut self.open[index].1;
        connection.bound(self.deadline)?;
        Ok(connection)
    }

    /// A node that failed us is asked for no more requests on that connection, and the map
    /// is asked for again: the node may have failed, and its slots moved to a replica.
    pub(super) fn failed(&mut self, node: &Node, err: &RedisError) {
        if err.is_timeout() {
            // The connection still carries a request, whose reply blocking.rs skips when it comes.
            self.cluster.suspect();
        } else if err.is_io_error() || err.is_connection_dropped() {
            self.open.retain(|(open, _)| open != node);
            self.cluster.suspect();
        }
    }

    /// The node a request goes to first: its slot's master, or for a request without a key
    /// the node that answered last (else any master).
    fn first_node(&mut self, slot: Option<u16>) -> RedisResult<Node> {
        if slot.is_none() {
            if let Some(last) = &self.last {
                return Ok(last.clone());
            }
        }
        let map = self.map()?;
        let node = match slot {
            Some(slot) => map.master(slot).ok_or_else(|| {
                other(format!(
                    "the cluster is down: no master serves hash slot {slot} (CLUSTERDOWN)"
                ))
            })?,
            None => *map
                .masters()
                .first()
                .ok_or_else(|| other("the cluster has no master".into()))?,
        };
        Ok(node.clone())
    }

    /// Sends `packed` (one command, or `count` commands whose replies after the first `skip`
    /// are wanted) where its first key's slot is served, following the cluster's answers.
    pub(super) fn request(
        &mut self,
        packed: &[u8],
        skip: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let slot = command_slot(packed);
        let mut node = self.first_node(slot)?;
        let mut asking = false;
        let mut redirects = 0;
        loop {
            let replies = self.send(&node, packed, asking, skip, count)?;
            let error = replies.iter().find_map(|reply| match reply {
                Value::ServerError(err) => Some(err.clone()),
                _ => None,
            });
            let Some(error) = error else {
                self.answered(node, slot);
                return Ok(replies);
            };
            let code = error.code().to_string();
            match code.as_str() {
                "MOVED" | "ASK" if redirects < REDIRECTS => {
                    redirects += 1;
                    match Redirect::parse(&code, error.details(), &node) {
                        Some(Redirect::Moved { slot, to }) => {
                            self.cluster.moved(slot, &to);
                            (node, asking) = (to, false);
                        }
                        Some(Redirect::Ask { to, .. }) => (node, asking) = (to, true),
                        None => return Ok(replies),
                    }
                }
                "TRYAGAIN" => {
                    let left = self.deadline.remaining();
                    if left <= TRYAGAIN_PAUSE {
                        return Err(other(format!(
                            "hash slot {} is being migrated (TRYAGAIN) for longer than the timeout",
                            slot.map_or_else(|| "?".into(), |s| s.to_string())
                        )));
                    }
                    std::thread::sleep(TRYAGAIN_PAUSE);
                }
                "CLUSTERDOWN" => {
                    self.cluster.suspect();
                    return Err(other(format!(
                        "the cluster is down (CLUSTERDOWN {})",
                        error.details().unwrap_or_default()
                    )));
                }
                // Anything else (NOSCRIPT, WRONGTYPE…) is the request's to read.
                _ => {
                    self.answered(node, slot);
                    return Ok(replies);
                }
            }
        }
    }

    fn answered(&mut self, node: Node, slot: Option<u16>) {
        if let Some(slot) = slot {
            self.cluster.record(&node, slot);
        }
        self.last = Some(node);
    }

    /// One try on `node`, behind `ASKING` when `asking`.
    fn send(
        &mut self,
        node: &Node,
        packed: &[u8],
        asking: bool,
        skip: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let connection = self.connection(node)?;
        let result = if asking {
            let mut with = redis::cmd("ASKING").get_packed_command();
            with.extend_from_slice(packed);
            connection.req_packed_commands(&with, skip + 1, count)
        } else {
            connection.req_packed_commands(packed, skip, count)
        };
        result.inspect_err(|err| self.failed(node, err))
    }
}

fn other(message: String) -> RedisError {
    std::io::Error::other(message).into()
}
