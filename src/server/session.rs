//! The connection a round's request goes out on, for any server kind: a server's blocking
//! connection (blocking.rs), a Sentinel group's master's (sentinel/master.rs), a Redis
//! Cluster's nodes as one connection (route.rs), or a round's requests on a wire, replayed
//! (replay.rs). Requests see one connection (`redis::ConnectionLike`) whichever it is;
//! `is_cluster` tells them which names their keys have there (`lock::keys::Layout`).

use super::blocking::{only, Blocking};
use super::cluster::Cluster;
use super::replay::{Replay, Request, Route, Step};
use super::route::Routed;
use super::sentinel::Master;
use crate::clock::BootInstant;
use redis::{ConnectionLike, RedisResult, Value};
use std::sync::Arc;

/// One server's connection, as the engine holds it between rounds.
pub(crate) struct Session {
    inner: Inner,
}

enum Inner {
    Direct(Blocking),
    Master(Box<Master>),
    Cluster(Box<Routed>),
    /// A round's requests on a wire, replayed (replay.rs).
    Replay(Replay),
}

impl Session {
    pub(crate) fn direct(connection: Blocking) -> Session {
        Session {
            inner: Inner::Direct(connection),
        }
    }

    /// A Sentinel group's: its master's connection.
    pub(crate) fn master(master: Master) -> Session {
        Session {
            inner: Inner::Master(Box::new(master)),
        }
    }

    /// A cluster's session: nothing is connected until the first request.
    pub(crate) fn cluster(cluster: Arc<Cluster>) -> Session {
        Session {
            inner: Inner::Cluster(Box::new(Routed::new(cluster))),
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
        match &self.inner {
            Inner::Cluster(_) => true,
            Inner::Replay(record) => record.cluster(),
            Inner::Direct(_) | Inner::Master(_) => false,
        }
    }

    /// Sends a wire's request as the relay that carries it was handed it (relay.rs): by key,
    /// or, on a cluster, to the master `route` names, or the list of masters.
    pub(super) fn forward(&mut self, request: &Request) -> RedisResult<Vec<Value>> {
        let (packed, skip, count) = (&request.packed[..], request.skip, request.count);
        match (&request.route, &mut self.inner) {
            (Route::ByKey, _) => self.req_packed_commands(packed, skip, count),
            (Route::Masters, Inner::Cluster(routed)) => {
                let map = routed.map()?;
                let names = map.masters().into_iter();
                let names = names.map(|node| Value::BulkString(node.to_string().into_bytes()));
                Ok(vec![Value::Array(names.collect())])
            }
            (Route::Node(name), Inner::Cluster(routed)) => {
                let map = routed.map()?;
                let node = map
                    .masters()
                    .into_iter()
                    .find(|node| node.to_string() == *name);
                let node = node.cloned().ok_or_else(|| {
                    std::io::Error::other(format!("{name} is no longer a master of the cluster"))
                })?;
                let connection = routed.connection(&node)?;
                connection
                    .req_packed_commands(packed, skip, count)
                    .inspect_err(|err| routed.failed(&node, err))
            }
            _ => Err(std::io::Error::other(
                "internal error: a request for a cluster's node, to a server that is not one",
            )
            .into()),
        }
    }

    /// Bounds every step of the requests that follow by `deadline`.
    pub(crate) fn bound(&mut self, deadline: BootInstant) -> RedisResult<()> {
        match &mut self.inner {
            Inner::Direct(connection) => connection.bound(deadline),
            Inner::Master(master) => master.bound(deadline),
            Inner::Cluster(routed) => {
                routed.bound(deadline);
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
            // A cluster's, on a relay: the masters' names first, then each by name.
            Inner::Replay(record) if record.cluster() => {
                let names = record.reply(&[], (0, 1), Route::Masters).and_then(only)?;
                let names: Vec<String> = redis::from_redis_value(names)?;
                names
                    .into_iter()
                    .map(|name| visit(&mut AtNode { record, name }))
                    .collect()
            }
            Inner::Replay(_) | Inner::Master(_) => Ok(vec![visit(self)?]),
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

/// A plain server's reply, unless it says the server is a cluster node: then an error that
/// says how to name the cluster instead.
fn not_a_cluster_node(reply: Value) -> RedisResult<Value> {
    match &reply {
        Value::ServerError(err)
            if matches!(err.code(), "MOVED" | "ASK" | "CROSSSLOT" | "CLUSTERDOWN") =>
        {
            Err(std::io::Error::other(format!(
                "is a Redis Cluster node ({} {}): name the cluster as redis+cluster://host:port",
                err.code(),
                err.details().unwrap_or_default()
            ))
            .into())
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
            Inner::Master(master) => master
                .request(cmd, 0, 1)
                .and_then(only)
                .and_then(not_a_cluster_node),
            Inner::Cluster(routed) => routed.request(cmd, 0, 1).and_then(only),
            Inner::Replay(record) => record
                .reply(cmd, (0, 1), Route::ByKey)
                .and_then(only)
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
            Inner::Master(master) => master.request(cmd, offset, count),
            // A pipeline goes where its first command's key is served.
            Inner::Cluster(routed) => routed.request(cmd, offset, count),
            Inner::Replay(record) => record.reply(cmd, (offset, count), Route::ByKey),
        }
    }

    fn get_db(&self) -> i64 {
        match &self.inner {
            Inner::Direct(connection) => connection.get_db(),
            Inner::Master(master) => master.db(),
            Inner::Cluster(_) | Inner::Replay(_) => 0,
        }
    }

    fn check_connection(&mut self) -> bool {
        redis::cmd("PING").query::<String>(self).is_ok()
    }

    fn is_open(&self) -> bool {
        match &self.inner {
            Inner::Direct(connection) => connection.is_open(),
            Inner::Master(_) | Inner::Cluster(_) | Inner::Replay(_) => true,
        }
    }
}

/// A cluster's master, by name, as a replayed session reaches it (`Session::each_node`).
struct AtNode<'a> {
    record: &'a mut Replay,
    name: String,
}

impl ConnectionLike for AtNode<'_> {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.req_packed_commands(cmd, 0, 1).and_then(only)
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let route = Route::Node(self.name.clone());
        self.record.reply(cmd, (offset, count), route)
    }

    fn get_db(&self) -> i64 {
        0
    }

    fn check_connection(&mut self) -> bool {
        redis::cmd("PING").query::<String>(self).is_ok()
    }

    fn is_open(&self) -> bool {
        true
    }
}
