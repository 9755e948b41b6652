//! Asking a group's sentinels where its master is: every sentinel at once, each on a thread of
//! its own, on the connection kept from the last time it was asked (so asking again costs one
//! round trip, not two), the answers taken as they arrive. A discovery hands out the master that
//! a majority of the listed sentinels name (`next`), or says whether a majority still names the
//! master in use (`confirms`). Which one is used, and for how long, is the group's (group.rs,
//! master.rs).
//!
//! Why a majority of the sentinels listed (answering or not), and not the first answer: a group
//! is one vote, and two runs must never count it on two different masters at once. Sentinels
//! can disagree (a stale one that missed a failover, one partitioned off, one monitoring another
//! server under the same name); taking whichever answers first let one run count the group on
//! one master and a second run on another, each holding the group's vote, so that with one more
//! server down both held the lock. Two majorities of the same sentinels share one, and a
//! sentinel names one master at a time, so two runs that each wait for a majority see the same
//! master, but across a failover (when the majority itself moves on, and the promoted replica may
//! lack the key: docs/servers.md says what that costs). That is also Sentinel's own rule: it
//! needs a majority of its sentinels to authorise a failover. A group whose sentinels name no
//! master by a majority (they disagree, or too few answer) votes no, with a message saying
//! which sentinel names what. The answers arrive together, so waiting for a majority costs no
//! round trip: only the wait for the slowest of the majority, and the answer is taken the
//! moment a majority agrees, or the moment it no longer can.

use super::super::blocking::{Blocking, Dialer};
use super::super::client::time_left;
use crate::clock::BootInstant;
use crate::human::{first_line, lowercase_first};
use redis::RedisResult;
use std::sync::{mpsc, Arc, Mutex};

/// Stack of a thread that asks one sentinel: the redis client needs little.
const ASKER_STACK: usize = 256 * 1024;

/// A master's address, as a sentinel names it.
pub(crate) type Address = (String, u16);

/// One sentinel's answer: the master's address, or `None` when it knows no such master.
type SentinelAnswer = RedisResult<Option<Address>>;

/// A group's sentinels: how to reach each, and the connection to each kept between askings.
pub(crate) struct Sentinels {
    dialers: Vec<Dialer>,
    /// `host:port` of each, for messages.
    addresses: Vec<String>,
    connections: Arc<Mutex<Vec<Option<Blocking>>>>,
}

impl Sentinels {
    pub(crate) fn new(dialers: Vec<Dialer>, addresses: Vec<String>) -> Sentinels {
        Sentinels {
            connections: Arc::new(Mutex::new(dialers.iter().map(|_| None).collect())),
            dialers,
            addresses,
        }
    }

    /// Each sentinel as `host:port` with its dialer.
    pub(crate) fn each(&self) -> Vec<(&str, &Dialer)> {
        self.addresses
            .iter()
            .map(String::as_str)
            .zip(&self.dialers)
            .collect()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.dialers.len()
    }
}

/// One asking of every sentinel, and what came of it so far.
pub(crate) struct Discovery {
    asked: mpsc::Receiver<(usize, SentinelAnswer)>,
    /// `host:port` of each sentinel, for messages.
    sentinels: Vec<String>,
    master_name: String,
    heard: usize,
    unknown: usize,
    /// Each master named so far, with the sentinels (by index) that named it, in the order
    /// first named.
    named: Vec<(Address, Vec<usize>)>,
    /// The masters handed out (or ruled out) so far.
    tried: Vec<Address>,
    failures: Vec<String>,
    /// Given up before every sentinel answered: too few were left to make a majority.
    gave_up: bool,
}

impl Discovery {
    /// Asks every one of `sentinels` where the master named `master_name` is, each by
    /// `deadline`.
    pub(crate) fn start(
        sentinels: &Sentinels,
        master_name: &str,
        deadline: BootInstant,
    ) -> Discovery {
        let (answers, asked) = mpsc::channel();
        for (index, sentinel) in sentinels.dialers.iter().enumerate() {
            let (sentinel, connections) = (sentinel.clone(), sentinels.connections.clone());
            let name = master_name.to_string();
            let answers = answers.clone();
            // Not joined: a black-holed sentinel's thread ends by the deadline, later.
            let _ = std::thread::Builder::new()
                .stack_size(ASKER_STACK)
                .spawn(move || {
                    let _ =
                        answers.send((index, ask(&sentinel, &connections, index, &name, deadline)));
                });
        }
        Discovery {
            asked,
            sentinels: sentinels.addresses.clone(),
            master_name: master_name.to_string(),
            heard: 0,
            unknown: 0,
            named: Vec::new(),
            tried: Vec::new(),
            failures: Vec::new(),
            gave_up: false,
        }
    }

    /// How many of the listed sentinels must name a master for the group to vote on it: a
    /// majority of them all, answering or not (see the module comment).
    fn majority(&self) -> usize {
        self.sentinels.len() / 2 + 1
    }

    /// How many sentinels named `master` so far.
    fn naming(&self, master: &Address) -> usize {
        self.named
            .iter()
            .find(|(named, _)| named == master)
            .map_or(0, |(_, by)| by.len())
    }

    /// Whether `master` can still be named by a majority: those that named it, and those not
    /// heard yet.
    fn can_reach_majority(&self, master: &Address) -> bool {
        self.naming(master) + (self.sentinels.len() - self.heard) >= self.majority()
    }

    /// Takes the next answer by `deadline`; false once every sentinel was heard or time is up.
    fn hear(&mut self, deadline: BootInstant) -> bool {
        if self.heard == self.sentinels.len() {
            return false;
        }
        let Ok(left) = time_left(deadline) else {
            return false;
        };
        let Ok((index, answer)) = self.asked.recv_timeout(left) else {
            return false;
        };
        self.heard += 1;
        match answer {
            Ok(None) => self.unknown += 1,
            Ok(Some(master)) => match self.named.iter_mut().find(|(named, _)| *named == master) {
                Some((_, by)) => by.push(index),
                None => self.named.push((master, vec![index])),
            },
            Err(err) => {
                let sentinel = &self.sentinels[index];
                self.failures
                    .push(format!("sentinel {sentinel}: {}", why(&err)));
            }
        }
        true
    }

    /// The master a majority of the sentinels name, as soon as one does (by `deadline`), unless
    /// it was handed out before; once none can, why the group has no master to vote on.
    pub(crate) fn next(&mut self, deadline: BootInstant) -> RedisResult<Address> {
        let majority = self.majority();
        loop {
            if let Some((master, _)) = self.named.iter().find(|(_, by)| by.len() >= majority) {
                // At most one master has a majority of the sentinels.
                if self.tried.contains(master) {
                    return Err(self.none_left());
                }
                let master = master.clone();
                self.tried.push(master.clone());
                return Ok(master);
            }
            let possible = self.sentinels.len() - self.heard + self.named_most();
            self.gave_up = possible < majority;
            if self.gave_up || !self.hear(deadline) {
                return Err(self.none_left());
            }
        }
    }

    /// The most sentinels that named one master.
    fn named_most(&self) -> usize {
        self.named.iter().map(|(_, by)| by.len()).max().unwrap_or(0)
    }

    /// Whether a majority of the sentinels still name `master`: the answers are taken until a
    /// majority does, or until that can no longer be (by `deadline`). Anything else, another
    /// master named by a majority, sentinels that disagree or too few answers, is no: the round
    /// then goes to the master a majority names, if one does (`next`).
    pub(crate) fn confirms(&mut self, master: &Address, deadline: BootInstant) -> bool {
        loop {
            if self.naming(master) >= self.majority() {
                return true;
            }
            if !self.can_reach_majority(master) || !self.hear(deadline) {
                return false;
            }
        }
    }

    /// The master at `address` would not do (`err` says why): `next` does not hand it out.
    pub(crate) fn failed(&mut self, address: &Address, err: &redis::RedisError) {
        let (host, port) = address;
        self.failures
            .push(format!("master {host}:{port}: {}", why(err)));
        if !self.tried.contains(address) {
            self.tried.push(address.clone());
        }
    }

    /// Why no master named would do.
    fn none_left(&mut self) -> redis::RedisError {
        let total = self.sentinels.len();
        let name = &self.master_name;
        let message = if self.unknown == total {
            format!(
                "no sentinel knows a master named '{name}'; check the name after the hosts in the URL"
            )
        } else if self.named.len() > 1 && self.named_most() < self.majority() {
            let each: Vec<String> = self
                .named
                .iter()
                .flat_map(|((host, port), by)| {
                    by.iter()
                        .map(move |&index| (index, format!("{host}:{port}")))
                })
                .collect::<std::collections::BTreeMap<usize, String>>()
                .into_iter()
                .map(|(index, master)| format!("sentinel {} names {master}", self.sentinels[index]))
                .collect();
            format!(
                "the sentinels disagree on the master of '{name}' ({}): the group votes only on a master {} of its {total} sentinels name",
                each.join(", "),
                self.majority()
            )
        } else if self.failures.is_empty() && self.unknown == 0 && self.named.is_empty() {
            return std::io::Error::from(std::io::ErrorKind::TimedOut).into();
        } else {
            let mut failures = std::mem::take(&mut self.failures);
            if let [((host, port), by)] = self.named.as_slice() {
                if by.len() < self.majority() {
                    failures.insert(
                        0,
                        format!(
                            "only {} of its {total} sentinels {} {host}:{port}, {} needed",
                            by.len(),
                            if by.len() == 1 { "names" } else { "name" },
                            self.majority()
                        ),
                    );
                }
            }
            if self.unknown > 0 {
                failures.push(format!(
                    "{} sentinel(s) know no master named '{name}'",
                    self.unknown
                ));
            }
            if self.heard < total {
                let why = if self.gave_up {
                    "not waited for (too few left to make a majority)"
                } else {
                    "no answer in time"
                };
                failures.push(format!("{} sentinel(s): {why}", total - self.heard));
            }
            format!("no master for '{name}': {}", failures.join(", "))
        };
        std::io::Error::other(message).into()
    }
}

/// Sentinel `index`'s answer, on its kept connection or a new one (whose set-up, AUTH, goes
/// with the question); the connection is kept again once it answered.
fn ask(
    dialer: &Dialer,
    connections: &Mutex<Vec<Option<Blocking>>>,
    index: usize,
    master_name: &str,
    deadline: BootInstant,
) -> SentinelAnswer {
    let taken = connections.lock().unwrap_or_else(|e| e.into_inner())[index].take();
    let mut connection = match taken {
        Some(mut connection) => {
            connection.bound(deadline)?;
            connection
        }
        None => dialer.open(deadline, false)?,
    };
    let answer: Option<(String, String)> = redis::cmd("SENTINEL")
        .arg("get-master-addr-by-name")
        .arg(master_name)
        .query(&mut connection)?;
    connections.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(connection);
    answer
        .map(|(host, port)| match port.parse() {
            Ok(port) => Ok((host, port)),
            Err(_) => Err(std::io::Error::other(format!("answered port '{port}'")).into()),
        })
        .transpose()
}

/// One failure in a few words; an authentication failure says where the password comes from.
pub(crate) fn why(err: &redis::RedisError) -> String {
    if err.is_timeout() {
        return "no answer in time".into();
    }
    if err.is_connection_refusal() {
        return "connection refused".into();
    }
    let text = lowercase_first(first_line(&err.to_string()));
    if text.contains("auth") || err.code() == Some("NOAUTH") || err.code() == Some("WRONGPASS") {
        format!("{text} (sentinels take REDLOCK_SENTINEL_PASSWORD, masters the URL's password or REDLOCK_PASSWORD)")
    } else {
        text
    }
}
