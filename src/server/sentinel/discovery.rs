//! Asking a group's sentinels where its master is: every sentinel at once, each on a thread of
//! its own, on the connection kept from the last time it was asked (so asking again costs one
//! round trip, not two), the answers taken as they arrive. A discovery hands out each master
//! named once, in the order the answers came (`next`), or says whether the sentinels still name
//! the master in use (`confirms`). Which one is used, and for how long, is the group's
//! (group.rs, master.rs).

use super::super::blocking::{Blocking, Dialer};
use super::super::client::time_left;
use crate::clock::BootInstant;
use crate::human::{first_line, lowercase_first};
use redis::RedisResult;
use std::collections::VecDeque;
use std::sync::{mpsc, Arc, Mutex};

/// Stack of a thread that asks one sentinel: the redis client needs little.
const ASKER_STACK: usize = 256 * 1024;

/// A master's address, as a sentinel names it.
pub(crate) type Address = (String, u16);

/// One sentinel's answer: the master's address, or `None` when it knows no such master.
type Answer = RedisResult<Option<Address>>;

/// A group's sentinels: how to reach each, and the connection to each kept between askings.
pub(crate) struct Sentinels {
    dialers: Vec<Dialer>,
    /// `host:port` of each, for messages.
    addresses: Vec<String>,
    kept: Arc<Mutex<Vec<Option<Blocking>>>>,
}

impl Sentinels {
    pub(crate) fn new(dialers: Vec<Dialer>, addresses: Vec<String>) -> Sentinels {
        Sentinels {
            kept: Arc::new(Mutex::new(dialers.iter().map(|_| None).collect())),
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

/// What the sentinels say of the master in use (`Discovery::confirms`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A sentinel still names it.
    Named,
    /// Every sentinel that answered names another.
    Moved,
    /// None answered with a master.
    Unknown,
}

/// One asking of every sentinel, and what came of it so far.
pub(crate) struct Discovery {
    asked: mpsc::Receiver<(usize, Answer)>,
    /// `host:port` of each sentinel, for messages.
    sentinels: Vec<String>,
    master_name: String,
    heard: usize,
    unknown: usize,
    /// Masters named and not yet handed out, in the order they were named.
    named: VecDeque<Address>,
    /// The masters handed out (or ruled out) so far.
    tried: Vec<Address>,
    failures: Vec<String>,
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
            let (sentinel, kept) = (sentinel.clone(), sentinels.kept.clone());
            let name = master_name.to_string();
            let answers = answers.clone();
            // Not joined: a black-holed sentinel's thread ends by the deadline, later.
            let _ = std::thread::Builder::new()
                .stack_size(ASKER_STACK)
                .spawn(move || {
                    let _ = answers.send((index, ask(&sentinel, &kept, index, &name, deadline)));
                });
        }
        Discovery {
            asked,
            sentinels: sentinels.addresses.clone(),
            master_name: master_name.to_string(),
            heard: 0,
            unknown: 0,
            named: VecDeque::new(),
            tried: Vec::new(),
            failures: Vec::new(),
        }
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
            Ok(Some(master)) => self.named.push_back(master),
            Err(err) => {
                let sentinel = &self.sentinels[index];
                self.failures
                    .push(format!("sentinel {sentinel}: {}", why(&err)));
            }
        }
        true
    }

    /// The next master a sentinel names that was not handed out before, as the answers come,
    /// by `deadline`; once none is left, why none would do.
    pub(crate) fn next(&mut self, deadline: BootInstant) -> RedisResult<Address> {
        loop {
            while let Some(master) = self.named.pop_front() {
                if !self.tried.contains(&master) {
                    self.tried.push(master.clone());
                    return Ok(master);
                }
            }
            if !self.hear(deadline) {
                return Err(self.none_left());
            }
        }
    }

    /// Whether the sentinels still name `master`: the answers are taken until one does, or
    /// until every sentinel was heard (by `deadline`). The masters they named instead are left
    /// for `next`.
    pub(crate) fn confirms(&mut self, master: &Address, deadline: BootInstant) -> Verdict {
        loop {
            if self.named.contains(master) {
                return Verdict::Named;
            }
            if !self.hear(deadline) {
                return if self.named.is_empty() {
                    Verdict::Unknown
                } else {
                    Verdict::Moved
                };
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
        } else if self.failures.is_empty() && self.unknown == 0 {
            return std::io::Error::from(std::io::ErrorKind::TimedOut).into();
        } else {
            let mut failures = std::mem::take(&mut self.failures);
            if self.unknown > 0 {
                failures.push(format!(
                    "{} sentinel(s) know no master named '{name}'",
                    self.unknown
                ));
            }
            if self.heard < total {
                failures.push(format!(
                    "{} sentinel(s): no answer in time",
                    total - self.heard
                ));
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
    kept: &Mutex<Vec<Option<Blocking>>>,
    index: usize,
    master_name: &str,
    deadline: BootInstant,
) -> Answer {
    let taken = kept.lock().unwrap_or_else(|e| e.into_inner())[index].take();
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
    kept.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(connection);
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
