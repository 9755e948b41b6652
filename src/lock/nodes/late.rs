//! A round that ends as soon as its outcome is certain (`round_until`): the servers it did not
//! wait for keep their worker, which takes their late reply and sends the clean-up the caller
//! settles on, on the same connection, behind the late request.

use super::ask::{ask, run};
use super::round::{Cleanup, Op, Reply};
use super::threads::{no_worker, Threads, WORKER_STACK};
use crate::clock::BootInstant;
use crate::server::{Server, Session};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Where a round decided early stands, for the workers still waiting for their server.
enum Phase<T> {
    /// The round is still counting: hand the reply in.
    Collecting,
    /// The round stopped counting; the caller is deciding whether late replies need a clean-up.
    Deciding,
    Settled(Option<Cleanup<T>>),
}

struct Shared<T> {
    phase: Mutex<Phase<T>>,
    settled: Condvar,
}

/// The servers a round did not wait for, on their threads. `settle` says what their late
/// replies need; dropping it without a word means nothing.
pub(crate) struct Late<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Late<T> {
    pub(crate) fn settle(self, cleanup: Option<Cleanup<T>>) {
        self.finish(cleanup);
    }

    fn finish(&self, cleanup: Option<Cleanup<T>>) {
        let mut phase = self.shared.phase.lock().unwrap_or_else(|e| e.into_inner());
        if matches!(*phase, Phase::Deciding) {
            *phase = Phase::Settled(cleanup);
        }
        self.shared.settled.notify_all();
    }
}

impl<T> Drop for Late<T> {
    fn drop(&mut self) {
        self.finish(None);
    }
}

impl Threads {
    /// Runs `op` against every server concurrently, like `round`, but returns as soon as
    /// `decided` says the replies in hand settle the outcome, without waiting for the slowest
    /// servers (their entry is `None`).
    ///
    /// A reply that arrives later is never counted, and its connection is not reused while a
    /// reply may still be in flight on it: the worker keeps it until the caller settles the
    /// `Pending`, then sends the clean-up it was given, if any, on that same connection, after
    /// the late request (so a late SET is deleted after it landed, never before). Only once
    /// everything it sent was answered does it hand the connection back for a later round.
    pub(super) fn round_until<T: Send + 'static>(
        &mut self,
        servers: &[Server],
        timeout: Duration,
        op: Op<T>,
        decided: impl Fn(&[Option<Reply<T>>]) -> bool,
    ) -> (Vec<Option<Reply<T>>>, Late<T>) {
        self.reclaim(false);
        self.drop_late();
        let started = BootInstant::now();
        // Every worker answers by its server's deadline (its requests are bounded by it).
        let last = servers.iter().map(|server| server.budget(timeout)).max();
        let deadline = started.add(last.unwrap_or(timeout));
        let shared = Arc::new(Shared {
            phase: Mutex::new(Phase::Collecting),
            settled: Condvar::new(),
        });
        let (tx, rx) = mpsc::channel();
        let count = servers.len();
        let mut replies: Vec<Option<Reply<T>>> = (0..count).map(|_| None).collect();
        let mut waiting = 0;
        for (index, (server, slot)) in servers.iter().zip(&mut self.connections).enumerate() {
            let (server, mut open, op, shared, tx) = (
                server.clone(),
                slot.take(),
                op.clone(),
                shared.clone(),
                tx.clone(),
            );
            let work = move || {
                let by = started.add(server.budget(timeout));
                let reply = ask(&server, &mut open, by, timeout, &*op);
                let mut phase = shared.phase.lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    match &*phase {
                        Phase::Collecting => {
                            let _ = tx.send((index, reply, open));
                            return None;
                        }
                        Phase::Deciding => {
                            phase = shared
                                .settled
                                .wait(phase)
                                .unwrap_or_else(|e| e.into_inner());
                        }
                        Phase::Settled(cleanup) => {
                            // Without an answer (a timeout) the request may still be applied:
                            // the clean-up goes out behind it on the same connection.
                            let mut open = open?;
                            if let Some(cleanup) = cleanup {
                                let fresh = BootInstant::now().add(timeout);
                                let value = reply.result.as_ref().ok();
                                run(&mut open.connection, fresh, &|con: &mut Session| {
                                    cleanup(con, value)
                                })
                                .ok()?;
                                open.late = false;
                            }
                            // A reply still owed on it: not for another round.
                            return (!open.late).then_some((index, open));
                        }
                    }
                }
            };
            match std::thread::Builder::new()
                .stack_size(WORKER_STACK)
                .spawn(work)
            {
                Ok(worker) => {
                    self.workers.push(worker);
                    waiting += 1;
                }
                Err(_) => replies[index] = Some(no_worker()),
            }
        }
        drop(tx);
        while waiting > 0 && !decided(&replies) {
            match rx.recv_timeout(deadline.remaining() + Duration::from_millis(50)) {
                Ok((index, reply, open)) => {
                    replies[index] = Some(reply);
                    self.connections[index] = open;
                    waiting -= 1;
                }
                Err(_) => break,
            }
        }
        *shared.phase.lock().unwrap_or_else(|e| e.into_inner()) = Phase::Deciding;
        // Replies handed in before the phase changed still count.
        for (index, reply, open) in rx.try_iter() {
            replies[index] = Some(reply);
            self.connections[index] = open;
        }
        (replies, Late { shared })
    }
}
