//! A round on one thread: every server's request goes out on its wire (server/wire.rs) and one
//! poll(2) waits on all their sockets at once, so a round costs no thread, and a stopped or
//! black-holed server costs `timeout`, never more, and never delays the others.
//!
//! The properties of the thread-per-server rounds (threads.rs) hold here as well:
//! - `timeout` bounds each server's part: connect, set-up (AUTH, SELECT) and every reply;
//! - a round decided early returns at once; what the servers it did not wait for still owe is
//!   read later and discarded, and any clean-up goes out behind the late request on the same
//!   wire (`settle`), which the server applies after it;
//! - an open connection that died while idle is replaced within the same round, once;
//! - a wire whose request timed out may still carry it to the server: it serves the follow-up
//!   to that round (the clean-up must go out behind the request), then the next ordinary round
//!   opens a fresh one. One that carries a clean-up is kept aside (`retired`) until the clean-up
//!   is answered, or for one `timeout` at most: closing a socket with unread replies resets
//!   the connection, and the server may not have read the clean-up yet.

use super::round::{classify, Feed, Reply, Task, Unfinished};
use crate::clock::BootInstant;
use crate::lock::keys::owner;
use crate::server::{payload, wait_any};
use crate::server::{Reach, Replay, Server, Session, Sink, Step, Wire, WireAnswer, WireFailure};
use redis::RedisResult;
use std::time::Duration;

/// The wires of a round's servers: each our own socket, or a relay's (server/relay.rs).
pub(super) struct Loop {
    /// The servers, in the caller's order (`Nodes::servers`).
    pub(super) servers: Vec<Server>,
    /// How our own socket reaches each server; `None`: a relay carries its requests.
    reach: Vec<Option<Reach>>,
    /// The per-server timeout (`--timeout`): a relay bounds each request by it.
    pub(super) timeout: Duration,
    pub(super) wires: Vec<Option<OpenWire>>,
    /// Wires moved aside with replies still owed; dropped once they owe nothing, or at their
    /// deadline.
    pub(super) retired: Vec<(Wire, BootInstant)>,
    /// What becomes of the replies rounds decided early did not wait for (behind.rs).
    pub(super) tasks: Vec<Task>,
    next_id: u64,
    /// Messages that came while a round or a clean-up was being read, for `listen` to hand on.
    pub(super) pushed: Vec<(usize, Vec<u8>)>,
    /// Late answers that came before their round was settled, by task id (behind.rs).
    pub(super) early: Vec<(u64, WireAnswer)>,
}

pub(super) struct OpenWire {
    pub(super) wire: Wire,
    /// A request on it timed out: it may still be applied (see the module comment).
    pub(super) stalled: bool,
    /// Something came back on it since it was opened: a server that answered once and then
    /// stopped is worth a new connection; one that never did, not (`retire_stalled`).
    pub(super) heard: bool,
    /// Until when replies still owed on it are worth waiting for before we go.
    pub(super) quiet_by: BootInstant,
}

/// One server's part in the round being run.
struct Entry {
    replay: Replay,
    /// The wire was open before the round: if it turns out dead, one fresh try.
    was_open: bool,
    /// Its closure finished after the round was decided: not counted.
    finished: bool,
}

/// The round being run: its closure, its replies so far, and its bounds.
struct Run<'a, T, F: ?Sized> {
    op: &'a F,
    entries: Vec<Option<Entry>>,
    replies: Vec<Option<Reply<T>>>,
    started: BootInstant,
    timeout: Duration,
    /// Each server's deadline: `timeout` after the start, or its budget (`Server::budget`).
    deadlines: Vec<BootInstant>,
    /// False once the round is decided: later results are not counted.
    counting: bool,
    /// A channel to subscribe to behind each request, in the same burst (`Loop::listen`).
    listen: Option<&'a str>,
    /// Also to a Sentinel group's former masters (`Wire::send_everywhere`).
    everywhere: bool,
}

impl Loop {
    pub(super) fn new(servers: Vec<Server>, timeout: Duration) -> Loop {
        let reach: Vec<Option<Reach>> = servers.iter().map(Server::reach).collect();
        Loop {
            timeout,
            wires: reach.iter().map(|_| None).collect(),
            servers,
            reach,
            retired: Vec::new(),
            tasks: Vec::new(),
            next_id: 0,
            pushed: Vec::new(),
            early: Vec::new(),
        }
    }

    /// A record of server `index`'s replies, for its closure to run over (`Session::replay`).
    pub(super) fn record(&self, index: usize) -> Replay {
        Replay::new(self.servers[index].is_cluster())
    }

    /// Runs `op` for the servers whose entry in `targets` is true, until every one has its
    /// reply, `decided` says those in hand settle it, or `timeout` has passed. The servers it
    /// did not wait for (or not asked) are `None`; the first are also `Unfinished`, for
    /// `adopt` (behind.rs).
    /// With `listen`, each wire subscribes to that channel behind its request (see `listen`);
    /// with `everywhere`, a Sentinel group's request also reaches its former masters.
    pub(super) fn round<T>(
        &mut self,
        targets: &[bool],
        timeout: Duration,
        (op, listen, everywhere): (
            &(impl Fn(&mut Session) -> RedisResult<T> + ?Sized),
            Option<&str>,
            bool,
        ),
        decided: impl Fn(&[Option<Reply<T>>]) -> bool,
    ) -> (Vec<Option<Reply<T>>>, Vec<Unfinished>) {
        let started = BootInstant::now();
        let deadlines: Vec<BootInstant> = (self.servers.iter())
            .map(|server| started.add(server.budget(timeout)))
            .collect();
        let mut run = Run {
            op,
            entries: (0..targets.len())
                .map(|index| {
                    targets[index].then(|| Entry {
                        replay: self.record(index),
                        was_open: false,
                        finished: false,
                    })
                })
                .collect(),
            replies: targets.iter().map(|_| None).collect(),
            started,
            timeout,
            deadlines,
            counting: true,
            listen,
            everywhere,
        };
        for index in 0..targets.len() {
            if let Some(entry) = run.entries[index].as_mut() {
                entry.was_open = self.wires[index].is_some();
                self.start(index, &mut run);
            }
        }
        // Until when the servers still waited for may answer.
        let waited_until = |run: &Run<'_, T, _>| {
            (0..targets.len())
                .filter(|&index| run.entries[index].is_some() && run.replies[index].is_none())
                .map(|index| run.deadlines[index])
                .filter(|deadline| !deadline.has_passed())
                .reduce(BootInstant::max)
        };
        while let Some(deadline) = waited_until(&run) {
            if decided(&run.replies) {
                break;
            }
            self.wait(deadline);
            self.collect(&mut run);
        }
        let deadline = run.deadlines.iter().copied().reduce(BootInstant::max);
        let deadline = deadline.unwrap_or(started);
        // Decided early: the servers not waited for still get their request before the round
        // returns, as the Redlock algorithm asks of every attempt, as far as they take it: a
        // wire whose server has yet to accept the connection (or, over TLS, to answer the
        // handshake) holds it, and writes it once the server does, when the loop next runs or
        // before we go (behind.rs's `finish`). Waiting for that here would wait for a stopped
        // server whose listen queue is full, or a host that is down, as long as for its reply.
        // What they answer is no longer counted.
        run.counting = false;
        let unsent = |this: &Self, run: &Run<'_, T, _>| {
            (0..targets.len()).any(|index| {
                run.entries[index].is_some()
                    && run.replies[index].is_none()
                    && this.wires[index]
                        .as_ref()
                        .is_some_and(|open| open.wire.sending())
            })
        };
        while !deadline.has_passed() && unsent(self, &run) {
            self.wait(deadline);
            self.collect(&mut run);
        }
        let mut unfinished = Vec::new();
        for index in 0..targets.len() {
            let Some(entry) = run.entries[index].as_mut() else {
                continue;
            };
            if run.replies[index].is_some() {
                continue;
            }
            let open = self.wires[index]
                .as_mut()
                .expect("a server waited for has a wire");
            if run.deadlines[index].has_passed() && !entry.finished {
                // Timed out: the request may still reach the server and be applied.
                open.wire.retarget(Sink::Round(index), Sink::Discard);
                open.stalled = true;
                entry.replay.fail(WireFailure::timed_out());
                let result = match Session::replay(&mut entry.replay, op) {
                    Step::Done(result) => result,
                    Step::Send(_) => Err(WireFailure::timed_out().error()),
                };
                run.replies[index] = Some(reply(result, started, timeout));
            } else {
                self.next_id += 1;
                let id = self.next_id;
                open.wire.retarget(Sink::Round(index), Sink::Late(id));
                unfinished.push(Unfinished {
                    id,
                    index,
                    replay: std::mem::take(&mut entry.replay),
                    by: run.deadlines[index],
                });
            }
        }
        (run.replies, unfinished)
    }

    /// Opens the wire if needed and sends the first request of server `index`.
    fn start<T, F>(&mut self, index: usize, run: &mut Run<'_, T, F>)
    where
        F: Fn(&mut Session) -> RedisResult<T> + ?Sized,
    {
        if self.wires[index]
            .as_ref()
            .is_some_and(|open| open.wire.failure().is_some())
        {
            self.wires[index] = None;
        }
        if self.wires[index].is_none() {
            let wire = match &self.reach[index] {
                Some(reach) => Wire::open(reach),
                None => Wire::relay(&self.servers[index], self.timeout),
            };
            match wire {
                Ok(wire) => {
                    self.wires[index] = Some(OpenWire {
                        wire,
                        stalled: false,
                        heard: false,
                        quiet_by: run.started,
                    });
                }
                Err(failure) => {
                    run.replies[index] =
                        Some(reply(Err(failure.error()), run.started, run.timeout));
                    return;
                }
            }
        }
        self.advance(index, run);
    }

    /// Moves bytes on the retired wires, and drops those that owe nothing or waited long
    /// enough.
    pub(super) fn pump_retired(&mut self) {
        self.retired.retain_mut(|(wire, by)| {
            wire.exchange();
            wire.owes() && wire.failure().is_none() && !by.has_passed()
        });
    }

    /// Runs server `index`'s closure over the replies in, and sends what it asks for next.
    fn advance<T, F>(&mut self, index: usize, run: &mut Run<'_, T, F>)
    where
        F: Fn(&mut Session) -> RedisResult<T> + ?Sized,
    {
        let entry = run.entries[index].as_mut().expect("an asked server");
        match Session::replay(&mut entry.replay, run.op) {
            Step::Done(result) if run.counting => {
                run.replies[index] = Some(reply(result, run.started, run.timeout));
            }
            // Its result is taken again from the same replies once the caller settles
            // (behind.rs).
            Step::Done(_) => entry.finished = true,
            Step::Send(request) => {
                let open = self.wires[index].as_mut().expect("a wire was opened");
                if run.everywhere {
                    open.wire.send_everywhere(&request, Sink::Round(index));
                } else {
                    open.wire.send(&request, Sink::Round(index));
                }
                if let Some(channel) = run.listen {
                    open.wire.subscribe(channel, owner(channel), Sink::Discard);
                }
            }
        }
    }

    /// Moves bytes on every wire and hands each answer to its server's closure.
    fn collect<T, F>(&mut self, run: &mut Run<'_, T, F>)
    where
        F: Fn(&mut Session) -> RedisResult<T> + ?Sized,
    {
        self.pump_retired();
        for index in 0..self.wires.len() {
            let Some(open) = self.wires[index].as_mut() else {
                continue;
            };
            let answers = open.wire.exchange();
            open.heard |= answers.iter().any(|(_, answer)| answer.is_ok());
            for (sink, answer) in answers {
                if let Sink::Late(id) = sink {
                    self.deliver(id, Feed::Answer(answer));
                    continue;
                }
                if sink == Sink::Pushed {
                    self.stash_pushed(index, answer);
                    continue;
                }
                if sink != Sink::Round(index) || run.replies[index].is_some() {
                    continue;
                }
                let Some(entry) = run.entries[index].as_mut().filter(|e| !e.finished) else {
                    continue;
                };
                let stale = matches!(&answer, Err(failure) if failure.dropped());
                if stale && entry.was_open && !entry.replay.any_reply() {
                    // An open connection may have died while idle (server restarted, idle
                    // timeout, a NAT forgot it): that says nothing about the server now, so
                    // try a fresh one within the same deadline. Repeating is safe: SET NX with
                    // our token and the compare-and-delete / compare-and-pexpire scripts do no
                    // harm when applied twice.
                    *entry = Entry {
                        replay: Replay::new(self.servers[index].is_cluster()),
                        was_open: false,
                        finished: false,
                    };
                    self.wires[index] = None;
                    self.start(index, run);
                    break;
                }
                entry.replay.answer(answer);
                self.advance(index, run);
            }
        }
    }

    /// Keeps a message that came while a round or a clean-up was read, for `listen`: it may be
    /// a release that came right after the attempt it answers.
    pub(super) fn stash_pushed(&mut self, index: usize, message: WireAnswer) {
        if let Ok(values) = message {
            self.pushed
                .extend(payload(values).map(|payload| (index, payload)));
        }
    }

    /// Waits until a socket with something owed or to send is ready, or `until`.
    pub(super) fn wait(&mut self, until: BootInstant) {
        let wires = self.wires.iter().flatten().map(|open| &open.wire);
        let retired = self.retired.iter().map(|(wire, _)| wire);
        wait_any(wires.chain(retired), until.remaining());
    }
}

pub(super) fn reply<T>(
    result: RedisResult<T>,
    started: BootInstant,
    timeout: Duration,
) -> Reply<T> {
    let at = BootInstant::now();
    Reply {
        result: result.map_err(|err| classify(err, timeout)),
        at,
        latency: at.since(started),
    }
}
