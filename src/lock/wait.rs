//! Waiting for a busy lock: a place in each server's queue of waiters, a retry schedule stretched
//! by that place and bounded by the holder's observed TTL, cut short by the release that wakes us
//! (pub/sub) and by signals.

use super::engine::{Held, LockError, Redlock};
use super::nodes::Nodes;
use super::queue::{self, Subscriptions, Waiter};
use super::target::{Kind, Target};
use super::verdict::{describe_foreign, describe_token};
use super::vote::Seen;
use crate::clock::BootInstant;
use std::collections::VecDeque;
use std::os::fd::BorrowedFd;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// Something that may end a wait early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// A signal asked us to stop.
    Interrupted(i32),
    /// A release handed the lock to us (we were first in its queue): worth trying again now.
    Released,
}

impl Wake {
    /// The signal, if this wake-up is one.
    pub(crate) fn signal(self) -> Option<i32> {
        match self {
            Wake::Interrupted(signal) => Some(signal),
            Wake::Released => None,
        }
    }
}

/// Something besides the servers that can end a pause: `fd` is polled beside the connections
/// a waiter listens on, and once it is readable, `take` says what it brought (if anything).
#[derive(Clone, Copy)]
pub(crate) struct Interrupt<'a> {
    pub(crate) fd: BorrowedFd<'a>,
    pub(crate) take: &'a dyn Fn() -> Option<Wake>,
}

/// How a waiting acquire waits, and what it may report while it does.
pub(crate) struct Waiting<'a> {
    /// Keep trying this long; `None` means one attempt.
    pub(crate) wait: Option<Duration>,
    pub(crate) retry: RetryPolicy,
    /// Signals and release notifications arrive here; either may end a pause.
    pub(crate) wakes: Option<&'a Receiver<Wake>>,
    /// The sending side of `wakes`, for the release subscriptions. Without it a waiter only
    /// retries on its schedule.
    pub(crate) notify: Option<Sender<Wake>>,
    /// What else ends a pause of a waiter that listens on the rounds' own connections
    /// (`Nodes::listen`), which waits on sockets rather than on `wakes`: a signal.
    pub(crate) interrupt: Option<Interrupt<'a>>,
    /// Told where things stand before each pause, and about once a second during one.
    pub(crate) progress: Option<&'a mut dyn FnMut(&WaitProgress)>,
}

/// Where a waiting acquire stands, for a progress display.
#[derive(Debug, Clone)]
pub(crate) struct WaitProgress {
    pub(crate) waited: Duration,
    /// The token most refusing servers hold, if they showed one.
    pub(crate) holder: Option<String>,
    /// The shortest remaining TTL of the holder's key on the servers that showed it.
    pub(crate) holder_ttl: Option<Duration>,
}

/// How to retry while waiting.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RetryPolicy {
    /// Mean pause between attempts; each pause is drawn uniformly from [delay/2, 3·delay/2].
    pub(crate) delay: Duration,
}

/// After the first server announced a release to us, how long at most we wait for the same
/// release from a quorum of servers before asking, so that our SET does not overtake the release
/// still on its way to them (it would be refused there); without a quorum, the pause goes on
/// (more wake-ups count on). Not from every server: the slowest would set the pace of every
/// handover. Normally the notifications arrive within a fraction of a millisecond of each other;
/// this bound only matters when one of them never comes.
const WAKE_GATHER: Duration = Duration::from_millis(25);
/// After the holder's observed TTL runs out, a random part of this before asking again.
const EXPIRY_SPREAD: Duration = Duration::from_millis(5);
/// How often a progress display is refreshed during a long pause.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// A queued waiter's own schedule (for a lost notification) is the retry delay times its place
/// in the queue plus one, up to this factor: the crowd's polls add up to about ln(W) per retry
/// delay instead of W.
const RANK_STRETCH_MAX: u32 = 16;
/// A one-shot acquire that found the lock free but lost a split vote tries this many more times.
const SPLIT_RETRIES: u32 = 2;

impl Redlock {
    /// Acquires `target`, retrying until `waiting.wait` has passed (once only without it, except
    /// that a split vote on a free lock is tried again up to `SPLIT_RETRIES` times).
    /// `new_token` makes a fresh token for every attempt.
    ///
    /// A waiter queues on every server (arrival order) and subscribes to its own wake-up
    /// channel; a release wakes only the first live waiter in the queue, which asks as soon as a
    /// quorum of servers woke it.
    /// Everyone else sleeps on their own schedule: the jittered retry delay stretched by their
    /// place in the queue; the head also wakes when the holder's observed TTL runs out (an
    /// expiry announces nothing). A one-shot acquire never subscribes. A waiter on plain
    /// servers subscribes behind every attempt on the attempt's own connection and listens on
    /// those from this thread (queue, step 2); otherwise it subscribes once its first attempt
    /// failed, on connections of its own.
    ///
    /// Safety does not depend on the queue: every grant is still a SET NX on a quorum with
    /// positive validity (`attempt`). The queue only decides whom a release wakes early; a
    /// waiter that is never woken (lost notification, dropped queue, a crashed server) still
    /// asks on its own schedule, and a waiter that crashed has no subscriber left, so a release
    /// skips it (PUBLISH reaches nobody) and wakes the next.
    pub(crate) fn acquire(
        &mut self,
        target: &Target,
        ttl: Duration,
        waiting: Waiting<'_>,
        new_token: &mut dyn FnMut() -> anyhow::Result<String>,
    ) -> anyhow::Result<Result<Held, LockError>> {
        let Waiting {
            wait,
            retry,
            wakes,
            notify,
            interrupt,
            mut progress,
        } = waiting;
        let started = BootInstant::now();
        let give_up_at = wait.map(|wait| started.add(wait));
        // Only a waiter that can be woken queues: without a subscription a queue place is
        // worth nothing to anyone. Its entry is a token: who waits, for `status` to show.
        let mut waiter = match notify.is_some() && wait.is_some_and(|w| !w.is_zero()) {
            true => Some(Waiter::new(
                queue::entry(&new_token()?, target.is_shared()),
                retry.delay.mul_f64(1.5) * RANK_STRETCH_MAX,
                self.nodes.timeout(),
            )),
            false => None,
        };
        // With every server plain, the waiter listens on the connections its attempts use
        // (every attempt subscribes behind its request), from this thread; otherwise on
        // connections of its own, a thread each (queue::Subscriptions).
        let channel = match waiter.as_mut() {
            Some(waiter) if self.nodes.listens() => {
                waiter.on_wires = true;
                Some(waiter.channel(target))
            }
            _ => None,
        };
        let mut heard: VecDeque<Wake> = VecDeque::new();
        let mut subscriptions: Option<Subscriptions> = None;
        let mut queued = false;
        let mut splits = 0;
        loop {
            let token = new_token()?;
            let (result, seen) = self.attempt(target, &token, ttl, waiter.as_ref());
            let failure = match result {
                Ok(held) => {
                    // The attempt left the queue and told our listeners to stop (queue, step
                    // 5); dropping them stops any that did not hear it.
                    self.waited_as = waiter.map(|waiter| waiter.entry);
                    return Ok(Ok(held));
                }
                Err(failure) => failure,
            };
            queued |= seen.rank.is_some();
            if let LockError::LimitMismatch { .. } = failure {
                // Waiting cannot change the semaphore's size: give up at once, leaving nothing.
                if let Some(waiter) = waiter.as_ref().filter(|_| queued) {
                    self.leave(target, waiter);
                }
                return Ok(Err(failure));
            }
            splits = if seen.split { splits + 1 } else { 0 };
            let Some(give_up_at) = give_up_at.filter(|at| !at.has_passed()) else {
                if give_up_at.is_none() && seen.split && splits <= SPLIT_RETRIES {
                    std::thread::sleep(split_backoff(&seen, splits));
                    continue;
                }
                if let Some(waiter) = waiter.as_ref().filter(|_| queued) {
                    self.leave(target, waiter);
                }
                return Ok(Err(describe_busy(target, failure, &seen)));
            };
            // Not queued anywhere (no subscriptions, or every server refused the script) is
            // treated as first in line: the schedule of a waiter without a queue.
            let head = seen.rank.is_none_or(|rank| rank == 0);
            if subscriptions.is_none() && channel.is_none() {
                if let (Some(notify), Some(waiter)) = (&notify, waiter.as_mut()) {
                    subscriptions = Some(Subscriptions::start(
                        self.servers(),
                        &waiter.channel(target),
                        self.nodes.timeout(),
                        (notify.clone(), Wake::Released),
                    ));
                    waiter.listening = true;
                    // A release between that attempt and the subscription found nobody
                    // listening on our channel and woke the next waiter instead. Only the head
                    // would have been woken, so only the head looks again now.
                    if head {
                        continue;
                    }
                }
            }
            let mut pause = if seen.split && head {
                split_backoff(&seen, splits)
            } else {
                let stretch = seen
                    .rank
                    .map_or(1, |rank| (rank + 1).min(u64::from(RANK_STRETCH_MAX)) as u32);
                jitter(retry.delay) * stretch
            };
            if let Some(left) = seen.ttl.filter(|_| head) {
                pause = pause.min(left + spread(EXPIRY_SPREAD));
            }
            pause = pause.min(give_up_at.remaining());
            let status = WaitProgress {
                waited: started.elapsed(),
                holder: seen.holder,
                holder_ttl: seen.ttl,
            };
            // A release wakes us from every server where it handed the lock to us; we ask once
            // a quorum of them did, since only then can our SETs win. A lone wake-up most often
            // comes from a release that reached one server late, after another waiter won the
            // others: asking on it would cost every server a request for nothing. If we are
            // wanted after all, more wake-ups or our own schedule bring us back.
            let (until, needed) = (BootInstant::now().add(pause), self.quorum());
            let nodes = &mut self.nodes;
            let mut next_wake = |at_most: Duration| match &channel {
                Some(channel) => listen(nodes, channel, (wakes, interrupt), &mut heard, at_most),
                None => pause_until_woken(wakes, at_most),
            };
            let mut woken = 0;
            let interrupted = loop {
                let report: Option<&mut dyn FnMut(&WaitProgress)> = match progress {
                    Some(ref mut report) => Some(&mut **report),
                    None => None,
                };
                match pause_reporting(&mut next_wake, until.remaining(), started, &status, report) {
                    Some(Wake::Interrupted(signal)) => break Some(signal),
                    Some(Wake::Released) => {
                        match gather_released(&mut next_wake, needed.saturating_sub(woken + 1)) {
                            (_, Some(signal)) => break Some(signal),
                            (more, None) => woken += 1 + more,
                        }
                        if woken >= needed || until.has_passed() {
                            break None;
                        }
                    }
                    None => break None,
                }
            };
            if let Some(signal) = interrupted {
                if let Some(waiter) = waiter.as_ref().filter(|_| queued) {
                    self.leave(target, waiter);
                }
                return Ok(Err(LockError::Interrupted(signal)));
            }
        }
    }
}

/// Fills in who holds the lock, for the message people read when they are refused, from what
/// the refusing servers returned with their answer to the SET: no further round.
fn describe_busy(target: &Target, failure: LockError, seen: &Seen) -> LockError {
    match (failure, target.kind) {
        (LockError::Busy { holder: None }, Kind::Semaphore { slots }) => LockError::Busy {
            holder: Some(format!("someone in each of its {slots} slots")),
        },
        (LockError::Busy { holder: None }, Kind::Mutex) => LockError::Busy {
            holder: seen
                .holder
                .as_deref()
                .map(describe_token)
                .or_else(|| seen.foreign.as_deref().map(describe_foreign)),
        },
        (other, _) => other,
    }
}

/// After a split vote: the contender that won the most servers (the same one in everybody's
/// view, ties going to the smallest token) asks again once the others' clean-ups are through,
/// about one round later; the others back off for a random, growing multiple of a round, by
/// which time the favourite normally holds the lock.
fn split_backoff(seen: &Seen, splits: u32) -> Duration {
    let round = seen.round.max(Duration::from_millis(1));
    if seen.favourite {
        round
    } else {
        round * 2 + spread(round * (4 << splits.min(6)))
    }
}

/// Waits up to the duration it is given for the next wake-up, if one comes.
type NextWake<'a> = dyn FnMut(Duration) -> Option<Wake> + 'a;

/// Pauses for `pause` unless woken, telling `progress` where things stand along the way.
fn pause_reporting(
    next_wake: &mut NextWake<'_>,
    pause: Duration,
    started: BootInstant,
    status: &WaitProgress,
    progress: Option<&mut dyn FnMut(&WaitProgress)>,
) -> Option<Wake> {
    let Some(progress) = progress else {
        return next_wake(pause);
    };
    let until = BootInstant::now().add(pause);
    let mut status = status.clone();
    loop {
        status.waited = started.elapsed();
        progress(&status);
        let left = until.remaining();
        if left.is_zero() {
            return None;
        }
        let slice = left.min(PROGRESS_EVERY);
        if let Some(wake) = next_wake(slice) {
            return Some(wake);
        }
        if let Some(ttl) = status.holder_ttl.as_mut() {
            *ttl = ttl.saturating_sub(slice);
        }
    }
}

fn pause_until_woken(wakes: Option<&Receiver<Wake>>, pause: Duration) -> Option<Wake> {
    let Some(wakes) = wakes else {
        std::thread::sleep(pause);
        return None;
    };
    match wakes.recv_timeout(pause) {
        Ok(wake) => Some(wake),
        Err(RecvTimeoutError::Timeout) => None,
        Err(RecvTimeoutError::Disconnected) => {
            std::thread::sleep(pause);
            None
        }
    }
}

/// Waits up to `WAKE_GATHER` for `more` further notifications of the same release (one per
/// server): how many came, and a signal if one arrived meanwhile (which ends the wait).
fn gather_released(next_wake: &mut NextWake<'_>, more: usize) -> (usize, Option<i32>) {
    let until = BootInstant::now().add(WAKE_GATHER);
    let mut heard = 0;
    while heard < more && !until.has_passed() {
        match next_wake(until.remaining()) {
            Some(Wake::Interrupted(signal)) => return (heard, Some(signal)),
            Some(Wake::Released) => heard += 1,
            None => break,
        }
    }
    (heard, None)
}

/// The next wake-up of a waiter that listens on the rounds' own connections (`Nodes::listen`):
/// a message from a server (one wake-up each), what `interrupt` brought (a signal), or what
/// came on `wakes`, within `at_most`.
fn listen(
    nodes: &mut Nodes,
    channel: &str,
    (wakes, interrupt): (Option<&Receiver<Wake>>, Option<Interrupt<'_>>),
    heard: &mut VecDeque<Wake>,
    at_most: Duration,
) -> Option<Wake> {
    let until = BootInstant::now().add(at_most);
    loop {
        if let Some(wake) = wakes.and_then(|wakes| wakes.try_recv().ok()) {
            return Some(wake);
        }
        if let Some(wake) = heard.pop_front() {
            return Some(wake);
        }
        if until.has_passed() {
            return None;
        }
        let news = nodes.listen(channel, until, interrupt.map(|interrupt| interrupt.fd));
        if let Some(wake) = interrupt.filter(|_| news.rang).and_then(|i| (i.take)()) {
            return Some(wake);
        }
        // Anything but `done` (a waiter's own leaving, which a waiter listening here never
        // announces) says the lock was handed to us.
        let released = news
            .messages
            .iter()
            .filter(|(_, payload)| payload != b"done");
        heard.extend(released.map(|_| Wake::Released));
    }
}

/// A uniformly random duration in [0, max].
fn spread(max: Duration) -> Duration {
    max.mul_f64(random_fraction())
}

fn random_fraction() -> f64 {
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    u64::from_le_bytes(bytes) as f64 / u64::MAX as f64
}

/// A uniformly random pause in [delay/2, 3·delay/2], so waiters do not retry in lockstep.
pub(crate) fn jitter(delay: Duration) -> Duration {
    delay.mul_f64(0.5 + random_fraction())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_half_to_one_and_a_half() {
        let delay = Duration::from_millis(100);
        for _ in 0..200 {
            let pause = jitter(delay);
            assert!(pause >= Duration::from_millis(50) && pause <= Duration::from_millis(150));
        }
    }
}
