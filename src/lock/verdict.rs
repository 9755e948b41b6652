//! The quorum's verdict on who holds a key, from every server's view of it: held (by a redlock
//! token, by shared holders, or by another client's key type), free, partial or unknown, one
//! word per verdict, the same in every view. Pure: it reads what `inspect` gathered and asks no
//! server.

use super::keys;
use super::nodes::NodeError;
use super::quorum;
use crate::clock::BootInstant;
use std::collections::BTreeMap;
use std::time::Duration;

/// What one server knows about a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyState {
    Absent,
    /// A string: the layout redlock shares with redsync, node-redlock, pottery and redis-py.
    Present {
        token: String,
        /// Remaining TTL; `None` when the key has no expiry.
        ttl: Option<Duration>,
    },
    /// Another type, `kind` as TYPE names it: another client's lock (Redisson's `RLock` is a
    /// hash), which excludes us as surely as a token does.
    Foreign {
        kind: String,
        ttl: Option<Duration>,
    },
    /// Marked as held by shared holders (shared.rs): each one's token and remaining TTL.
    Shared {
        readers: Vec<(String, Duration)>,
        ttl: Option<Duration>,
    },
}

impl KeyState {
    /// Who holds the key, for people; `None` when it is absent.
    pub(crate) fn holder(&self) -> Option<String> {
        match self {
            KeyState::Absent => None,
            KeyState::Present { token, .. } => Some(describe_token(token)),
            KeyState::Foreign { kind, .. } => Some(describe_foreign(kind)),
            KeyState::Shared { readers, .. } => Some(describe_shared(readers.len())),
        }
    }

    /// The key's remaining TTL, when it is there at all.
    pub(crate) fn ttl(&self) -> Option<Duration> {
        match self {
            KeyState::Absent => None,
            KeyState::Present { ttl, .. }
            | KeyState::Foreign { ttl, .. }
            | KeyState::Shared { ttl, .. } => *ttl,
        }
    }
}

pub(crate) struct ServerState {
    pub(crate) server: String,
    /// For a Sentinel group that answered, the master that did (`host:port`).
    pub(crate) master: Option<String>,
    /// For a cluster that answered, the node that did (`host:port`) and the key's hash slot.
    pub(crate) node: Option<(String, u16)>,
    pub(crate) state: Result<KeyState, NodeError>,
    pub(crate) latency: Duration,
}

/// The quorum verdict on who holds a key. One word per verdict, the same in every view:
/// held, free, partial, unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Holding {
    Held {
        token: String,
        servers: usize,
        /// Lower bound on what is left, `None` when the key never expires.
        validity: Option<Duration>,
    },
    /// Held too, by a client with another key layout: keys of type `kind` on a quorum.
    Foreign { kind: String, servers: usize },
    /// Held by shared holders: the key is marked shared on `servers` servers, a quorum; each
    /// holder with the servers it is on (a holder counts only on a quorum, as a lock does).
    Shared {
        servers: usize,
        readers: Vec<SharedHolder>,
    },
    /// No server that answered has the key, and those that did not are too few to hold it.
    Free,
    /// The key is on `servers` servers, but no holder has a quorum of them, nor could with the
    /// servers that did not answer: not held, and those copies expire by their TTL.
    Partial { servers: usize },
    /// Too few servers answered to tell.
    Unknown,
}

/// One shared holder, as the servers that mark the lock shared show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SharedHolder {
    pub(crate) token: String,
    pub(crate) servers: usize,
    /// Lower bound on what is left, counted as for a lock.
    pub(crate) validity: Duration,
}

/// Shared holders of a lock, for people.
pub(crate) fn describe_shared(count: usize) -> String {
    match count {
        1 => "1 shared holder".into(),
        n => format!("{n} shared holders"),
    }
}

/// Who holds a lock, for people: the holder facts when the token carries them.
pub(crate) fn describe_token(token: &str) -> String {
    if token == keys::SHARED {
        return "shared holders".into();
    }
    if keys::is_reservation(token) {
        // A release's placeholder for the waiter it woke (queue/mod.rs, step 3).
        return "the next waiter in line, being handed the lock".into();
    }
    match crate::token::holder(token) {
        Some(h) => {
            let who = match &h.command {
                Some(cmd) => format!("pid {} on {} ({cmd})", h.pid, h.host),
                None => format!("pid {} on {}", h.pid, h.host),
            };
            match h.kept {
                Some(_) => format!("{who}, kept after its run (--hold-at-least)"),
                None => who,
            }
        }
        None => format!("token '{token}' (not a redlock client)"),
    }
}

/// A holder with another key layout, for people.
pub(crate) fn describe_foreign(kind: &str) -> String {
    format!("a non-redlock client ({kind})")
}

/// The quorum verdict from every server's view of one key.
pub(crate) fn holding(states: &[ServerState], started: BootInstant) -> Holding {
    let servers = states.len();
    let needed = quorum::quorum(servers);
    let silent = states
        .iter()
        .filter(|s| matches!(s.state, Err(NodeError::Down(_))))
        .count();
    // Per token: on how many servers, and the shortest TTL among them (None: no expiry anywhere).
    let mut by_token: BTreeMap<&str, (usize, Option<Duration>)> = BTreeMap::new();
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for state in states {
        match &state.state {
            Ok(KeyState::Foreign { kind, .. }) => *kinds.entry(kind).or_default() += 1,
            Err(NodeError::ForeignType) => *kinds.entry("non-string").or_default() += 1,
            _ => {}
        }
        let present = match &state.state {
            Ok(KeyState::Present { token, ttl }) => Some((token.as_str(), ttl)),
            Ok(KeyState::Shared { ttl, .. }) => Some((keys::SHARED, ttl)),
            _ => None,
        };
        if let Some((token, ttl)) = present {
            let entry = by_token.entry(token).or_insert((0, *ttl));
            entry.0 += 1;
            entry.1 = match (entry.1, *ttl) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
    }
    let best = by_token.iter().max_by_key(|(_, (count, _))| *count);
    match best {
        Some((&keys::SHARED, (count, _))) if *count >= needed => Holding::Shared {
            servers: *count,
            readers: shared_holders(states, started, needed),
        },
        Some((token, (count, ttl))) if *count >= needed => {
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
            let best_count = best.map_or(0, |(_, (count, _))| *count);
            let foreign: usize = kinds.values().sum();
            let present = by_token.values().map(|(count, _)| count).sum::<usize>() + foreign;
            if foreign >= needed {
                let kind = kinds.into_iter().max_by_key(|(_, count)| *count);
                Holding::Foreign {
                    kind: kind.map_or("non-string", |(kind, _)| kind).to_string(),
                    servers: foreign,
                }
            } else if best_count + silent >= needed || foreign + silent >= needed {
                Holding::Unknown
            } else if present == 0 {
                Holding::Free
            } else {
                Holding::Partial { servers: present }
            }
        }
    }
}

/// The shared holders on a quorum of the servers that mark the key shared, in token order.
fn shared_holders(
    states: &[ServerState],
    started: BootInstant,
    needed: usize,
) -> Vec<SharedHolder> {
    let mut holders: BTreeMap<&str, (usize, Duration)> = BTreeMap::new();
    for state in states {
        if let Ok(KeyState::Shared { readers, .. }) = &state.state {
            for (token, ttl) in readers {
                let entry = holders.entry(token).or_insert((0, *ttl));
                entry.0 += 1;
                entry.1 = entry.1.min(*ttl);
            }
        }
    }
    let elapsed = started.elapsed();
    holders
        .into_iter()
        .filter(|(_, (servers, _))| *servers >= needed)
        .map(|(token, (servers, ttl))| SharedHolder {
            token: token.to_string(),
            servers,
            validity: ttl
                .saturating_sub(elapsed)
                .saturating_sub(quorum::drift(ttl)),
        })
        .collect()
}

/// A server's view of a key in a few words, for observers; a present key counts as a yes.
pub(crate) fn describe_state(state: &KeyState) -> (String, bool) {
    match state {
        KeyState::Absent => ("absent".into(), false),
        KeyState::Present { ttl, .. }
        | KeyState::Foreign { ttl, .. }
        | KeyState::Shared { ttl, .. } => {
            let who = state.holder().unwrap_or_default();
            let ttl = ttl.map_or_else(String::new, |ttl| format!(", ttl {} ms", ttl.as_millis()));
            (format!("held by {who}{ttl}"), true)
        }
    }
}

pub(crate) fn key_state(kind: &str, value: Option<String>, pttl: i64) -> KeyState {
    let ttl = u64::try_from(pttl).ok().map(Duration::from_millis);
    match (kind, value) {
        ("none", _) => KeyState::Absent,
        _ if pttl == -2 => KeyState::Absent,
        ("string", Some(token)) => KeyState::Present { token, ttl },
        // A string that vanished between TYPE and GET.
        ("string", None) => KeyState::Absent,
        (kind, _) => KeyState::Foreign {
            kind: kind.to_string(),
            ttl,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(token: Option<&str>, ttl_ms: Option<u64>) -> ServerState {
        ServerState {
            server: "s".into(),
            master: None,
            node: None,
            state: Ok(match token {
                Some(t) => KeyState::Present {
                    token: t.into(),
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
            master: None,
            node: None,
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
        assert_eq!(holding(&split, now), Holding::Partial { servers: 2 });
        let unknown = [state(Some("a"), Some(1)), down(), down()];
        assert_eq!(holding(&unknown, now), Holding::Unknown);
        let free = [state(None, None), state(None, None), down()];
        assert_eq!(holding(&free, now), Holding::Free);
    }

    fn hash() -> ServerState {
        ServerState {
            server: "s".into(),
            master: None,
            node: None,
            state: Ok(key_state("hash", None, 5000)),
            latency: Duration::ZERO,
        }
    }

    #[test]
    fn another_clients_key_type_on_a_quorum_is_held_by_it() {
        let now = BootInstant::now();
        assert_eq!(
            holding(&[hash(), hash(), hash()], now),
            Holding::Foreign {
                kind: "hash".into(),
                servers: 3
            }
        );
        assert_eq!(
            holding(&[hash(), state(None, None), state(None, None)], now),
            Holding::Partial { servers: 1 }
        );
        assert_eq!(holding(&[hash(), down(), down()], now), Holding::Unknown);
    }
}
