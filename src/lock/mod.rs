//! The Redlock algorithm over N independent servers: acquire, release, extend and inspect.
//!
//! Everything here returns values and typed errors; it never prints and never exits. The safety
//! argument, step by step, is in the comments of `attempt`.

mod nodes;
mod observe;
pub(crate) mod quorum;
mod scripts;
mod wake;

use crate::clock::BootInstant;
use crate::server::Server;
pub(crate) use nodes::NodeError;
use nodes::{Nodes, Reply};
pub(crate) use observe::{Observer, Round};
use quorum::{verdict, Verdict};
pub(crate) use scripts::release_channel;
use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// A lock this process holds.
#[derive(Debug, Clone)]
pub(crate) struct Held {
    pub(crate) token: String,
    pub(crate) ttl: Duration,
    /// How long the lock is certainly ours, counted from `since`.
    pub(crate) validity: Duration,
    pub(crate) since: BootInstant,
    /// Servers that confirmed it.
    pub(crate) votes: usize,
}

impl Held {
    /// When the lock may no longer be ours.
    pub(crate) fn deadline(&self) -> BootInstant {
        self.since.add(self.validity)
    }
}

/// Why an operation did not succeed, in the terms the exit codes need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LockError {
    /// Enough servers answered, and someone else holds the lock on too many of them.
    Busy { holder: Option<String> },
    /// Too few servers answered properly to decide; `detail` names them and why.
    Unavailable { detail: String },
    /// The token does not hold the lock on a quorum (expired, released or taken over).
    NotHeld,
    /// A signal arrived while waiting; nothing is held.
    Interrupted(i32),
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Busy { holder: Some(h) } => write!(f, "held by {h}"),
            LockError::Busy { holder: None } => write!(f, "held by someone else"),
            LockError::Unavailable { detail } => f.write_str(detail),
            LockError::NotHeld => {
                f.write_str("the token does not hold the lock on a quorum of servers")
            }
            LockError::Interrupted(sig) => write!(f, "interrupted by signal {sig} while waiting"),
        }
    }
}

/// Something that may end a wait early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// A signal asked us to stop.
    Interrupted(i32),
    /// A holder announced a release: worth trying again now.
    #[allow(dead_code)] // sent by the release subscriptions (fast waits)
    Released,
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

/// What one server knows about a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyState {
    Absent,
    /// `token` is `None` when the key is not a string (another client's lock type).
    Present {
        token: Option<String>,
        /// Remaining TTL; `None` when the key has no expiry.
        ttl: Option<Duration>,
    },
}

pub(crate) struct ServerState {
    pub(crate) server: String,
    pub(crate) state: Result<KeyState, NodeError>,
    pub(crate) latency: Duration,
}

/// The quorum verdict on who holds a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Holding {
    Held {
        token: String,
        servers: usize,
        /// Lower bound on what is left, `None` when the key never expires.
        validity: Option<Duration>,
    },
    Free,
    Unknown,
}

/// One server's keys under a prefix and its view of each, or why it could not say.
pub(crate) type Listing = Result<BTreeMap<String, KeyState>, NodeError>;

/// Result of a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Released {
    pub(crate) deleted: usize,
    pub(crate) failures: Vec<(String, NodeError)>,
}

pub(crate) struct Redlock {
    nodes: Nodes,
    observer: Option<Observer>,
}

impl Redlock {
    pub(crate) fn new(servers: Vec<Server>, timeout: Duration) -> Redlock {
        Redlock {
            nodes: Nodes::new(servers, timeout),
            observer: None,
        }
    }

    pub(crate) fn servers(&self) -> &[Server] {
        self.nodes.servers()
    }

    /// The per-server budget of one round.
    pub(crate) fn timeout(&self) -> Duration {
        self.nodes.timeout()
    }

    pub(crate) fn quorum(&self) -> usize {
        quorum::quorum(self.nodes.len())
    }

    /// Acquires `key`, retrying until `waiting.wait` has passed (once only without it).
    /// `new_token` makes a fresh token for every attempt.
    ///
    /// A waiter sleeps between attempts for the jittered retry delay, cut short by the remaining
    /// TTL it observed on the holder's key (an expiry announces nothing) and by a release
    /// notification, after which it retries within `WAKE_SPREAD`. Subscriptions are made only
    /// once the first attempt failed, so a one-shot acquire never pays for them.
    pub(crate) fn acquire(
        &mut self,
        key: &str,
        ttl: Duration,
        waiting: Waiting<'_>,
        new_token: &mut dyn FnMut() -> anyhow::Result<String>,
    ) -> anyhow::Result<Result<Held, LockError>> {
        let Waiting {
            wait,
            retry,
            wakes,
            notify,
            mut progress,
        } = waiting;
        let started = BootInstant::now();
        let give_up_at = wait.map(|wait| started.add(wait));
        let mut subscriptions = None;
        loop {
            let token = new_token()?;
            let (result, seen) = self.attempt(key, &token, ttl);
            let failure = match result {
                Ok(held) => return Ok(Ok(held)),
                Err(failure) => failure,
            };
            let Some(give_up_at) = give_up_at.filter(|at| !at.has_passed()) else {
                return Ok(Err(self.describe_busy(key, failure)));
            };
            if subscriptions.is_none() {
                if let Some(notify) = &notify {
                    subscriptions = Some(wake::Subscriptions::start(
                        self.servers(),
                        &release_channel(key),
                        self.nodes.timeout(),
                        notify.clone(),
                    ));
                    // A release between that attempt and the subscription was announced to
                    // nobody listening: look again now rather than after a full pause.
                    continue;
                }
            }
            let mut pause = jitter(retry.delay);
            if let Some(left) = seen.ttl {
                pause = pause.min(left + spread(EXPIRY_SPREAD));
            }
            pause = pause.min(give_up_at.remaining());
            let status = WaitProgress {
                waited: started.elapsed(),
                holder: seen.holder,
                holder_ttl: seen.ttl,
            };
            let report: Option<&mut dyn FnMut(&WaitProgress)> = match progress {
                Some(ref mut report) => Some(&mut **report),
                None => None,
            };
            match pause_reporting(wakes, pause, started, &status, report) {
                Some(Wake::Interrupted(signal)) => return Ok(Err(LockError::Interrupted(signal))),
                Some(Wake::Released) => {
                    // Every server announces the same release, and every waiter hears it:
                    // a random head start keeps the waiters from all asking at once.
                    std::thread::sleep(spread(WAKE_SPREAD));
                    if let Some(signal) = drain_released(wakes) {
                        return Ok(Err(LockError::Interrupted(signal)));
                    }
                }
                None => {}
            }
        }
    }

    /// One Redlock attempt. On any failure the key is deleted (compare-and-delete) on every
    /// server where the SET may have landed, including those that did not answer. Also returns
    /// what the refusing servers showed of the current holder: the holder's value and PTTL come
    /// back in the reply to the SET (one script), so they cost no round trip.
    fn attempt(
        &mut self,
        key: &str,
        token: &str,
        ttl: Duration,
    ) -> (Result<Held, LockError>, Seen) {
        let ttl_ms = ttl.as_millis() as u64;
        // T1 is taken before the first request is written.
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let (set, value, pttl): (i64, Option<String>, Option<i64>) = scripts::acquire()
                .key(key)
                .arg(token)
                .arg(ttl_ms)
                .invoke(con)?;
            Ok(Vote {
                set: set == 1,
                value,
                pttl: pttl.unwrap_or(-1),
            })
        });
        let outcome = tally(&replies, |vote| vote.set);
        // T2 is when the vote that completed the quorum arrived; later replies only add safety.
        let validity = outcome
            .quorum_reached_at(self.quorum())
            .and_then(|at| quorum::validity(ttl, at.since(started)));
        self.observe("acquire", key, &replies, started, validity, |vote| {
            (
                if vote.set {
                    "set"
                } else {
                    "refused (key exists)"
                }
                .into(),
                vote.set,
            )
        });
        let result = match (outcome.verdict(self.nodes.len()), validity) {
            (Verdict::Yes, Some(validity)) => Ok(Held {
                token: token.to_string(),
                ttl,
                validity,
                since: started,
                votes: outcome.yes,
            }),
            (verdict, _) => {
                // A server that said no holds someone else's key, not ours: only the others
                // (yes, or no answer: the SET may have landed) need the delete.
                let maybe_ours: Vec<bool> = replies
                    .iter()
                    .map(|reply| !matches!(&reply.result, Ok(vote) if !vote.set))
                    .collect();
                self.release_on(&maybe_ours, key, token);
                Err(if outcome.answered() < self.quorum() {
                    self.unavailable(&replies, outcome.answered())
                } else if verdict == Verdict::Yes {
                    LockError::Unavailable {
                        detail: format!(
                            "the servers took {} ms of the {} ms ttl to answer; no validity left",
                            outcome
                                .last_at
                                .map_or(0, |at| at.since(started).as_millis()),
                            ttl_ms
                        ),
                    }
                } else {
                    LockError::Busy { holder: None }
                })
            }
        };
        (result, Seen::from_votes(&replies, token))
    }

    /// Compare-and-delete on the `targets` servers only, ignoring the answers.
    fn release_on(&mut self, targets: &[bool], key: &str, token: &str) {
        if !targets.contains(&true) {
            return;
        }
        let channel = release_channel(key);
        self.nodes.round_on(targets, |con| {
            let deleted: i64 = scripts::release()
                .key(key)
                .arg(token)
                .arg(&channel)
                .invoke(con)?;
            Ok(deleted)
        });
    }

    /// Compare-and-delete on every server. Waits for every server (up to the timeout) so that a
    /// one-shot `release` does not exit before its deletes went out.
    pub(crate) fn release(&mut self, key: &str, token: &str) -> Result<Released, LockError> {
        let channel = release_channel(key);
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let deleted: i64 = scripts::release()
                .key(key)
                .arg(token)
                .arg(&channel)
                .invoke(con)?;
            Ok(deleted == 1)
        });
        self.observe("release", key, &replies, started, None, |deleted| {
            (
                if *deleted {
                    "deleted"
                } else {
                    "not held by this token"
                }
                .into(),
                *deleted,
            )
        });
        let outcome = tally(&replies, |deleted| *deleted);
        let failures = self.failures(&replies);
        match outcome.verdict(self.nodes.len()) {
            Verdict::Yes => Ok(Released {
                deleted: outcome.yes,
                failures,
            }),
            Verdict::No => Err(LockError::NotHeld),
            Verdict::Unknown => Err(self.unavailable(&replies, outcome.answered())),
        }
    }

    /// Compare-and-PEXPIRE to `ttl` on every server. Counts only with a quorum and positive
    /// validity measured from the start of this round; a minority success changes nothing, and
    /// a failed extension deletes nothing.
    pub(crate) fn extend(
        &mut self,
        key: &str,
        token: &str,
        ttl: Duration,
    ) -> Result<Held, LockError> {
        let ttl_ms = ttl.as_millis() as u64;
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let extended: i64 = scripts::extend()
                .key(key)
                .arg(token)
                .arg(ttl_ms)
                .invoke(con)?;
            Ok(extended == 1)
        });
        let outcome = tally(&replies, |extended| *extended);
        let validity = outcome
            .quorum_reached_at(self.quorum())
            .and_then(|at| quorum::validity(ttl, at.since(started)));
        self.observe("extend", key, &replies, started, validity, |extended| {
            (
                if *extended {
                    "extended"
                } else {
                    "not held by this token"
                }
                .into(),
                *extended,
            )
        });
        match (outcome.verdict(self.nodes.len()), validity) {
            (Verdict::Yes, Some(validity)) => Ok(Held {
                token: token.to_string(),
                ttl,
                validity,
                since: started,
                votes: outcome.yes,
            }),
            (Verdict::No, _) => Err(LockError::NotHeld),
            (Verdict::Yes, None) => Err(LockError::Unavailable {
                detail: format!("the servers took longer than the {ttl_ms} ms ttl to answer"),
            }),
            (Verdict::Unknown, _) => Err(self.unavailable(&replies, outcome.answered())),
        }
    }

    /// Deletes `key` on every server whatever its value. Returns what each server removed.
    pub(crate) fn force_release(&mut self, key: &str) -> Vec<ServerState> {
        let channel = release_channel(key);
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let (removed, value): (i64, Option<String>) = scripts::force_release()
                .key(key)
                .arg(&channel)
                .invoke(con)?;
            Ok(if removed == 1 {
                KeyState::Present {
                    token: value,
                    ttl: None,
                }
            } else {
                KeyState::Absent
            })
        });
        self.observe(
            "force-release",
            key,
            &replies,
            started,
            None,
            describe_state,
        );
        self.states(replies, started)
    }

    /// What every server knows about `key`.
    pub(crate) fn inspect(&mut self, key: &str) -> (Vec<ServerState>, BootInstant) {
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let (kind, value, pttl): (String, Option<String>, i64) =
                scripts::inspect().key(key).invoke(con)?;
            Ok(key_state(&kind, value, pttl))
        });
        self.observe("inspect", key, &replies, started, None, describe_state);
        (self.states(replies, started), started)
    }

    /// Every key under `prefix` on every server, with each server's view of it.
    pub(crate) fn list(&mut self, prefix: &str) -> Vec<(String, Listing)> {
        let pattern = format!("{}*", glob_escape(prefix));
        let started = BootInstant::now();
        let replies = self.nodes.round(|con| {
            let mut found = BTreeMap::new();
            let mut cursor: u64 = 0;
            loop {
                let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(1000)
                    .query(con)?;
                if !keys.is_empty() {
                    let mut pipe = redis::pipe();
                    for key in &keys {
                        pipe.cmd("TYPE").arg(key).cmd("PTTL").arg(key);
                    }
                    let facts: Vec<(String, i64)> = pipe.query(con)?;
                    let mut strings = Vec::new();
                    for (key, (kind, pttl)) in keys.iter().zip(facts) {
                        if kind == "string" {
                            strings.push((key.clone(), pttl));
                        } else if kind != "none" {
                            found.insert(key.clone(), key_state(&kind, None, pttl));
                        }
                    }
                    if !strings.is_empty() {
                        let mut get = redis::cmd("MGET");
                        for (key, _) in &strings {
                            get.arg(key);
                        }
                        let values: Vec<Option<String>> = get.query(con)?;
                        for ((key, pttl), value) in strings.into_iter().zip(values) {
                            if value.is_some() {
                                found.insert(key, key_state("string", value, pttl));
                            }
                        }
                    }
                }
                if next == 0 {
                    return Ok(found);
                }
                cursor = next;
            }
        });
        self.observe("list", prefix, &replies, started, None, |found| {
            (format!("{} keys", found.len()), true)
        });
        self.servers()
            .iter()
            .zip(replies)
            .map(|(server, reply)| (server.display.clone(), reply.result))
            .collect()
    }

    fn states(&self, replies: Vec<Reply<KeyState>>, _started: BootInstant) -> Vec<ServerState> {
        self.servers()
            .iter()
            .zip(replies)
            .map(|(server, reply)| ServerState {
                server: server.display.clone(),
                state: reply.result,
                latency: reply.latency,
            })
            .collect()
    }

    fn failures<T>(&self, replies: &[Reply<T>]) -> Vec<(String, NodeError)> {
        self.servers()
            .iter()
            .zip(replies)
            .filter_map(|(server, reply)| match &reply.result {
                Err(NodeError::Down(why)) => {
                    Some((server.display.clone(), NodeError::Down(why.clone())))
                }
                _ => None,
            })
            .collect()
    }

    fn unavailable<T>(&self, replies: &[Reply<T>], answered: usize) -> LockError {
        let reasons: Vec<String> = self
            .failures(replies)
            .into_iter()
            .map(|(server, why)| format!("{server}: {why}"))
            .collect();
        LockError::Unavailable {
            detail: format!(
                "no quorum: {answered} of {} servers answered, {} needed ({})",
                self.nodes.len(),
                self.quorum(),
                reasons.join("; ")
            ),
        }
    }

    /// Fills in who holds the lock, for the message people read when they are refused.
    fn describe_busy(&mut self, key: &str, failure: LockError) -> LockError {
        if failure != (LockError::Busy { holder: None }) {
            return failure;
        }
        let (states, started) = self.inspect(key);
        let holder = match holding(&states, started) {
            Holding::Held { token, .. } => Some(describe_token(&token)),
            _ => most_common_token(&states).map(|t| describe_token(&t)),
        };
        LockError::Busy { holder }
    }
}

/// Who holds a lock, for people: the holder facts when the token carries them.
pub(crate) fn describe_token(token: &str) -> String {
    match crate::token::holder(token) {
        Some(h) => match h.command {
            Some(cmd) => format!("pid {} on {} ({cmd})", h.pid, h.host),
            None => format!("pid {} on {}", h.pid, h.host),
        },
        None => format!("token '{token}' (not a redlock client)"),
    }
}

/// The quorum verdict from every server's view of one key.
pub(crate) fn holding(states: &[ServerState], started: BootInstant) -> Holding {
    let servers = states.len();
    let needed = quorum::quorum(servers);
    let silent = states.iter().filter(|s| s.state.is_err()).count();
    let mut by_token: BTreeMap<&str, (usize, Option<Duration>, bool)> = BTreeMap::new();
    for state in states {
        if let Ok(KeyState::Present {
            token: Some(token),
            ttl,
        }) = &state.state
        {
            let entry = by_token.entry(token).or_insert((0, *ttl, false));
            entry.0 += 1;
            entry.1 = match (entry.1, *ttl) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            entry.2 |= ttl.is_none();
        }
    }
    let best = by_token.iter().max_by_key(|(_, (count, _, _))| *count);
    match best {
        Some((token, (count, ttl, _))) if *count >= needed => {
            let elapsed = started.elapsed();
            Holding::Held {
                token: token.to_string(),
                servers: *count,
                validity: ttl.map(|ttl| {
                    ttl.saturating_sub(elapsed)
                        .saturating_sub(quorum::drift(ttl))
                }),
            }
        }
        best => {
            let best_count = best.map_or(0, |(_, (count, _, _))| *count);
            let foreign = states
                .iter()
                .filter(|s| {
                    matches!(
                        &s.state,
                        Ok(KeyState::Present { token: None, .. }) | Err(NodeError::ForeignType)
                    )
                })
                .count();
            if best_count + silent < needed && foreign + silent < needed {
                Holding::Free
            } else {
                Holding::Unknown
            }
        }
    }
}

fn most_common_token(states: &[ServerState]) -> Option<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for state in states {
        if let Ok(KeyState::Present {
            token: Some(token), ..
        }) = &state.state
        {
            *counts.entry(token).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .max_by_key(|(_, count)| *count)
        .map(|(token, _)| token.to_string())
}

/// A server's view of a key in a few words, for observers; a present key counts as a yes.
fn describe_state(state: &KeyState) -> (String, bool) {
    match state {
        KeyState::Absent => ("absent".into(), false),
        KeyState::Present { token, ttl } => {
            let who = token
                .as_deref()
                .map_or_else(|| "a non-string value".into(), describe_token);
            let ttl = ttl.map_or_else(String::new, |ttl| format!(", ttl {} ms", ttl.as_millis()));
            (format!("held by {who}{ttl}"), true)
        }
    }
}

fn key_state(kind: &str, value: Option<String>, pttl: i64) -> KeyState {
    if kind == "none" || pttl == -2 {
        return KeyState::Absent;
    }
    KeyState::Present {
        token: if kind == "string" { value } else { None },
        ttl: u64::try_from(pttl).ok().map(Duration::from_millis),
    }
}

/// Escapes SCAN's glob characters so a prefix matches itself only.
fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "*?[]\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Counts of one round: yes votes (and when each came), no votes, and silent servers.
struct Tally {
    yes: usize,
    no: usize,
    yes_times: Vec<BootInstant>,
    last_at: Option<BootInstant>,
}

impl Tally {
    fn answered(&self) -> usize {
        self.yes + self.no
    }

    fn verdict(&self, servers: usize) -> Verdict {
        verdict(servers, self.yes, self.no)
    }

    fn quorum_reached_at(&self, needed: usize) -> Option<BootInstant> {
        let mut times = self.yes_times.clone();
        times.sort();
        times.get(needed.checked_sub(1)?).copied()
    }
}

fn tally<T>(replies: &[Reply<T>], is_yes: impl Fn(&T) -> bool) -> Tally {
    let mut tally = Tally {
        yes: 0,
        no: 0,
        yes_times: Vec::new(),
        last_at: None,
    };
    for reply in replies {
        tally.last_at = tally.last_at.max(Some(reply.at));
        match &reply.result {
            Ok(value) if is_yes(value) => {
                tally.yes += 1;
                tally.yes_times.push(reply.at);
            }
            Ok(_) | Err(NodeError::ForeignType) => tally.no += 1,
            Err(NodeError::Down(_)) => {}
        }
    }
    tally
}

/// After a release notification, each waiter waits a random part of this before it asks.
const WAKE_SPREAD: Duration = Duration::from_millis(1);
/// After the holder's observed TTL runs out, a random part of this before asking again.
const EXPIRY_SPREAD: Duration = Duration::from_millis(5);
/// How often a progress display is refreshed during a long pause.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// One server's answer to an acquire attempt.
struct Vote {
    set: bool,
    /// The key's value after the SET: our token if we won there, else the holder's.
    value: Option<String>,
    pttl: i64,
}

/// What the refusing servers showed of the holder.
#[derive(Default)]
struct Seen {
    holder: Option<String>,
    /// The shortest remaining TTL of a key that is not ours; zero if one vanished meanwhile.
    ttl: Option<Duration>,
}

impl Seen {
    fn from_votes(replies: &[Reply<Vote>], ours: &str) -> Seen {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let mut ttl: Option<Duration> = None;
        for reply in replies {
            let Ok(vote) = &reply.result else { continue };
            if vote.set || vote.value.as_deref() == Some(ours) {
                continue;
            }
            if let Some(value) = &vote.value {
                *counts.entry(value).or_default() += 1;
            }
            // -2: the key went away between SET and PTTL; -1: it never expires.
            let left = match vote.pttl {
                -2 => Some(Duration::ZERO),
                ms => u64::try_from(ms).ok().map(Duration::from_millis),
            };
            if let Some(left) = left {
                ttl = Some(ttl.map_or(left, |t| t.min(left)));
            }
        }
        Seen {
            holder: counts
                .into_iter()
                .max_by_key(|(_, count)| *count)
                .map(|(token, _)| token.to_string()),
            ttl,
        }
    }
}

/// Pauses for `pause` unless woken, telling `progress` where things stand along the way.
fn pause_reporting(
    wakes: Option<&Receiver<Wake>>,
    pause: Duration,
    started: BootInstant,
    status: &WaitProgress,
    progress: Option<&mut dyn FnMut(&WaitProgress)>,
) -> Option<Wake> {
    let Some(progress) = progress else {
        return pause_until_woken(wakes, pause);
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
        if let Some(wake) = pause_until_woken(wakes, slice) {
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

/// Discards release notifications already queued (the same release, heard from other servers),
/// keeping an interrupt if one came in meanwhile.
fn drain_released(wakes: Option<&Receiver<Wake>>) -> Option<i32> {
    wakes?.try_iter().find_map(|wake| match wake {
        Wake::Interrupted(signal) => Some(signal),
        Wake::Released => None,
    })
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

    fn state(token: Option<&str>, ttl_ms: Option<u64>) -> ServerState {
        ServerState {
            server: "s".into(),
            state: Ok(match token {
                Some(t) => KeyState::Present {
                    token: Some(t.into()),
                    ttl: ttl_ms.map(Duration::from_millis),
                },
                None => KeyState::Absent,
            }),
            latency: Duration::ZERO,
        }
    }

    fn down() -> ServerState {
        ServerState {
            server: "s".into(),
            state: Err(NodeError::Down("connection refused".into())),
            latency: Duration::ZERO,
        }
    }

    #[test]
    fn holding_needs_a_quorum_for_one_token() {
        let now = BootInstant::now();
        let held = [
            state(Some("a"), Some(9000)),
            state(Some("a"), Some(8000)),
            state(None, None),
        ];
        match holding(&held, now) {
            Holding::Held {
                token,
                servers,
                validity,
            } => {
                assert_eq!(token, "a");
                assert_eq!(servers, 2);
                assert!(validity.unwrap() <= Duration::from_millis(8000 - 82));
            }
            other => panic!("expected held, got {other:?}"),
        }
        let split = [
            state(Some("a"), Some(1)),
            state(Some("b"), Some(1)),
            state(None, None),
        ];
        assert_eq!(holding(&split, now), Holding::Free);
        let unknown = [state(Some("a"), Some(1)), down(), down()];
        assert_eq!(holding(&unknown, now), Holding::Unknown);
        let free = [state(None, None), state(None, None), down()];
        assert_eq!(holding(&free, now), Holding::Free);
    }

    #[test]
    fn jitter_stays_within_half_to_one_and_a_half() {
        let delay = Duration::from_millis(100);
        for _ in 0..200 {
            let pause = jitter(delay);
            assert!(pause >= Duration::from_millis(50) && pause <= Duration::from_millis(150));
        }
    }

    #[test]
    fn glob_escape_makes_prefix_literal() {
        assert_eq!(glob_escape("a*b?[c]\\"), "a\\*b\\?\\[c\\]\\\\");
    }
}
