//! Step 2 of the queue protocol (see `super`) where a waiter cannot listen on its rounds' own
//! connections (a server no wire reaches: a Sentinel group, a cluster, RESP3): its listeners,
//! one subscriber connection per server, on one thread for those a wire reaches (polled.rs) and a
//! thread each for the others, turning every `go` on the waiter's own wake-up channel (a
//! release handing the lock to it) into a `Wake::Released`, and stopping at once on `done` (the
//! waiter won or gave up and left the queue). A latch's waiters listen the same way to what
//! count-downs publish (`start_with`, which hands on each message and the server it came from).
//!
//! Pub/sub is fire-and-forget: a message published while we are not subscribed, or lost with a
//! connection, is gone. So a notification only ever makes a waiter try *sooner*; the wait loop
//! still retries on its own schedule, and mutual exclusion never depends on a message.

use super::polled;
use crate::server::{Reach, Server};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often an idle subscriber thread checks whether it is still wanted, when no `done` came
/// (its server was unreachable when the waiter left).
const IDLE_CHECK: Duration = Duration::from_millis(250);

/// Live subscriptions; dropping this stops them (each thread exits within `IDLE_CHECK`).
pub(crate) struct Subscriptions {
    stop: Arc<AtomicBool>,
}

impl Subscriptions {
    /// Subscribes to `channel` on every server concurrently and returns when each has confirmed
    /// or failed, or after `timeout`: a release published after this returns reaches `notify`
    /// from every confirmed server. A server that cannot be subscribed to gives no notifications;
    /// the threads are never joined, so a stopped server costs `timeout`, not more. Each `go`
    /// sends `released` on `notify`.
    pub(crate) fn start<W: Clone + Send + 'static>(
        servers: &[Server],
        channel: &str,
        timeout: Duration,
        (notify, released): (Sender<W>, W),
    ) -> Subscriptions {
        Subscriptions::start_with(servers, channel, timeout, notify, move |_, _| {
            Some(released.clone())
        })
    }

    /// `start`, sending `message(server, payload)` on `notify` for each message other than
    /// `done` (`server`: its index in `servers`), or nothing when that gives `None`.
    pub(crate) fn start_with<W, M>(
        servers: &[Server],
        channel: &str,
        timeout: Duration,
        notify: Sender<W>,
        message: M,
    ) -> Subscriptions
    where
        W: Send + 'static,
        M: Fn(usize, &[u8]) -> Option<W> + Clone + Send + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready) = mpsc::channel();
        // The servers a wire reaches share one thread and one poll (polled.rs); the others, a
        // thread each.
        let reached: Vec<(usize, Reach)> = servers
            .iter()
            .enumerate()
            .filter_map(|(index, server)| Some((index, server.reach()?)))
            .collect();
        if !reached.is_empty() {
            let (channel, notify, message) = (channel.to_string(), notify.clone(), message.clone());
            let (stop, ready_tx) = (Arc::clone(&stop), ready_tx.clone());
            // No thread, no notifications from these servers: the retry schedule still runs.
            let _ = std::thread::Builder::new()
                .name("subscriber".into())
                .spawn(move || {
                    let forward = |index: usize, payload: &[u8]| message(index, payload);
                    polled::listen(
                        reached,
                        &channel,
                        (timeout, IDLE_CHECK),
                        (&notify, forward),
                        &stop,
                        ready_tx,
                    )
                });
        }
        for (index, server) in servers.iter().enumerate() {
            if server.reach().is_some() {
                continue;
            }
            let server = server.clone();
            let channel = channel.to_string();
            let notify = notify.clone();
            let message = message.clone();
            let stop = Arc::clone(&stop);
            let ready_tx = ready_tx.clone();
            let spawned = std::thread::Builder::new()
                .name("subscriber".into())
                .spawn(move || {
                    let forward = |payload: &[u8]| message(index, payload);
                    listen(
                        &server,
                        &channel,
                        timeout,
                        (&notify, forward),
                        &stop,
                        ready_tx,
                    )
                });
            if spawned.is_err() {
                // No thread, no notifications from this server: the retry schedule still runs.
                continue;
            }
        }
        drop(ready_tx);
        let deadline = Instant::now() + timeout;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            // Err: every thread has reported (or none could start).
            if ready.recv_timeout(left).is_err() {
                break;
            }
        }
        Subscriptions { stop }
    }
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// One server's subscriber: connect and subscribe within `timeout`, report on `ready`, then
/// forward each message until stopped or disconnected.
fn listen<W>(
    server: &Server,
    channel: &str,
    timeout: Duration,
    (notify, forward): (&Sender<W>, impl Fn(&[u8]) -> Option<W>),
    stop: &AtomicBool,
    ready: Sender<()>,
) {
    // On a cluster, the master of the lock's slot: it runs the scripts that publish, and a
    // script's PUBLISH counts only its own node's subscribers.
    let near = crate::lock::keys::owner(channel);
    let connection = server.connect_near(near, timeout).and_then(|connection| {
        connection.set_read_timeout(Some(timeout))?;
        connection.set_write_timeout(Some(timeout))?;
        Ok(connection)
    });
    let Ok(mut connection) = connection else {
        drop(ready);
        return;
    };
    let mut pubsub = connection.as_pubsub();
    // `subscribe` returns once the server confirmed, so from here on nothing published is missed.
    if pubsub.subscribe(channel).is_err() || pubsub.set_read_timeout(Some(IDLE_CHECK)).is_err() {
        drop(ready);
        return;
    }
    let _ = ready.send(());
    // `start` returns once every thread has reported or hung up: keeping this sender open for
    // the life of the subscription would make it wait out its whole deadline every time.
    drop(ready);
    while !stop.load(Ordering::Relaxed) {
        match pubsub.get_message() {
            // The waiter left the queue: nothing more will come that it wants.
            Ok(message) if message.get_payload_bytes() == b"done" => return,
            Ok(message) => {
                let Some(wake) = forward(message.get_payload_bytes()) else {
                    continue;
                };
                if stop.load(Ordering::Relaxed) || notify.send(wake).is_err() {
                    return;
                }
            }
            Err(err) if err.is_timeout() => {}
            // The connection is gone: this server gives no more notifications.
            Err(_) => return,
        }
    }
}
