//! `-v`'s rendering of one round, server by server: aligned text for people, an object with every
//! server's outcome and latency for a JSON log.

use super::line::ms;
use crate::human;
use crate::lock::{NodeError, Round};
use serde_json::{json, Value};

pub(crate) fn round_text(round: &Round<'_>) -> String {
    let mut text = format!(
        "redlock: {} {}: {} of {} servers in {} (quorum {})",
        round.step,
        round.key,
        round.yes,
        round.replies.len(),
        human::duration(round.elapsed),
        round.quorum
    );
    if let Some(validity) = round.validity {
        text.push_str(&format!(", validity {} ms", validity.as_millis()));
    }
    let width = round
        .replies
        .iter()
        .map(|r| r.server.chars().count())
        .max()
        .unwrap_or(0);
    for reply in &round.replies {
        let outcome = match &reply.outcome {
            Ok(text) => text.clone(),
            Err(NodeError::Down(why)) => format!("down: {why}"),
            Err(err) => err.to_string(),
        };
        text.push_str(&format!(
            "\nredlock:   {:<width$}  {:>8}  {outcome}",
            reply.server,
            human::latency(reply.latency),
        ));
    }
    text
}

pub(crate) fn round_json(round: &Round<'_>) -> Value {
    let replies: Vec<Value> = round
        .replies
        .iter()
        .map(|reply| {
            let (outcome, error) = match &reply.outcome {
                Ok(text) => (Some(text.clone()), None),
                Err(err) => (None, Some(err.to_string())),
            };
            json!({
                "server": reply.server,
                "outcome": outcome,
                "error": error,
                "latency_ms": (reply.latency.as_secs_f64() * 1_000_000.0).round() / 1000.0,
            })
        })
        .collect();
    json!({
        "step": round.step,
        "key": round.key,
        "yes": round.yes,
        "quorum": round.quorum,
        "elapsed_ms": (round.elapsed.as_secs_f64() * 1_000_000.0).round() / 1000.0,
        "validity_ms": round.validity.map(ms),
        "servers": round.replies.len(),
        "replies": replies,
    })
}
