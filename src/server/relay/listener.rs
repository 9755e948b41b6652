//! A relay's subscription (mod.rs, "Wake-ups"): a connection of its own near the channel's key,
//! read by a thread of its own, whose messages are handed on in the order the wire must see
//! them: held until the subscription's own answer, none after an unsubscribe's.

use super::courier::{Courier, Outcome, STACK};
use crate::server::endpoint::Server;
use redis::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// How often a subscription's thread looks whether it is still wanted.
const IDLE_CHECK: Duration = Duration::from_millis(250);

/// Whether a subscription's messages are handed on.
enum Forwarding {
    /// Not asked for (no subscription, or unsubscribed): dropped.
    Off,
    /// Subscribed, its own answer not handed on yet: kept until it is.
    Held(Vec<Value>),
    On,
}

/// A subscription on a connection of its own, read by a thread of its own.
pub(super) struct Listener {
    channel: String,
    forwarding: Arc<Mutex<Forwarding>>,
    stop: Arc<AtomicBool>,
}

impl Listener {
    /// Subscribes to `channel` near `near`'s key, within `timeout`, on a thread that then hands
    /// its messages on (held until `open`). `None` if it cannot.
    pub(super) fn start(
        server: &Server,
        (channel, near): (&str, &str),
        timeout: Duration,
        courier: &Courier,
    ) -> Option<Listener> {
        let forwarding = Arc::new(Mutex::new(Forwarding::Held(Vec::new())));
        let stop = Arc::new(AtomicBool::new(false));
        let (shared, stopped, courier) = (forwarding.clone(), stop.clone(), courier.clone());
        let (server, near, name) = (server.clone(), near.to_string(), channel.to_string());
        let (subscribed, confirmed) = mpsc::channel();
        std::thread::Builder::new()
            .name("relay-listener".into())
            .stack_size(STACK)
            .spawn(move || {
                let Ok(mut connection) = server.connect_near(&near, timeout) else {
                    return;
                };
                let _ = connection.set_write_timeout(Some(timeout));
                let _ = connection.set_read_timeout(Some(timeout));
                // One `PubSub` for the thread's life: dropping it unsubscribes.
                let mut pubsub = connection.as_pubsub();
                // Returns once the server confirmed: from here on nothing published is missed.
                if pubsub.subscribe(&name).is_err()
                    || pubsub.set_read_timeout(Some(IDLE_CHECK)).is_err()
                {
                    return;
                }
                let _ = subscribed.send(());
                while !stopped.load(Ordering::Relaxed) {
                    match pubsub.get_message() {
                        Ok(message) => {
                            let message = Value::Array(vec![
                                Value::BulkString(b"message".to_vec()),
                                Value::BulkString(name.as_bytes().to_vec()),
                                Value::BulkString(message.get_payload_bytes().to_vec()),
                            ]);
                            let mut forwarding = lock(&shared);
                            match &mut *forwarding {
                                Forwarding::Off => {}
                                Forwarding::Held(kept) => kept.push(message),
                                Forwarding::On => courier.hand(Outcome::Message(message)),
                            }
                        }
                        Err(err) if err.is_timeout() => {}
                        // The connection is gone: the next subscription makes a new one.
                        Err(_) => break,
                    }
                }
                stopped.store(true, Ordering::Relaxed);
            })
            .ok()?;
        // The thread connects and subscribes within `timeout` (a Sentinel group's asking may
        // take it twice): not a moment longer is waited for it.
        confirmed.recv_timeout(timeout * 2).ok()?;
        Some(Listener {
            channel: channel.into(),
            forwarding,
            stop,
        })
    }

    /// Whether it listens on `channel` still (its thread ends when its connection does).
    pub(super) fn serves(&self, channel: &str) -> bool {
        self.channel == channel && !self.stop.load(Ordering::Relaxed)
    }

    /// A subscription is on its way: messages from now on are kept for it.
    pub(super) fn hold(&self) {
        let mut forwarding = lock(&self.forwarding);
        if matches!(*forwarding, Forwarding::Off) {
            *forwarding = Forwarding::Held(Vec::new());
        }
    }

    /// The subscription's answer, then what was kept for it, then every message as it comes.
    pub(super) fn open(&self, courier: &Courier, channel: &str) {
        let mut forwarding = lock(&self.forwarding);
        courier.hand(Outcome::Answer(Ok(vec![Value::Array(vec![
            Value::BulkString(b"subscribe".to_vec()),
            Value::BulkString(channel.as_bytes().to_vec()),
            Value::Int(1),
        ])])));
        if let Forwarding::Held(kept) = std::mem::replace(&mut *forwarding, Forwarding::On) {
            for message in kept {
                courier.hand(Outcome::Message(message));
            }
        }
    }

    /// The answer to an unsubscribe, after which no message is handed on; kept for a
    /// subscription handed over behind it (`again`), dropped otherwise.
    pub(super) fn close(&self, courier: &Courier, again: bool, answer: Value) {
        let mut forwarding = lock(&self.forwarding);
        *forwarding = if again {
            Forwarding::Held(Vec::new())
        } else {
            Forwarding::Off
        };
        courier.hand(Outcome::Answer(Ok(vec![answer])));
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn lock(forwarding: &Mutex<Forwarding>) -> std::sync::MutexGuard<'_, Forwarding> {
    forwarding.lock().unwrap_or_else(|e| e.into_inner())
}
