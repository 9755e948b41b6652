//! Latches for people and programs: `latch status NAME` (who counted down and when, what is
//! missing, each server's copy), the latch list (`latch status`, and the part of `status`
//! without a name that follows the locks), and the JSON document every latch verb prints.

use super::latch_json::{document, LatchCopy, LatchDocument, LatchListDocument};
use super::text::{align, print, when};
use crate::config::Config;
use crate::exit::{self, Outcome};
use crate::human;
use crate::lock::latch::{CountedId, Counting, Latch, LatchState, Listed};
use crate::lock::Redlock;
use crate::report::Reporter;
use crate::schema::ms;
use crate::token;

/// The most ids a one-line summary names.
const SUMMARY_IDS: usize = 8;

/// The latch in one line: `2 of 3 done: host-a (03:12 UTC), host-c (03:40 UTC); waiting for 1`.
pub(crate) fn summary(counting: &Counting) -> String {
    let Some(count) = counting
        .count
        .filter(|_| matches!(counting.state, LatchState::Open | LatchState::Waiting))
    else {
        return match counting.state {
            LatchState::Absent => "absent: no server that answered holds it".into(),
            LatchState::Unknown => format!(
                "unknown: {} of {} servers answered, a quorum is {}",
                counting.answered, counting.servers, counting.quorum
            ),
            _ => match &counting.foreign {
                Some(kind) if counting.count.is_none() => {
                    format!("partial: its key holds a {kind} of another client")
                }
                _ => format!(
                    "partial: {} of {} servers hold it, a quorum is {}",
                    counting.holding, counting.servers, counting.quorum
                ),
            },
        };
    };
    let mut line = String::new();
    if counting.state == LatchState::Open {
        line.push_str("open: ");
    }
    line.push_str(&format!("{} of {count} done", counting.ids.len()));
    let named: Vec<String> = counting
        .ids
        .iter()
        .take(SUMMARY_IDS)
        .map(|counted| match at_unix_ms(counted) {
            Some(at) => format!("{} ({})", counted.id, clock(at)),
            None => counted.id.clone(),
        })
        .collect();
    if !named.is_empty() {
        line.push_str(&format!(": {}", named.join(", ")));
        if counting.ids.len() > SUMMARY_IDS {
            line.push_str(&format!(" and {} more", counting.ids.len() - SUMMARY_IDS));
        }
    }
    if counting.state == LatchState::Waiting {
        line.push_str(&format!("; waiting for {}", counting.missing()));
    }
    line
}

/// `redlock latch status NAME`: exits 0 when open, 1 when not, 69 when it cannot tell.
pub(crate) fn one(engine: &mut Redlock, latch: &Latch, as_json: bool) -> anyhow::Result<Outcome> {
    let view = engine.latch_read(latch);
    let counting = view.counting();
    let text = if as_json {
        let mut document = document(latch, &counting);
        let copies = engine.servers().iter().zip(view.copies());
        let copies = copies.map(|(server, copy)| LatchCopy {
            server: server.display.clone(),
            reachable: copy.error.is_none(),
            error: copy.error,
            count: copy.count,
            done: copy.count.map(|_| copy.ids),
            expires_in_ms: copy.ttl.map(ms),
            foreign_type: copy.foreign,
        });
        document.per_server = Some(copies.collect());
        crate::schema::to_json(&document)?
    } else {
        let mut text = format!("latch {}: {}\n", latch.name, summary(&counting));
        if let Some(ttl) = counting.ttl {
            text.push_str(&format!(
                "on {} of {} servers (a quorum is {}), expires in {}\n",
                counting.holding,
                counting.servers,
                counting.quorum,
                human::whole_seconds(ttl)
            ));
        }
        if !counting.ids.is_empty() {
            let mut rows = vec![["ID", "BY", "AT", "SERVERS"].map(String::from)];
            for counted in &counting.ids {
                let by = counted.record.as_deref().and_then(token::holder);
                rows.push([
                    counted.id.clone(),
                    by.as_ref()
                        .map_or("-".into(), |h| format!("pid {} on {}", h.pid, h.host)),
                    by.as_ref().map_or("-".into(), |h| when(h.acquired_unix_ms)),
                    format!("{}/{}", counted.servers, counting.holding),
                ]);
            }
            text.push_str(&align(&rows));
        }
        let mut rows = vec![["SERVER", "COPY", "DONE", "EXPIRES IN"].map(String::from)];
        for (server, copy) in engine.servers().iter().zip(view.copies()) {
            let (state, done) = match (&copy.error, copy.count, &copy.foreign) {
                (Some(why), _, _) if crate::server::cannot_vote(why) => {
                    (format!("cannot vote: {why}"), String::new())
                }
                (Some(why), _, _) => (format!("down: {why}"), String::new()),
                (None, Some(count), _) => (format!("count {count}"), copy.ids.to_string()),
                (None, None, Some(kind)) => (format!("a {kind} of another client"), String::new()),
                (None, None, None) => ("absent".into(), String::new()),
            };
            rows.push([
                server.display.clone(),
                state,
                done,
                copy.ttl.map_or(String::new(), human::whole_seconds),
            ]);
        }
        text.push_str(&align(&rows));
        text
    };
    print(text.trim_end());
    Ok(match counting.state {
        LatchState::Open => Outcome::Success,
        LatchState::Unknown => Outcome::Unavailable,
        _ => Outcome::Negative,
    })
}

/// `redlock latch status`: every latch under the prefix.
pub(crate) fn all(
    config: &Config,
    reporter: Reporter,
    engine: &mut Redlock,
    (as_json, walk_all): (bool, bool),
) -> anyhow::Result<Outcome> {
    let (listed, indexed) = engine.latch_list(&config.prefix, walk_all);
    super::text::say_indexed(reporter, &indexed);
    let text = if as_json {
        crate::schema::to_json(&LatchListDocument {
            prefix: &config.prefix,
            latches: list_documents(config, &listed),
            indexed,
        })?
    } else if listed.latches.is_empty() && listed.answered < engine.quorum() {
        // It could not look: the error below says what it could not read, never "no latches".
        String::new()
    } else if listed.latches.is_empty() {
        format!("no latches under prefix '{}'", config.prefix)
    } else {
        list_table(&listed)
    };
    if !text.is_empty() {
        print(text.trim_end());
    }
    if listed.answered < engine.quorum() {
        let mut reasons = listed.failures.clone();
        if reasons.iter().any(|r| r.contains("no answer within")) {
            reasons.push(crate::lock::SLOW_LISTING.into());
        }
        return Err(exit::incomplete(
            "list",
            (listed.answered, engine.servers().len()),
            &reasons,
        ));
    }
    Ok(Outcome::Success)
}

/// Each latch's document, by name.
pub(super) fn list_documents(config: &Config, listed: &Listed) -> Vec<LatchDocument> {
    listed
        .latches
        .iter()
        .filter_map(|(name, view)| {
            let latch = config.latch(name).ok()?;
            Some(document(&latch, &view.counting()))
        })
        .collect()
}

/// One line per latch, by name.
pub(super) fn list_table(listed: &Listed) -> String {
    let mut rows = vec![["LATCH", "STATE", "DONE", "SERVERS", "EXPIRES IN"].map(String::from)];
    for (name, view) in &listed.latches {
        let counting = view.counting();
        rows.push([
            name.clone(),
            counting.state.word().into(),
            counting.count.map_or("-".into(), |count| {
                format!("{}/{count}", counting.ids.len())
            }),
            format!("{}/{}", counting.holding, counting.servers),
            counting.ttl.map_or("-".into(), human::whole_seconds),
        ]);
    }
    align(&rows)
}

fn at_unix_ms(counted: &CountedId) -> Option<u64> {
    counted
        .record
        .as_deref()
        .and_then(token::holder)
        .map(|holder| holder.acquired_unix_ms)
}

/// `03:12 UTC`: when a count-down was made, short enough for a one-line summary.
fn clock(unix_ms: u64) -> String {
    match human::rfc3339_seconds(unix_ms) {
        Some(stamp) => format!("{} UTC", stamp.get(11..16).unwrap_or(&stamp)),
        None => human::utc(unix_ms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::keys::LatchKeys;
    use std::time::Duration;

    fn counting(state: LatchState, ids: &[&str]) -> Counting {
        Counting {
            state,
            count: Some(3),
            holding: 3,
            answered: 3,
            servers: 3,
            quorum: 2,
            ids: ids
                .iter()
                .map(|id| CountedId {
                    id: id.to_string(),
                    // 2025-01-07T03:12:00Z
                    record: Some(format!("{}:etl-a:42:1736219520000", "0".repeat(32))),
                    servers: 3,
                })
                .collect(),
            ttl: Some(Duration::from_secs(60)),
            foreign: None,
        }
    }

    #[test]
    fn the_summary_names_who_counted_down_and_what_is_missing() {
        assert_eq!(
            summary(&counting(LatchState::Waiting, &["host-a", "host-c"])),
            "2 of 3 done: host-a (03:12 UTC), host-c (03:12 UTC); waiting for 1"
        );
        assert!(summary(&counting(LatchState::Open, &["a", "b", "c"])).starts_with("open: 3 of 3"));
        assert_eq!(
            summary(&counting(LatchState::Waiting, &[])),
            "0 of 3 done; waiting for 3"
        );
        let mut unknown = counting(LatchState::Unknown, &[]);
        unknown.answered = 1;
        assert_eq!(
            summary(&unknown),
            "unknown: 1 of 3 servers answered, a quorum is 2"
        );
    }

    #[test]
    fn the_document_has_the_documented_fields() {
        let latch = Latch {
            name: "etl".into(),
            keys: LatchKeys::new("redlock:", "etl"),
        };
        let document = document(&latch, &counting(LatchState::Waiting, &["host-a"]));
        let document = serde_json::to_value(&document).unwrap();
        let fields: Vec<&str> = document
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            fields,
            [
                "name",
                "key",
                "state",
                "open",
                "count",
                "done",
                "missing",
                "ids",
                "expires_in_ms",
                "servers_holding",
                "servers",
                "quorum"
            ]
        );
        assert_eq!(document["ids"][0]["host"], "etl-a");
        assert_eq!(document["ids"][0]["at_unix_ms"], 1_736_219_520_000u64);
        assert_eq!(document["missing"], 2);
    }
}
