//! A waiter's subscriptions to the servers a wire reaches (TCP, TLS or a Unix socket) on one
//! thread: one wire per server (server/wire.rs), subscribed at once, and one poll(2) over all of
//! them, instead of a thread and a blocking connection per server (listen.rs, which serves the
//! other kinds). What each server's subscription does is listen.rs's, unchanged: report once
//! subscribed, forward each message, stop at `done` (the waiter won or gave up) or when the
//! waiter drops its `Subscriptions`.

use crate::clock::BootInstant;
use crate::server::{payload, wait_any, Reach, Sink, Wire};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;

/// Subscribes to `channel` on every server of `reached` (its index in the waiter's servers, and
/// how to reach it), reports on `ready` once each has confirmed or failed, or after `timeout`,
/// then sends `forward(server, payload)` on `notify` for each message until `stop`, which it
/// checks every `idle` at least.
pub(super) fn listen<W>(
    reached: Vec<(usize, Reach)>,
    channel: &str,
    (timeout, idle): (Duration, Duration),
    (notify, forward): (&Sender<W>, impl Fn(usize, &[u8]) -> Option<W>),
    stop: &AtomicBool,
    ready: Sender<()>,
) {
    let deadline = BootInstant::now().add(timeout);
    // (server index, wire, subscribed)
    let mut wires: Vec<(usize, Wire, bool)> = reached
        .into_iter()
        .filter_map(|(index, reach)| {
            let mut wire = Wire::open(&reach).ok()?;
            wire.subscribe(channel, Sink::Round(index));
            Some((index, wire, false))
        })
        .collect();
    // Until each has confirmed (or failed), or the deadline: from then on a release published
    // reaches us from every confirmed server. A message that comes meanwhile waits in `wakes`.
    let mut wakes = Vec::new();
    while wires.iter().any(|(_, _, subscribed)| !subscribed) && !deadline.has_passed() {
        wait(&wires, deadline.remaining());
        wires.retain_mut(|(index, wire, subscribed)| {
            take(*index, wire, subscribed, &forward, &mut wakes)
        });
    }
    // Those not subscribed by the deadline give no notifications.
    wires.retain(|(_, _, subscribed)| *subscribed);
    let _ = ready.send(());
    drop(ready);
    loop {
        for wake in wakes.drain(..) {
            if stop.load(Ordering::Relaxed) || notify.send(wake).is_err() {
                return;
            }
        }
        if wires.is_empty() || stop.load(Ordering::Relaxed) {
            return;
        }
        wait(&wires, idle);
        wires.retain_mut(|(index, wire, subscribed)| {
            take(*index, wire, subscribed, &forward, &mut wakes)
        });
    }
}

/// Moves what came on `wire`: its confirmation, and each message's wake-up into `wakes`.
/// False once the server has nothing more for us: `done` (the waiter left the queue), or the
/// connection failed.
fn take<W>(
    index: usize,
    wire: &mut Wire,
    subscribed: &mut bool,
    forward: &impl Fn(usize, &[u8]) -> Option<W>,
    wakes: &mut Vec<W>,
) -> bool {
    for (sink, answer) in wire.exchange() {
        let Ok(values) = answer else { return false };
        match (sink, payload(values)) {
            (Sink::Round(_), _) => *subscribed = true,
            (Sink::Pushed, Some(payload)) if payload == b"done" => return false,
            (Sink::Pushed, Some(payload)) => wakes.extend(forward(index, &payload)),
            _ => {}
        }
    }
    wire.failure().is_none()
}

fn wait(wires: &[(usize, Wire, bool)], at_most: Duration) {
    wait_any(wires.iter().map(|(_, wire, _)| wire), at_most);
}
