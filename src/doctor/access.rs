//! Whether a server lets redlock's user do what redlock needs (`needs`): asked with `ACL DRYRUN`
//! where the server has it (Redis 7.0 and later) and lets the user ask, otherwise tried for real
//! in a way that leaves nothing behind: the script commands in one probe script (probe.lua) on
//! names that do not exist, the connection's own commands on the connection, each as redlock
//! sends it (`EVALSHA` of an unknown hash, `SET … XX` of a missing key, `SUBSCRIBE` then
//! `UNSUBSCRIBE`), and the two that write (`HSET`, `HSETNX`) in a script that deletes the hash
//! it wrote, once `DEL` is known to be allowed.

use super::needs::{Arg, Need, Place, NEEDS};
use redis::{ConnectionLike, Value};

/// The names the checks use: redlock's own shapes under the prefix, for a lock nobody uses.
pub(super) struct Names {
    pub(super) lock: String,
    pub(super) queue: String,
    pub(super) hash: String,
    pub(super) history: String,
    pub(super) channel: String,
    pub(super) db: i64,
}

/// What a server let the user do.
pub(super) struct Access {
    /// How it was found out: `ACL DRYRUN` or `a probe`.
    pub(super) how: &'static str,
    pub(super) refused: Vec<Refused>,
}

/// A command the server refused, and its words for why.
pub(super) struct Refused {
    pub(super) need: &'static Need,
    pub(super) why: String,
}

/// The server kinds a check is for: which of the `Place`s apply.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Plain,
    Sentinel,
    Cluster,
}

fn applies(need: &Need, kind: Kind, db: i64) -> bool {
    match need.place {
        Place::Script | Place::Connection => true,
        Place::Database => db != 0,
        Place::Sentinel => kind == Kind::Sentinel,
        Place::Cluster => kind == Kind::Cluster,
    }
}

/// What `user` may do on `con`. The connection may be left subscribed when the server refuses
/// `UNSUBSCRIBE`: the caller sends nothing after this.
pub(super) fn check(
    con: &mut dyn ConnectionLike,
    user: &str,
    names: &Names,
    kind: Kind,
) -> Result<Access, String> {
    let needs: Vec<&'static Need> = NEEDS
        .iter()
        .filter(|need| applies(need, kind, names.db))
        .collect();
    if let Some(refused) = dry_run(con, user, names, &needs) {
        return Ok(Access {
            how: "ACL DRYRUN",
            refused,
        });
    }
    probe(con, names, &needs).map(|refused| Access {
        how: "a probe",
        refused,
    })
}

/// A command's words, `script|load` as `script load`, with its arguments.
fn words(need: &Need, names: &Names) -> Vec<String> {
    let mut words: Vec<String> = need.command.split('|').map(str::to_string).collect();
    words.extend(need.args.iter().map(|arg| match arg {
        Arg::Text(text) => text.to_string(),
        Arg::Lock => names.lock.clone(),
        Arg::Queue => names.queue.clone(),
        Arg::Hash => names.hash.clone(),
        Arg::History => names.history.clone(),
        Arg::Channel => names.channel.clone(),
        Arg::Database => names.db.to_string(),
    }));
    words
}

/// `ACL DRYRUN user …` of every need, in one pipeline; `None` when the server has no such
/// command or the user may not run it.
fn dry_run(
    con: &mut dyn ConnectionLike,
    user: &str,
    names: &Names,
    needs: &[&'static Need],
) -> Option<Vec<Refused>> {
    let mut pipe = redis::pipe();
    for need in needs {
        pipe.cmd("ACL")
            .arg("DRYRUN")
            .arg(user)
            .arg(words(need, names));
    }
    let packed = pipe.get_packed_pipeline();
    let replies = con.req_packed_commands(&packed, 0, needs.len()).ok()?;
    let mut refused = Vec::new();
    for (need, reply) in needs.iter().zip(replies) {
        match reply {
            Value::Okay => {}
            Value::SimpleString(text) | Value::VerbatimString { text, .. } if text == "OK" => {}
            Value::BulkString(text) if text == b"OK" => {}
            Value::BulkString(text) => refused.push(Refused {
                need,
                why: String::from_utf8_lossy(&text).into_owned(),
            }),
            Value::SimpleString(text) | Value::VerbatimString { text, .. } => {
                refused.push(Refused { need, why: text })
            }
            Value::ServerError(err) => {
                let text = format!("{} {}", err.code(), err.details().unwrap_or_default());
                if text.contains("not found") && text.contains("Command") {
                    refused.push(Refused {
                        need,
                        why: "the server does not know it (renamed or disabled by rename-command)"
                            .into(),
                    });
                } else {
                    // No DRYRUN here (before 7.0), or the user may not ask: probe instead.
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(refused)
}

/// What the probe of the commands that write ends with: the hash and the list they wrote,
/// deleted in the same script (so nothing is left, whatever else they did).
const DELETE_WRITTEN: Need = Need {
    command: "del",
    args: &[Arg::Hash, Arg::History],
    place: Place::Script,
    for_what: "the probe's own clean-up",
    optional: false,
    writes: false,
};

/// The probe script (probe.lua), sent whole (`EVAL`): an `EVALSHA` falls back on `SCRIPT LOAD`,
/// which would be checked in its place.
const PROBE: &str = include_str!("probe.lua");

/// Each need tried for real (module comment).
fn probe(
    con: &mut dyn ConnectionLike,
    names: &Names,
    needs: &[&'static Need],
) -> Result<Vec<Refused>, String> {
    let mut refused = Vec::new();
    let (scripted, direct): (Vec<&'static Need>, Vec<&'static Need>) =
        needs.iter().partition(|need| need.place == Place::Script);
    let (writing, reading): (Vec<&'static Need>, Vec<&'static Need>) =
        scripted.iter().partition(|need| need.writes);
    let eval = NEEDS
        .iter()
        .find(|n| n.command == "eval")
        .expect("eval is needed");
    match run_probe(con, names, &reading)? {
        Probed::Failed(why) => {
            // EVAL itself was refused: nothing inside a script could be tried.
            refused.push(Refused { need: eval, why });
        }
        Probed::Ran(failed) => {
            refused.extend(failed);
            let del_refused = refused.iter().any(|r| r.need.command == "del");
            if !writing.is_empty() && !del_refused {
                let mut cleaned = writing.clone();
                cleaned.push(&DELETE_WRITTEN);
                if let Probed::Ran(failed) = run_probe(con, names, &cleaned)? {
                    refused.extend(failed.into_iter().filter(|r| r.need.writes));
                }
            }
        }
    }
    // The connection's own commands, subscribing last: a refused UNSUBSCRIBE leaves the
    // connection subscribed, good for nothing else.
    let (listening, others): (Vec<&'static Need>, Vec<&'static Need>) = direct
        .iter()
        .filter(|need| need.command != "eval")
        .partition(|need| need.command.ends_with("subscribe"));
    for need in others.into_iter().chain(listening) {
        let mut cmd = redis::Cmd::new();
        for word in words(need, names) {
            cmd.arg(word);
        }
        // A server's error can come back as a reply (`Value::ServerError`) rather than as `Err`.
        let said = match con.req_command(&cmd) {
            Err(err) => Some(crate::server::verbatim(&err)),
            Ok(Value::ServerError(err)) => Some(crate::server::verbatim(&err.into())),
            Ok(_) => None,
        };
        if let Some(why) = said.as_deref().and_then(refusal) {
            refused.push(Refused { need, why });
        }
    }
    Ok(refused)
}

enum Probed {
    /// The script ran: what it refused.
    Ran(Vec<Refused>),
    /// The script itself was refused (EVAL), for this reason.
    Failed(String),
}

/// The probe script over `needs`, on `names`.
fn run_probe(
    con: &mut dyn ConnectionLike,
    names: &Names,
    needs: &[&'static Need],
) -> Result<Probed, String> {
    let keys = [&names.lock, &names.queue, &names.hash, &names.history];
    let mut eval = redis::cmd("EVAL");
    eval.arg(PROBE).arg(keys.len()).arg(&keys);
    for need in needs {
        let words = words(need, names);
        eval.arg(words.len());
        for word in words {
            match keys.iter().position(|key| **key == word) {
                Some(at) => eval.arg(format!("\x1f{}", at + 1)),
                None => eval.arg(word),
            };
        }
    }
    let reply: Vec<String> = match eval.query(con) {
        Ok(reply) => reply,
        Err(err) => {
            let text = err.to_string();
            return match refusal(&text) {
                Some(why) => Ok(Probed::Failed(why)),
                None => Err(crate::human::lowercase_first(crate::human::first_line(
                    &text,
                ))),
            };
        }
    };
    if reply.first().map(String::as_str) == Some("exists") {
        return Err(format!(
            "cannot probe: {} or a key beside it exists",
            crate::human::printable(&names.lock)
        ));
    }
    let mut refused = Vec::new();
    for pair in reply.chunks(2) {
        let [command, error] = pair else { continue };
        let Some(why) = refusal(error) else { continue };
        let first = command.to_lowercase();
        let need = needs
            .iter()
            .find(|need| need.command.split('|').next() == Some(first.as_str()));
        if let Some(need) = need {
            refused.push(Refused {
                need,
                why: why.clone(),
            });
        }
    }
    Ok(Probed::Ran(refused))
}

/// Whether an error is the server refusing the user (an ACL, a renamed command) rather than
/// anything else a probe may meet (`WRONGTYPE`, `NOSCRIPT`, cluster support disabled), in the
/// server's words.
fn refusal(text: &str) -> Option<String> {
    // Channels: Redis 6 and 7 say "no permissions to access one of the channels", Redis 7 in
    // a script "can't publish to the channel", Valkey "No permissions to access a channel".
    let refused = [
        "NOPERM",
        "no permissions",
        "No permissions",
        "can't run this command",
        "can't publish to the channel",
        "can't access",
        "nknown command",
        "Unknown Redis command",
    ];
    if !refused.iter().any(|word| text.contains(word)) {
        return None;
    }
    let text = crate::human::first_line(text).trim();
    if text.contains("nknown") {
        return Some("the server does not know it (renamed or disabled by rename-command)".into());
    }
    Some(crate::human::lowercase_first(
        text.trim_start_matches("NOPERM").trim(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_told_from_other_errors() {
        assert!(
            refusal("WRONGTYPE Operation against a key holding the wrong kind of value").is_none()
        );
        assert!(refusal("NOSCRIPT No matching script.").is_none());
        assert!(refusal("ERR This instance has cluster support disabled").is_none());
        assert_eq!(
            refusal("NOPERM User u has no permissions to run the 'zpopmin' command").unwrap(),
            "user u has no permissions to run the 'zpopmin' command"
        );
        assert!(
            refusal("ERR unknown command 'publish', with args beginning with:")
                .unwrap()
                .contains("renamed")
        );
        assert!(refusal("@user_script:1: Unknown Redis command called from script").is_some());
        assert!(
            refusal("The user executing the script can't run this command or subcommand").is_some()
        );
        for channel in [
            "ERR The user executing the script can't publish to the channel mentioned in the command script: 1234, on @user_script:1.",
            "ERR No permissions to access a channel script: 1234, on @user_script:1.",
            "NOPERM this user has no permissions to access one of the channels used as arguments",
        ] {
            assert!(refusal(channel).is_some(), "{channel}");
        }
    }
}
