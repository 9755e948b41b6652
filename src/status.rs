//! `redlock status`: who holds a lock on each server, and the quorum's verdict. A table for
//! people, `--json` for programs. Passwords never appear: servers are shown by their redacted URL.

use crate::cli::StatusArgs;
use crate::config::Config;
use crate::exit::{self, Outcome};
use crate::human;
use crate::lock::{self, Holding, KeyState, NodeError, Redlock, ServerState};
use crate::report::Reporter;
use crate::token::{self, RunEnd};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub(crate) fn run(
    config: &Config,
    reporter: Reporter,
    args: &StatusArgs,
) -> anyhow::Result<Outcome> {
    let mut lock = config.redlock(reporter);
    match (&args.name, args.limit) {
        (Some(name), Some(slots)) => {
            crate::slots::status(config, &mut lock, name, slots, args.json)
        }
        (Some(name), None) => one(config, &mut lock, name, args.json),
        (None, _) => all(config, &mut lock, args.json),
    }
}

fn one(config: &Config, lock: &mut Redlock, name: &str, as_json: bool) -> anyhow::Result<Outcome> {
    let key = config.key(name)?;
    let (states, started) = lock.inspect(&key);
    let verdict = lock::holding(&states, started);
    // The holder's fencing number, if it took the lock with --fence (one more round, and only
    // for a held lock).
    let fence = match &verdict {
        Holding::Held { token, .. } => lock::holder_fence(&lock.fences(&key), token),
        _ => None,
    };
    let text = if as_json {
        let mut json = one_json(name, &key, lock.quorum(), &states, &verdict);
        json["fence"] = fence.into();
        json.to_string()
    } else {
        one_table(name, &key, lock.quorum(), &states, &verdict, fence)
    };
    print(&text);
    Ok(match verdict {
        Holding::Held { .. } | Holding::Foreign { .. } => Outcome::Success,
        Holding::Free | Holding::Partial { .. } => Outcome::Negative,
        Holding::Unknown => Outcome::Unavailable,
    })
}

fn one_table(
    name: &str,
    key: &str,
    quorum: usize,
    states: &[ServerState],
    verdict: &Holding,
    fence: Option<u64>,
) -> String {
    let mut out = String::new();
    let summary = match verdict {
        Holding::Held {
            token,
            servers,
            validity,
        } => {
            let mut line = kept_summary(token, *validity)
                .unwrap_or_else(|| format!("held by {}", lock::describe_token(token)));
            if let Some(since) = token::holder(token).map(|h| h.acquired_unix_ms) {
                line.push_str(&format!(", acquired {}", when(since)));
            }
            line.push_str(&format!(", on {servers} of {} servers", states.len()));
            line.push_str(&match validity {
                // A kept lock already said until when.
                Some(_) if is_kept(token) => String::new(),
                Some(v) => format!(", valid for at least {}", human::duration(*v)),
                None => ", with no expiry".to_string(),
            });
            if let Some(fence) = fence {
                line.push_str(&format!(", fence {fence}"));
            }
            line.push_str(&format!("\ntoken: {token}"));
            line
        }
        Holding::Foreign { kind, servers } => format!(
            "held by {}, on {servers} of {} servers",
            lock::describe_foreign(kind),
            states.len()
        ),
        Holding::Free => {
            let absent = states
                .iter()
                .filter(|s| matches!(s.state, Ok(KeyState::Absent)))
                .count();
            if absent == states.len() {
                format!("free on all {absent} servers")
            } else {
                format!(
                    "free: absent on the {absent} of {} servers that answered",
                    states.len()
                )
            }
        }
        Holding::Partial { servers } => format!(
            "partial: not held; the key is on {servers} of {} servers, fewer than the {quorum} a lock needs, and expires there by its ttl",
            states.len()
        ),
        Holding::Unknown => format!(
            "unknown: too few servers answered to tell ({quorum} of {} needed)",
            states.len()
        ),
    };
    out.push_str(&format!("lock {name} (key {key}): {summary}\n"));
    let mut rows = vec![[
        "SERVER".to_string(),
        "STATE".to_string(),
        "TOKEN".to_string(),
        "TTL".to_string(),
        "LATENCY".to_string(),
    ]];
    for state in states {
        let latency = human::latency(state.latency);
        let row = match &state.state {
            Ok(KeyState::Absent) => ["absent".into(), "-".into(), "-".into(), latency],
            Ok(key @ (KeyState::Present { ttl, .. } | KeyState::Foreign { ttl, .. })) => [
                row_state(key, verdict),
                match key {
                    KeyState::Present { token, .. } => short_token(token),
                    _ => "-".into(),
                },
                ttl.map_or("no expiry".into(), human::duration),
                latency,
            ],
            Err(err) => [
                format!("unreachable: {err}"),
                "-".into(),
                "-".into(),
                latency,
            ],
        };
        let [a, b, c, d] = row;
        let server = match &state.master {
            Some(master) => format!("{} (master {master})", state.server),
            None => state.server.clone(),
        };
        rows.push([server, a, b, c, d]);
    }
    out.push_str(&align(&rows));
    out
}

/// One server's key in a word, beside the verdict: part of the holder's quorum, a copy that
/// is not (another holder), or a copy of a lock nobody holds.
fn row_state(key: &KeyState, verdict: &Holding) -> String {
    match (key, verdict) {
        (KeyState::Present { token, .. }, Holding::Held { token: held, .. }) if token == held => {
            "held".into()
        }
        (KeyState::Foreign { kind, .. }, Holding::Foreign { .. }) => format!("held ({kind})"),
        (_, Holding::Held { .. } | Holding::Foreign { .. }) => "other holder".into(),
        (_, Holding::Partial { .. } | Holding::Free) => "partial".into(),
        (_, Holding::Unknown) => "key present".into(),
    }
}

pub(crate) fn one_json(
    name: &str,
    key: &str,
    quorum: usize,
    states: &[ServerState],
    verdict: &Holding,
) -> Value {
    let mut lock = verdict_json(name, key, verdict);
    lock.insert("quorum".into(), json!(quorum));
    lock.insert(
        "servers".into(),
        states.iter().map(server_json).collect::<Vec<_>>().into(),
    );
    lock.into()
}

/// The fields a lock has in JSON both alone (`status NAME`) and in the list (`status`).
fn verdict_json(name: &str, key: &str, verdict: &Holding) -> Map<String, Value> {
    let (state, token, validity_ms) = match verdict {
        Holding::Held {
            token, validity, ..
        } => (
            "held",
            Some(token.as_str()),
            validity.map(|v| v.as_millis() as u64),
        ),
        Holding::Foreign { .. } => ("held", None, None),
        Holding::Free => ("free", None, None),
        Holding::Partial { .. } => ("partial", None, None),
        Holding::Unknown => ("unknown", None, None),
    };
    let foreign = match verdict {
        Holding::Foreign { kind, .. } => Some(kind.as_str()),
        _ => None,
    };
    [
        ("name", json!(name)),
        ("key", json!(key)),
        ("held", json!(state == "held")),
        ("state", json!(state)),
        ("token", json!(token)),
        ("holder", json!(token.and_then(holder_json))),
        ("foreign_type", json!(foreign)),
        (
            "kept",
            json!(token.and_then(|token| kept_json(token, validity_ms))),
        ),
        ("validity_ms", json!(validity_ms)),
    ]
    .into_iter()
    .map(|(field, value)| (field.to_string(), value))
    .collect()
}

fn server_json(state: &ServerState) -> Value {
    let latency_ms = (state.latency.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0;
    let mut server = match &state.state {
        Ok(KeyState::Absent) => json!({
            "server": state.server, "reachable": true, "error": null,
            "holds_key": false, "token": null, "ttl_ms": null, "latency_ms": latency_ms,
        }),
        Ok(KeyState::Foreign { kind, ttl }) => json!({
            "server": state.server, "reachable": true, "error": null,
            "holds_key": true, "token": null, "foreign_type": kind,
            "ttl_ms": ttl.map(|t| t.as_millis() as u64), "latency_ms": latency_ms,
        }),
        Ok(KeyState::Present { token, ttl }) => json!({
            "server": state.server, "reachable": true, "error": null,
            "holds_key": true, "token": token, "ttl_ms": ttl.map(|t| t.as_millis() as u64),
            "latency_ms": latency_ms,
        }),
        Err(err) => json!({
            "server": state.server, "reachable": matches!(err, NodeError::ForeignType),
            "error": err.to_string(), "holds_key": matches!(err, NodeError::ForeignType),
            "token": null, "ttl_ms": null, "latency_ms": latency_ms,
        }),
    };
    if let (Some(master), Some(fields)) = (&state.master, server.as_object_mut()) {
        // Only Sentinel groups have one: which master answered for the group.
        fields.insert("master".into(), json!(master));
    }
    server
}

fn holder_json(token: &str) -> Option<Value> {
    token::holder(token).map(|h| {
        json!({
            "host": h.host,
            "pid": h.pid,
            "acquired_unix_ms": h.acquired_unix_ms,
            "command": h.command,
        })
    })
}

fn is_kept(token: &str) -> bool {
    token::holder(token).is_some_and(|h| h.kept.is_some())
}

/// For a lock kept after its run (`--hold-at-least`): how the run ended, until when the lock is
/// kept, and who ran what.
fn kept_summary(token: &str, validity: Option<Duration>) -> Option<String> {
    let holder = token::holder(token)?;
    let run = holder.kept.as_ref()?;
    let until = validity.map_or(String::new(), |left| {
        let at = SystemTime::now() + left;
        format!(
            ", until about {} ({} from now)",
            humantime::format_rfc3339_seconds(at),
            human::duration(left)
        )
    });
    let kept = match run.end {
        RunEnd::Released => format!("kept after {} at {}", run.end, when(run.finished_unix_ms)),
        end => format!(
            "kept after a run that finished at {} with {end}",
            when(run.finished_unix_ms)
        ),
    };
    let command = holder
        .command
        .as_deref()
        .map_or(String::new(), |command| format!(" ({command})"));
    Some(format!(
        "{kept}{until}; run by pid {} on {}{command}",
        holder.pid, holder.host
    ))
}

fn kept_json(token: &str, validity_ms: Option<u64>) -> Option<Value> {
    let run = token::holder(token)?.kept?;
    Some(json!({
        "finished_unix_ms": run.finished_unix_ms,
        "status": run.end.tag(),
        "until_unix_ms": validity_ms.map(|left| token::unix_ms_now() + left),
    }))
}

/// Every lock under the prefix, merged across servers and sorted by name.
fn all(config: &Config, lock: &mut Redlock, as_json: bool) -> anyhow::Result<Outcome> {
    let started = crate::clock::BootInstant::now();
    let listings = lock.list(&config.prefix);
    let answered = listings.iter().filter(|(_, l)| l.is_ok()).count();
    let mut keys: BTreeMap<&str, ()> = BTreeMap::new();
    for (_, listing) in &listings {
        if let Ok(found) = listing {
            // Fencing counters live beside the locks, but are not locks.
            let locks = found.keys().filter(|k| !lock::fence::is_fence_key(k));
            keys.extend(locks.map(|k| (k.as_str(), ())));
        }
    }
    let mut locks = Vec::new();
    for key in keys.keys() {
        let states: Vec<ServerState> = listings
            .iter()
            .map(|(server, listing)| ServerState {
                server: server.clone(),
                master: None,
                state: match listing {
                    Ok(found) => Ok(found.get(*key).cloned().unwrap_or(KeyState::Absent)),
                    Err(err) => Err(err.clone()),
                },
                latency: Duration::ZERO,
            })
            .collect();
        let verdict = lock::holding(&states, started);
        let holding = states
            .iter()
            .filter(|s| {
                matches!(
                    s.state,
                    Ok(KeyState::Present { .. } | KeyState::Foreign { .. })
                )
            })
            .count();
        let name = crate::slots::listed_name(key, &config.prefix);
        locks.push((name, key.to_string(), verdict, holding, states));
    }
    let text = if as_json {
        let list: Vec<Value> = locks
            .iter()
            .map(|(name, key, verdict, holding, states)| {
                let mut lock = verdict_json(name, key, verdict);
                lock.insert("servers_holding".into(), json!(holding));
                lock.insert("servers".into(), json!(states.len()));
                if let Some((_, slot)) = crate::lock::semaphore::split_slot_key(key) {
                    lock.insert("slot".into(), json!(slot));
                }
                Value::Object(lock)
            })
            .collect();
        json!({ "prefix": config.prefix, "locks": list }).to_string()
    } else if locks.is_empty() {
        format!("no locks under prefix '{}'", config.prefix)
    } else {
        let mut rows = vec![[
            "NAME".to_string(),
            "STATE".to_string(),
            "HOLDER".to_string(),
            "SERVERS".to_string(),
            "VALID FOR".to_string(),
        ]];
        for (name, _, verdict, holding, states) in &locks {
            let (state, holder, valid) = listed(verdict);
            rows.push([
                name.clone(),
                state.into(),
                holder,
                format!("{holding}/{}", states.len()),
                valid,
            ]);
        }
        align(&rows)
    };
    print(text.trim_end());
    if answered < lock.quorum() {
        let reasons: Vec<String> = listings
            .iter()
            .filter_map(|(server, l)| l.as_ref().err().map(|e| format!("{server}: {e}")))
            .collect();
        return Err(exit::fail(
            Outcome::Unavailable,
            format!(
                "only {answered} of {} servers answered; the list may be incomplete ({})",
                listings.len(),
                reasons.join("; ")
            ),
        ));
    }
    Ok(Outcome::Success)
}

/// A listed lock's state, holder and validity.
pub(crate) fn listed(verdict: &Holding) -> (&'static str, String, String) {
    match verdict {
        Holding::Held {
            token, validity, ..
        } => (
            "held",
            lock::describe_token(token),
            validity.map_or("no expiry".into(), human::duration),
        ),
        Holding::Foreign { kind, .. } => ("held", lock::describe_foreign(kind), "-".into()),
        Holding::Free => ("free", "-".into(), "-".into()),
        Holding::Partial { .. } => ("partial", "-".into(), "-".into()),
        Holding::Unknown => ("unknown", "-".into(), "-".into()),
    }
}

pub(crate) fn print(text: &str) {
    // A closed pipe (`redlock status | head -1`) is not an error worth reporting.
    let _ = writeln!(std::io::stdout(), "{text}");
}

/// Columns padded to their widest cell, two spaces apart; the last column is not padded.
pub(crate) fn align<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn short_token(token: &str) -> String {
    if token.chars().count() > 12 {
        format!("{}…", token.chars().take(12).collect::<String>())
    } else {
        token.to_string()
    }
}

/// An acquisition time as UTC and how long ago it was.
fn when(unix_ms: u64) -> String {
    let at = UNIX_EPOCH + Duration::from_millis(unix_ms);
    let ago = SystemTime::now()
        .duration_since(at)
        .map(|d| format!(" ({} ago)", human::duration(d)))
        .unwrap_or_default();
    format!("{}{ago}", humantime::format_rfc3339_seconds(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn align_pads_all_but_the_last_column() {
        let rows = [
            ["a".to_string(), "bb".to_string()],
            ["ccc".to_string(), "d".to_string()],
        ];
        assert_eq!(align(&rows), "a    bb\nccc  d\n");
    }
}
