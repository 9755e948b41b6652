//! The rounds with a thread per server (a Sentinel group, a cluster, RESP3): each server's
//! connection, kept between rounds, and the workers of rounds decided early (late.rs), which
//! hand their connection back once the late reply and its clean-up were read from it.

use super::ask::{ask, reach_former};
use super::connection::OpenConnection;
use super::round::{NodeError, Reply};
use crate::clock::BootInstant;
use crate::server::{Server, Session};
use redis::RedisResult;
use std::thread::JoinHandle;
use std::time::Duration;

/// Stack of a per-server worker thread: plenty for the redis client, far below the 2 MiB default.
pub(super) const WORKER_STACK: usize = 256 * 1024;

/// Our open connection to each server, and the workers still out. Connections are kept between
/// rounds (waits, renewals) and replaced after any error, so the next round reconnects; after a
/// late reply, only once the follow-up to that round is done (see `OpenConnection`).
pub(super) struct Threads {
    pub(super) connections: Vec<Option<OpenConnection>>,
    /// Workers of rounds decided without them, still waiting for their server's late reply
    /// (and cleaning up after it); joined before we go, so that no clean-up is cut short.
    /// A worker hands back its connection once the late reply (and clean-up) was read from it.
    pub(super) workers: Vec<JoinHandle<Option<(usize, OpenConnection)>>>,
}

impl Threads {
    pub(super) fn new(servers: &[Server]) -> Threads {
        Threads {
            connections: servers.iter().map(|_| None).collect(),
            workers: Vec::new(),
        }
    }

    /// `Nodes::round_on` on threads: the servers whose entry in `targets` is true are asked at
    /// once, each on its open connection even if the reply to it is late (see `OpenConnection`). With
    /// `former`, also a Sentinel group's former masters (`reach_former`).
    pub(super) fn round_on<T, F>(
        &mut self,
        servers: &[Server],
        (timeout, former): (Duration, bool),
        targets: &[bool],
        op: F,
    ) -> Vec<Option<Reply<T>>>
    where
        T: Send,
        F: Fn(&mut Session) -> RedisResult<T> + Sync,
    {
        let started = BootInstant::now();
        let op = &op;
        let mut jobs = servers
            .iter()
            .zip(self.connections.iter_mut())
            .zip(targets.iter().copied())
            .enumerate()
            .filter(|(_, (_, wanted))| *wanted)
            .map(|(index, ((server, slot), _))| (index, server, slot));
        let mut replies: Vec<Option<Reply<T>>> = (0..servers.len()).map(|_| None).collect();
        // The first target is served on this thread: one spawn fewer, and none at all when only
        // one server is asked.
        let Some((first_index, first_server, first_slot)) = jobs.next() else {
            return replies;
        };
        let work = move |server: &Server, slot: &mut Option<OpenConnection>| {
            let deadline = started.add(server.budget(timeout));
            let reply = ask(server, slot, deadline, timeout, op);
            if former {
                reach_former(server, deadline, op);
            }
            reply
        };
        std::thread::scope(|scope| {
            let handles: Vec<_> = jobs
                .map(|(index, server, slot)| {
                    let work = move || work(server, slot);
                    // A small stack: less to map, protect and unmap per server per round.
                    let handle = std::thread::Builder::new()
                        .stack_size(WORKER_STACK)
                        .spawn_scoped(scope, work);
                    (index, handle)
                })
                .collect();
            replies[first_index] = Some(work(first_server, first_slot));
            for (index, handle) in handles {
                let reply = handle.ok().and_then(|handle| handle.join().ok());
                replies[index] = Some(reply.unwrap_or_else(no_worker));
            }
        });
        replies
    }

    /// Waits for the workers of earlier rounds (each is bounded by its round's deadline, plus one
    /// clean-up request), taking back the connections they hand back.
    pub(super) fn join_late(&mut self) {
        self.reclaim(true);
    }

    /// Takes back the connections of the late workers that are done (all of them, waiting for
    /// each, with `wait`), where we have none to that server meanwhile.
    pub(super) fn reclaim(&mut self, wait: bool) {
        let (done, running): (Vec<_>, Vec<_>) = self
            .workers
            .drain(..)
            .partition(|worker| wait || worker.is_finished());
        self.workers = running;
        for worker in done {
            if let Ok(Some((index, open))) = worker.join() {
                let slot = &mut self.connections[index];
                if slot.is_none() {
                    *slot = Some(open);
                }
            }
        }
    }

    /// A new round does not reuse a connection whose last reply is late (see `OpenConnection`). A
    /// Sentinel group's master's is reused like any other: the run keeps its master until a
    /// round fails on it (server/sentinel/group.rs), and a failed round drops the connection.
    pub(super) fn drop_late(&mut self) {
        for slot in &mut self.connections {
            if slot.as_ref().is_some_and(|open| open.late) {
                *slot = None;
            }
        }
    }
}

/// The reply of a server whose worker thread could not be started.
pub(super) fn no_worker<T>() -> Reply<T> {
    Reply {
        result: Err(NodeError::Down(
            "internal error: no worker thread for this server".into(),
        )),
        at: BootInstant::now(),
        latency: Duration::ZERO,
    }
}
