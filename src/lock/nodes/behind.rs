//! What the poll loop (poll.rs) does with the requests a round decided early stopped waiting
//! for, and with the wires whose requests went unanswered (`retire_stalled`). Each such
//! request becomes a task: its closure goes on running as its replies come (so a request of
//! several steps is finished as the thread of a round would have finished it), and once it has
//! its result, or none by the round's deadline, the clean-up the caller settled on
//! (`Nodes::settle`) goes out behind it, on the same wire, with that result. Tasks move on
//! whenever the loop runs: the next round, `settle` itself for replies already in, and before
//! we go (`finish`), which sends every clean-up still due at once, without waiting for answers.
//!
//! A late answer can come before its round is settled: the caller may run another round
//! first (`--fence`'s write-back runs between the acquire round and its settling), and that
//! round reads every wire. Such an answer is kept (`Loop::early`) for the task `adopt` makes:
//! dropped, the task would wait for an answer that already came, until its round's deadline,
//! and a one-shot `acquire --fence` would sit out one `--timeout` before it exits.

use super::poll::Loop;
use super::round::{Cleanup, Feed, Next, Op, Task, Unfinished};
use crate::clock::BootInstant;
use crate::server::{Session, Sink, Step, Wire};
use std::time::Duration;

impl Loop {
    /// Takes charge of `late`: their closure `op` goes on, then `cleanup` (if any) goes out
    /// behind each with its result. Replies already in are taken at once.
    pub(super) fn adopt<T: Send + 'static>(
        &mut self,
        late: Vec<Unfinished>,
        op: Op<T>,
        cleanup: Option<Cleanup<T>>,
        (timeout, at_once): (Duration, bool),
    ) {
        for unfinished in late {
            let (op, cleanup) = (op.clone(), cleanup.clone());
            let mut replay = unfinished.replay;
            let mut record = self.record(unfinished.index);
            let mut finished = false;
            let next = move |feed: Feed| {
                if finished {
                    return Next::Done;
                }
                let value = match feed {
                    Feed::Answer(answer) => {
                        replay.answer(answer);
                        match Session::replay(&mut replay, &*op) {
                            Step::Send(request) => return Next::Ask(request),
                            Step::Done(result) => result.ok(),
                        }
                    }
                    // Whether the replies already in finish it (they came before `adopt`).
                    Feed::Check => match Session::replay(&mut replay, &*op) {
                        Step::Send(_) => return Next::Wait,
                        Step::Done(result) => result.ok(),
                    },
                    // No answer in time: the request may still be applied.
                    Feed::Expired => None,
                };
                finished = true;
                let Some(cleanup) = &cleanup else {
                    return Next::Done;
                };
                match Session::replay(&mut record, &|con: &mut Session| {
                    cleanup(con, value.as_ref())
                }) {
                    Step::Send(request) => Next::Tell(request),
                    Step::Done(_) => Next::Done,
                }
            };
            let id = unfinished.id;
            self.tasks.push(Task {
                id: unfinished.id,
                index: unfinished.index,
                by: unfinished.by,
                patience: timeout,
                next: Box::new(next),
            });
            let (early, later) = std::mem::take(&mut self.early)
                .into_iter()
                .partition(|(early, _)| *early == id);
            self.early = later;
            for (_, answer) in early {
                self.deliver(id, Feed::Answer(answer));
            }
            self.deliver(id, Feed::Check);
            if at_once && self.tasks.iter().any(|task| task.id == id) {
                // Its answer is not in: the clean-up goes out now, as after no answer in time;
                // the answer is dropped when it comes (no task waits for it).
                self.deliver(id, Feed::Expired);
            }
        }
        self.pump();
    }

    /// Hands a late answer to its task and sends what the task asks for.
    pub(super) fn deliver(&mut self, id: u64, feed: Feed) {
        let Some(at) = self.tasks.iter().position(|task| task.id == id) else {
            // Its round is not settled yet: kept for `adopt`. (A round dropped unsettled leaves
            // its few answers here, meaning nothing, until we go.)
            if let Feed::Answer(answer) = feed {
                self.early.push((id, answer));
            }
            return;
        };
        let mut task = self.tasks.swap_remove(at);
        let next = (task.next)(feed);
        let Some(open) = self.wires[task.index].as_mut() else {
            return;
        };
        match next {
            Next::Ask(request) => {
                let sink = Sink::Late(task.id);
                open.wire.send(&request, sink);
                self.tasks.push(task);
            }
            Next::Tell(request) => {
                open.wire.send(&request, Sink::Discard);
                // Its reply is waited for before we go, so that closing the wire cannot cut
                // the clean-up off.
                open.quiet_by = open.quiet_by.max(BootInstant::now().add(task.patience));
                open.wire.exchange();
            }
            Next::Wait => self.tasks.push(task),
            Next::Done => {}
        }
    }

    /// Tasks whose round's deadline passed without an answer go on without one: the wire's
    /// request may still be applied, so the clean-up goes out behind it there.
    pub(super) fn expire_tasks(&mut self) {
        let expired: Vec<(u64, usize)> = self
            .tasks
            .iter()
            .filter(|task| task.by.has_passed())
            .map(|task| (task.id, task.index))
            .collect();
        for (id, index) in expired {
            if let Some(open) = self.wires[index].as_mut() {
                open.wire.retarget(Sink::Late(id), Sink::Discard);
                open.stalled = true;
            }
            self.deliver(id, Feed::Expired);
        }
    }

    /// Moves bytes on every wire without waiting, handing late answers to their tasks.
    pub(super) fn pump(&mut self) {
        self.pump_retired();
        for index in 0..self.wires.len() {
            let Some(open) = self.wires[index].as_mut() else {
                continue;
            };
            let answers = open.wire.exchange();
            open.heard |= answers.iter().any(|(_, answer)| answer.is_ok());
            for (sink, answer) in answers {
                match sink {
                    Sink::Late(id) => self.deliver(id, Feed::Answer(answer)),
                    Sink::Pushed => self.stash_pushed(index, answer),
                    _ => {}
                }
            }
        }
        self.expire_tasks();
    }

    /// A new round (not a follow-up) does not go out on a wire whose last request timed out.
    /// One that carries a clean-up is kept aside until its reply (or `quiet_by`); the others
    /// are closed, as the thread of a round drops such a connection. Unless nothing ever came
    /// back on it: its server is stopped or cut off since we connected, a new connection would
    /// fare no better, and each one would wait in that server's listen queue, which a crowd of
    /// waiters would fill (then no new connection can even be made). The requests on it are
    /// answered in order, if ever. A wire still connecting is replaced all the same: nothing
    /// it carries has reached the server, and a fresh connection gets in the moment the server
    /// accepts again, where the old one would wait for its handshake's next retransmission (a
    /// second or more later).
    pub(super) fn retire_stalled(&mut self) {
        self.expire_tasks();
        for slot in &mut self.wires {
            if let Some(open) = slot.as_mut().filter(|open| {
                open.stalled
                    && !open.heard
                    && !open.wire.sending()
                    && !open.wire.connecting()
                    && open.wire.failure().is_none()
            }) {
                open.stalled = false;
                continue;
            }
            if slot.as_ref().is_some_and(|open| open.stalled) {
                let open = slot.take().expect("checked");
                if !open.quiet_by.has_passed() {
                    self.retired.push((open.wire, open.quiet_by));
                }
            }
        }
    }

    /// Lets go of the requests a round decided early did not wait for, when nothing that
    /// follows depends on their answer (`Nodes::round_decided`): each answer is read and dropped
    /// when it comes, and the wire goes on serving later rounds behind it, in order. One that
    /// has not come by its round's deadline makes the wire stalled, as a time-out does, so a
    /// connection that stopped answering (a NAT that forgot it) is replaced by the next round
    /// rather than carrying every later request too late.
    pub(super) fn let_go(&mut self, late: Vec<Unfinished>, timeout: Duration) {
        for unfinished in late {
            let owed = self.wires[unfinished.index]
                .as_ref()
                .is_some_and(|open| open.wire.owes_to(Sink::Late(unfinished.id)));
            if !owed {
                // Its answer came while the round was still sending to the others.
                continue;
            }
            self.tasks.push(Task {
                id: unfinished.id,
                index: unfinished.index,
                by: unfinished.by,
                patience: timeout,
                next: Box::new(|_| Next::Done),
            });
        }
    }

    /// Before we go: every late request still in our charge gets its clean-up now, as if no
    /// answer had come in time (the widest clean-up: whatever a late server answers, the one
    /// for no answer covers it, withdraw.rs), every byte we owe a server is written (by
    /// `timeout` at most), and what has already come is read, so that closing a wire resets
    /// nothing it carries. Replies still owed are not waited for: a server that has not
    /// answered by now may be stopped, and waiting for it would cost every one-shot command
    /// the whole `--timeout` (the module comment of nodes/ says why that is safe).
    ///
    /// But closing a connection may lose what we sent on it: one still connecting has written
    /// nothing yet (a round does not wait for the server to accept it: `Wire::sending`), and
    /// over TLS, one on which no reply has come yet may have its handshake still wait on the
    /// server, or the server not have read past it (server/socket.rs, "The end"). One whose
    /// server answered the handshake is there: its first reply is waited for (within
    /// `timeout`), so that what it was sent is read before we close. One whose server has not
    /// accepted the connection or answered the handshake yet may be stopped (a stopped
    /// server's full listen queue, or a host that is down, accepts no connection), and
    /// waiting for it to the end would cost every one-shot command the whole `--timeout`; not
    /// waiting at all would lose, on a server merely slower than the others, what every
    /// one-shot sends it (a release's delete: its copy of the lock would stay until its ttl).
    /// So it is given, from when it started connecting, twice as long as the slowest server
    /// that did answer took to answer its first request, and a tenth of `timeout` at least
    /// (a busy machine's scheduling, not the network, is then what makes one server later than
    /// the others): a server that has not answered by then is stopped or far away. With no
    /// answer anywhere, none is waited for. A relay's wire (server/relay) is the same case: its
    /// thread, which goes with the process, may not have written what it was handed yet, so a
    /// request still owed is given that long from when it was handed over.
    pub(super) fn finish(&mut self, timeout: Duration) {
        self.pump();
        let late: Vec<(u64, usize)> = self
            .tasks
            .iter()
            .map(|task| (task.id, task.index))
            .collect();
        for (id, index) in late {
            if let Some(open) = self.wires[index].as_mut() {
                open.wire.retarget(Sink::Late(id), Sink::Discard);
            }
            self.deliver(id, Feed::Expired);
        }
        let by = BootInstant::now().add(timeout);
        let answered_within = self
            .wires
            .iter()
            .flatten()
            .filter_map(|open| open.wire.first_reply())
            .max();
        // Until when an unconfirmed TLS connection opened at `since` is waited for.
        let patience = |since: BootInstant| {
            answered_within.map(|answered| since.add((answered * 2).max(timeout / 10)).min(by))
        };
        loop {
            self.pump();
            let wires = || self.wires.iter().flatten().map(|open| &open.wire);
            let sending =
                wires().any(Wire::sending) || self.retired.iter().any(|(wire, _)| wire.sending());
            let unconfirmed = wires()
                .filter_map(Wire::unconfirmed)
                .filter_map(|handshaking| match handshaking {
                    Some(since) => patience(since),
                    None => Some(by),
                })
                .filter(|until| !until.has_passed())
                .reduce(BootInstant::min);
            if by.has_passed() || (!sending && unconfirmed.is_none()) {
                return;
            }
            // Bytes to write wake us as the socket takes them, a reply as it comes.
            self.wait(match unconfirmed {
                Some(until) if !sending => until,
                _ => by,
            });
        }
    }
}
