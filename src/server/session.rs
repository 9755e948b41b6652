//! The connection a round's request goes out on, for any server kind: a plain server's (or a
//! Sentinel group's master's) connection as it is, or, for a Redis Cluster, one connection per
//! node, each request sent to the master of its first key's slot, `MOVED` and `ASK` followed,
//! `TRYAGAIN` (a slot being migrated) asked again until the deadline. Requests see one
//! connection (`redis::ConnectionLike`) whichever it is; `is_cluster` tells them which names
//! their keys have there (`lock::keys::Layout`).
//!
//! Every step (finding the map, connecting, each reply) is bounded by the deadline `bound` set
//! for the request, as a plain connection's read is.

use super::client::time_left;
use super::cluster::{command_slot, Cluster, Map, Node, Redirect};
use super::replay::{Replay, Step};
use crate::clock::BootInstant;
use redis::{Connection, ConnectionLike, RedisError, RedisResult, Value};
use std::sync::Arc;
use std::time::Duration;

/// How many times one request follows `MOVED` or `ASK` before giving up: a slot that moved
/// during a resharding, then `ASK` for a key already migrated, is two.
const REDIRECTS: usize = 3;

/// The pause between two tries of a request a node answered `TRYAGAIN` (the keys of a slot
/// being migrated are on both nodes): short against a migration's `MIGRATE` of a slot's keys.
const TRYAGAIN_PAUSE: Duration = Duration::from_millis(10);

/// One server's connection, as the engine holds it between rounds.
pub(crate) struct Session {
    inner: Inner,
}

enum Inner {
    Direct(Connection),
    Cluster(Box<Routed>),
    /// A round's requests on a wire, replayed (replay.rs).
    Replay(Replay),
}

/// A cluster's nodes as one connection.
struct Routed {
    cluster: Arc<Cluster>,
    /// Open connections, by node: a round usually needs one, a failover or a migration two.
    open: Vec<(Node, Connection)>,
    /// Where a request without a key goes: the node that answered the last one. So a
    /// `SCRIPT LOAD` after `NOSCRIPT` reaches the node that said it, even one we were `ASK`ed to.
    last: Option<Node>,
    deadline: BootInstant,
}

impl Session {
    pub(crate) fn direct(connection: Connection) -> Session {
        Session {
            inner: Inner::Direct(connection),
        }
    }

    /// A cluster's session: nothing is connected until the first request.
    pub(crate) fn cluster(cluster: Arc<Cluster>) -> Session {
        Session {
            inner: Inner::Cluster(Box::new(Routed {
                cluster,
                open: Vec::new(),
                last: None,
                deadline: BootInstant::now(),
            })),
        }
    }

    /// Runs `op` once over a session that replays the replies `record` holds (replay.rs):
    /// the request to send next, or `op`'s result once every reply it asked for is in.
    pub(crate) fn replay<T>(
        record: &mut Replay,
        op: &(impl Fn(&mut Session) -> RedisResult<T> + ?Sized),
    ) -> Step<T> {
        let mut session = Session {
            inner: Inner::Replay(std::mem::take(record)),
        };
        let result = op(&mut session);
        if let Inner::Replay(replayed) = session.inner {
            *record = replayed;
        }
        record.rewind(result)
    }

    /// Whether this is a cluster's, whose keys are named for hash slots (`lock::keys::Layout`).
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self.inner, Inner::Cluster(_))
    }

    /// Bounds every step of the requests that follow by `deadline`.
    pub(crate) fn bound(&mut self, deadline: BootInstant) -> RedisResult<()> {
        match &mut self.inner {
            Inner::Direct(connection) => {
                let left = time_left(deadline)?;
                connection.set_read_timeout(Some(left))?;
                connection.set_write_timeout(Some(left))
            }
            Inner::Cluster(routed) => {
                routed.deadline = deadline;
                Ok(())
            }
            // The poll loop bounds the round.
            Inner::Replay(_) => Ok(()),
        }
    }

    /// Runs `visit` once on every master: once on a plain server, on each master of a cluster
    /// (a `SCAN` lists only the keys of the node it runs on). The requests `visit` makes go
    /// to that node as they are, keys and all, without redirections.
    pub(crate) fn each_node<T>(
        &mut self,
        mut visit: impl FnMut(&mut dyn ConnectionLike) -> RedisResult<T>,
    ) -> RedisResult<Vec<T>> {
        match &mut self.inner {
            Inner::Direct(connection) => Ok(vec![visit(connection)?]),
            Inner::Replay(_) => Ok(vec![visit(self)?]),
            Inner::Cluster(routed) => {
                let map = routed.map()?;
                map.masters()
                    .into_iter()
                    .map(|node| {
                        let connection = routed.connection(node)?;
                        visit(connection).inspect_err(|err| routed.failed(node, err))
                    })
                    .collect()
            }
        }
    }
}

impl Routed {
    /// The slot map, keeping the connection a new one came over.
    fn map(&mut self) -> RedisResult<Arc<Map>> {
        let (map, given) = self.cluster.map(self.deadline)?;
        if let Some((node, connection)) = given {
            self.keep(node, connection);
        }
        Ok(map)
    }

    fn keep(&mut self, node: Node, connection: Connection) {
        self.open.retain(|(open, _)| *open != node);
        self.open.push((node, connection));
    }

    /// The open connection to `node`, or a new one; its reads and writes bounded by the
    /// deadline.
    fn connection(&mut self, node: &Node) -> RedisResult<&mut Connection> {
        let index = match self.open.iter().position(|(open, _)| open == node) {
            Some(index) => index,
            None => {
                let connection = self
                    .cluster
                    .connect(node, self.deadline)
                    .inspect_err(|_| self.cluster.suspect())?;
                self.open.push((node.clone(), connection));
                self.open.len() - 1
            }
        };
        let left = time_left(self.deadline)?;
        let connection = &mut self.open[index].1;
        connection.set_read_timeout(Some(left))?;
        connection.set_write_timeout(Some(left))?;
        Ok(connection)
    }

    /// A node that failed us is asked for no more requests on that connection, and the map
    /// is asked for again: the node may have failed, and its slots moved to a replica.
    fn failed(&mut self, node: &Node, err: &RedisError) {
        if err.is_timeout() {
            // The connection still carries a request: see `Kept` in lock::nodes.
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
    fn request(&mut self, packed: &[u8], skip: usize, count: usize) -> RedisResult<Vec<Value>> {
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

/// A plain server's reply, unless it says the server is a cluster node: then an error that
/// says how to name the cluster instead.
fn not_a_cluster_node(reply: Value) -> RedisResult<Value> {
    match &reply {
        Value::ServerError(err)
            if matches!(err.code(), "MOVED" | "ASK" | "CROSSSLOT" | "CLUSTERDOWN") =>
        {
            Err(other(format!(
                "is a Redis Cluster node ({} {}): name the cluster as redis+cluster://host:port",
                err.code(),
                err.details().unwrap_or_default()
            )))
        }
        _ => Ok(reply),
    }
}

impl ConnectionLike for Session {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        match &mut self.inner {
            Inner::Direct(connection) => connection
                .req_packed_command(cmd)
                .and_then(not_a_cluster_node),
            Inner::Cluster(routed) => routed
                .request(cmd, 0, 1)?
                .pop()
                .ok_or_else(|| other("no reply".into())),
            Inner::Replay(record) => record
                .reply(cmd, 0, 1)?
                .pop()
                .ok_or_else(|| other("no reply".into()))
                .and_then(not_a_cluster_node),
        }
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        match &mut self.inner {
            Inner::Direct(connection) => connection.req_packed_commands(cmd, offset, count),
            // A pipeline goes where its first command's key is served.
            Inner::Cluster(routed) => routed.request(cmd, offset, count),
            Inner::Replay(record) => record.reply(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match &self.inner {
            Inner::Direct(connection) => connection.get_db(),
            Inner::Cluster(_) | Inner::Replay(_) => 0,
        }
    }

    fn check_connection(&mut self) -> bool {
        redis::cmd("PING").query::<String>(self).is_ok()
    }

    fn is_open(&self) -> bool {
        match &self.inner {
            Inner::Direct(connection) => connection.is_open(),
            Inner::Cluster(_) | Inner::Replay(_) => true,
        }
    }
}
