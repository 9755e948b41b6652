//! A round's connection to one server that never blocks, so that one thread can carry a round's
//! requests to every server at once and wait on all of them in one poll(2) (`lock::nodes::poll`):
//! our own socket (TCP, TLS or a Unix socket, in RESP2; socket.rs moves the bytes and says what
//! TLS changes), or a relay's thread (relay/) for a server only the redis crate reaches. This
//! file owns what the requests and replies mean, the same whichever carries them.
//!
//! A wire is a queue each way. Every request says how many replies it is owed and who gets
//! them, and replies are handed out strictly in the order the requests went out, which is the
//! order a server answers one connection in. That order is what makes a late reply harmless: a
//! request written behind one whose reply is late waits its turn on the wire, its reply is never
//! taken for the late one's, and the server applies the two in that order. A socket's own set-up
//! (AUTH, SELECT: setup.rs) goes in the same burst as the first request, and runs first.
//!
//! A wire may also listen: after `subscribe`, a message published on the channel comes as
//! `Sink::Pushed`, between the replies. A RESP2 connection that has subscribed accepts no
//! other command, so the next request sent on it is preceded by UNSUBSCRIBE in the same burst
//! (no round trip of its own); messages may still come until the server has read that, and
//! none after its reply.

use super::endpoint::Server;
use super::failure::{WireAnswer, WireFailure};
use super::message::is_message;
use super::relay::{Outcome, Relay};
use super::replay::Request;
use super::resp::frame_length;
use super::sink::Sink;
use super::socket::{Reach, Socket};
use crate::clock::BootInstant;
use redis::Value;
use rustix::event::PollFlags;
use std::collections::VecDeque;
use std::io;
use std::os::fd::BorrowedFd;
use std::time::Duration;

struct Owed {
    /// Replies still to come, of which the first `skip` (still) are not wanted.
    count: usize,
    skip: usize,
    got: Vec<Value>,
    to: Sink,
    /// A SUBSCRIBE (`Some(true)`: messages may come after its reply) or an UNSUBSCRIBE
    /// (`Some(false)`: none after its reply).
    messages: Option<bool>,
    /// When it was queued; `None` for a relay's request whose answer is worth the whole wait
    /// before we go (`Relay::ask`).
    asked: Option<BootInstant>,
}

pub(crate) struct Wire {
    carrier: Carrier,
    out: Vec<u8>,
    input: Vec<u8>,
    owed: VecDeque<Owed>,
    failed: Option<WireFailure>,
    /// The hashes of the scripts this connection has sent the source of.
    scripts: Vec<&'static str>,
    /// Messages may come: a SUBSCRIBE was answered, and no UNSUBSCRIBE since. Judged in the
    /// order of the replies, not of the requests: the burst of a waiter's next attempt is
    /// UNSUBSCRIBE, the script, SUBSCRIBE, and a message that comes after that SUBSCRIBE's
    /// reply is one, though the UNSUBSCRIBE was answered before it.
    subscriber: bool,
    /// A SUBSCRIBE was sent and no UNSUBSCRIBE since: the next request must leave first.
    subscribed: bool,
    /// When it started connecting.
    opened: BootInstant,
    /// How long after `opened` the first reply came: the server had read what we sent (past
    /// its handshake, over TLS).
    first_reply: Option<Duration>,
}

/// What carries a wire's requests: our own socket, or a relay's thread (relay.rs), which is
/// handed each request whole and hands back each answer.
enum Carrier {
    Socket(Socket),
    Relay(Box<Relay>),
}

impl Wire {
    /// Starts connecting to `reach` (a Unix socket connects at once) and queues the set-up.
    pub(crate) fn open(reach: &Reach) -> Result<Wire, WireFailure> {
        let mut wire = Wire::on(Carrier::Socket(Socket::open(reach)?));
        for command in super::setup::commands(reach.settings()) {
            wire.queue(&command, (0, 1), Sink::Setup);
        }
        Ok(wire)
    }

    /// Starts the relay that carries requests to `server`, which no socket of ours reaches (a
    /// Sentinel group, a cluster, RESP3), each bounded by its budget for `timeout`.
    pub(crate) fn relay(server: &Server, timeout: Duration) -> Result<Wire, WireFailure> {
        Ok(Wire::on(Carrier::Relay(Box::new(Relay::start(
            server, timeout,
        )?))))
    }

    fn on(carrier: Carrier) -> Wire {
        Wire {
            carrier,
            out: Vec::new(),
            input: Vec::new(),
            owed: VecDeque::new(),
            failed: None,
            scripts: Vec::new(),
            subscriber: false,
            subscribed: false,
            opened: BootInstant::now(),
            first_reply: None,
        }
    }

    /// Queues `request`, whose replies after the first `skip` (of `count`) go to `to`. A
    /// script's first run on this connection carries its source (scripts.rs).
    pub(crate) fn send(&mut self, request: &Request, to: Sink) {
        self.send_reaching(request, to, false);
    }

    /// `send`, and on a Sentinel group's relay also to the masters the run used before the one
    /// it uses now (`Server::former`), their answers not counted: a release or an extension.
    pub(crate) fn send_everywhere(&mut self, request: &Request, to: Sink) {
        self.send_reaching(request, to, true);
    }

    fn send_reaching(&mut self, request: &Request, to: Sink, everywhere: bool) {
        self.leave_channel();
        match &self.carrier {
            Carrier::Socket(_) => {
                let (skip, count) = (request.skip, request.count);
                self.queue(&request.packed, (skip, count), to);
            }
            Carrier::Relay(relay) => {
                // The relay's session sends a script's source itself (blocking.rs).
                let patient = relay.ask(request, everywhere);
                self.owe(request.count, request.skip, to, None);
                if let Some(owed) = self.owed.back_mut().filter(|_| patient) {
                    owed.asked = None;
                }
            }
        }
    }

    /// Queues packed commands on the socket, a script's first run with its source.
    fn queue(&mut self, packed: &[u8], (skip, count): (usize, usize), to: Sink) {
        match super::scripts::first_use(packed, &mut self.scripts) {
            Some(eval) => self.out.extend_from_slice(&eval),
            None => self.out.extend_from_slice(packed),
        }
        self.owe(count, skip, to, None);
    }

    /// A request after a subscription leaves the channel first (see the module comment).
    fn leave_channel(&mut self) {
        if !self.subscribed {
            return;
        }
        self.subscribed = false;
        match &self.carrier {
            Carrier::Socket(_) => self
                .out
                .extend_from_slice(&redis::cmd("UNSUBSCRIBE").get_packed_command()),
            Carrier::Relay(relay) => relay.unsubscribe(),
        }
        self.owe(1, 0, Sink::Discard, Some(false));
    }

    fn owe(&mut self, count: usize, skip: usize, to: Sink, messages: Option<bool>) {
        self.owed.push_back(Owed {
            count,
            skip,
            got: Vec::new(),
            to,
            messages,
            asked: Some(BootInstant::now()),
        });
    }

    /// Whether replies are still owed on this connection.
    pub(crate) fn owes(&self) -> bool {
        !self.owed.is_empty()
    }

    /// Whether a reply is still owed to `sink`.
    pub(crate) fn owes_to(&self, sink: Sink) -> bool {
        self.owed.iter().any(|owed| owed.to == sink)
    }

    /// Subscribes to `channel`: its confirmation is the reply owed to `to`, and every message
    /// after it comes as `Sink::Pushed`. Nothing is sent if it already listens (one channel a
    /// wire). A relay subscribes near `near`, the key whose scripts publish on it (relay.rs).
    pub(crate) fn subscribe(&mut self, channel: &str, near: &str, to: Sink) {
        if self.subscribed {
            return;
        }
        match &self.carrier {
            Carrier::Socket(_) => {
                let subscribe = redis::cmd("SUBSCRIBE").arg(channel).get_packed_command();
                self.out.extend_from_slice(&subscribe);
            }
            Carrier::Relay(relay) => relay.subscribe(channel, near),
        }
        self.owe(1, 0, to, Some(true));
        self.subscribed = true;
    }

    /// Whether it listens (`subscribe`) and no request has been sent since.
    pub(crate) fn subscribed(&self) -> bool {
        self.subscribed && self.failed.is_none()
    }

    /// Hands the replies owed to `from` to `to` instead.
    pub(crate) fn retarget(&mut self, from: Sink, to: Sink) {
        for owed in &mut self.owed {
            if owed.to == from {
                owed.to = to;
            }
        }
    }

    /// Whether a request is still waiting to be written: bytes the socket would take if we
    /// waited for it, not those held for a connection or a TLS handshake the server has yet to
    /// accept or answer (socket.rs), which wait on the server as a reply does.
    pub(crate) fn sending(&self) -> bool {
        self.failed.is_none() && self.writing() && !self.connecting()
    }

    /// Whether its TCP connect is under way: nothing it carries has reached the server.
    pub(crate) fn connecting(&self) -> bool {
        self.failed.is_none() && matches!(&self.carrier, Carrier::Socket(s) if s.connecting())
    }

    fn writing(&self) -> bool {
        // A relay is handed each request whole, at once.
        let Carrier::Socket(socket) = &self.carrier else {
            return false;
        };
        socket.connecting() || !self.out.is_empty() || socket.wants_write()
    }

    /// Whether closing it now may lose what we sent: a connection still connecting, or a TLS
    /// one no reply has come on yet, on which a request is owed (socket.rs, "The end"); if so,
    /// whether its server has yet to accept it or answer the handshake (since when it has been
    /// connecting), or has not answered our request yet (`None`: the server is there, and may
    /// not have read it).
    ///
    /// A relay's requests are carried by its thread, which goes with the process, and it cannot
    /// say whether it has written one yet: while one is owed an answer it is unconfirmed as a
    /// handshake is, since the oldest was handed over; one that must also reach a Sentinel
    /// group's former masters, as its server is there (a release must reach them).
    pub(crate) fn unconfirmed(&self) -> Option<Option<BootInstant>> {
        let socket = match &self.carrier {
            Carrier::Socket(socket) => socket,
            Carrier::Relay(_) if self.failed.is_some() => return None,
            Carrier::Relay(_) if self.owed.iter().any(|owed| owed.asked.is_none()) => {
                return Some(None)
            }
            Carrier::Relay(_) => return self.owed.front().map(|owed| owed.asked),
        };
        let fresh = socket.connecting() || socket.tls() && self.first_reply.is_none();
        let unconfirmed = self.failed.is_none() && fresh && self.owes();
        let handshaking = socket.connecting() || socket.handshaking();
        unconfirmed.then_some(handshaking.then_some(self.opened))
    }

    /// How long after it started connecting its first reply came, if one has.
    pub(crate) fn first_reply(&self) -> Option<Duration> {
        self.first_reply
    }

    pub(crate) fn failure(&self) -> Option<&WireFailure> {
        self.failed.as_ref()
    }

    /// What to wait for on the socket.
    pub(crate) fn interest(&self) -> PollFlags {
        if self.failed.is_some() {
            PollFlags::empty()
        } else if self.writing() {
            PollFlags::OUT | PollFlags::IN
        } else {
            PollFlags::IN
        }
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        match &self.carrier {
            Carrier::Socket(socket) => socket.fd(),
            Carrier::Relay(relay) => relay.fd(),
        }
    }

    /// Moves bytes both ways as far as the socket allows without blocking, and returns what was
    /// answered, in order. A failed connection answers everything it owed with its failure.
    pub(crate) fn exchange(&mut self) -> Vec<(Sink, WireAnswer)> {
        let mut answered = Vec::new();
        if self.failed.is_none() {
            if let Err(failure) = self.pump(&mut answered) {
                self.fail(failure, &mut answered);
            }
        }
        answered
    }

    /// Fails the connection (a request on it timed out, or it broke): everything still owed is
    /// answered with `failure`.
    pub(crate) fn fail(&mut self, failure: WireFailure, answered: &mut Vec<(Sink, WireAnswer)>) {
        for owed in self.owed.drain(..) {
            answered.push((owed.to, Err(failure.clone())));
        }
        self.out.clear();
        self.failed = Some(failure);
    }

    fn pump(&mut self, answered: &mut Vec<(Sink, WireAnswer)>) -> Result<(), WireFailure> {
        let socket = match &mut self.carrier {
            Carrier::Socket(socket) => socket,
            Carrier::Relay(relay) => {
                for outcome in relay.take()? {
                    self.hand_on(outcome, answered);
                }
                return Ok(());
            }
        };
        if !socket.connected()? {
            return Ok(());
        }
        socket.write_from(&mut self.out)?;
        let closed = socket.read_into(&mut self.input)?;
        self.take_replies(answered)?;
        if closed {
            return Err(WireFailure::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        Ok(())
    }

    /// What a relay handed back: an answer to the oldest request, whole, or a message.
    fn hand_on(&mut self, outcome: Outcome, answered: &mut Vec<(Sink, WireAnswer)>) {
        let answer = match outcome {
            Outcome::Message(message) => return answered.push((Sink::Pushed, Ok(vec![message]))),
            Outcome::Answer(answer) => answer,
        };
        let Some(owed) = self.owed.pop_front() else {
            return;
        };
        if self.first_reply.is_none() {
            self.first_reply = Some(BootInstant::now().since(self.opened));
        }
        answered.push((owed.to, answer));
    }

    fn take_replies(&mut self, answered: &mut Vec<(Sink, WireAnswer)>) -> Result<(), WireFailure> {
        let mut start = 0;
        while let Some(length) = frame_length(&self.input[start..]) {
            let frame = &self.input[start..start + length];
            start += length;
            let value = redis::parse_redis_value(frame).map_err(|e| {
                WireFailure::new(io::ErrorKind::InvalidData, format!("bad reply: {e}"))
            })?;
            if self.subscriber && is_message(&value) {
                answered.push((Sink::Pushed, Ok(vec![value])));
                continue;
            }
            let Some(owed) = self.owed.front_mut() else {
                return Err(WireFailure::new(
                    io::ErrorKind::InvalidData,
                    "a reply nobody asked for",
                ));
            };
            if owed.skip > 0 {
                owed.skip -= 1;
            } else {
                owed.got.push(value);
            }
            owed.count -= 1;
            if self.first_reply.is_none() {
                self.first_reply = Some(BootInstant::now().since(self.opened));
            }
            if owed.count == 0 {
                let owed = self.owed.pop_front().expect("front exists");
                if let Some(messages) = owed.messages {
                    self.subscriber = messages;
                }
                if owed.to == Sink::Setup {
                    if let Some(what) = owed.got.first().and_then(super::setup::refused) {
                        self.input.drain(..start);
                        return Err(WireFailure::new(io::ErrorKind::PermissionDenied, what));
                    }
                } else {
                    answered.push((owed.to, Ok(owed.got)));
                }
            }
        }
        self.input.drain(..start);
        Ok(())
    }
}
