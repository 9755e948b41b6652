//! Looking at a lock without taking it: what each server holds, the quorum's verdict, every lock
//! under a prefix, and the forced delete for stuck locks.

use super::nodes::{NodeError, Reply};
use super::{quorum, release_channel, scripts, Redlock};
use crate::clock::BootInstant;
use std::collections::BTreeMap;
use std::time::Duration;

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

impl Redlock {
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
        self.states(replies)
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
        (self.states(replies), started)
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

    fn states(&self, replies: Vec<Reply<KeyState>>) -> Vec<ServerState> {
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

pub(super) fn most_common_token(states: &[ServerState]) -> Option<String> {
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
pub(super) fn describe_state(state: &KeyState) -> (String, bool) {
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

pub(super) fn key_state(kind: &str, value: Option<String>, pttl: i64) -> KeyState {
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
    fn glob_escape_makes_prefix_literal() {
        assert_eq!(glob_escape("a*b?[c]\\"), "a\\*b\\?\\[c\\]\\\\");
    }
}
