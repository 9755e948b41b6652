//! What redlock needs a server to let it do: every command it sends, inside its scripts and on
//! the connection, and the keys and channels it uses them on. The one list of them: `doctor`
//! checks each, docs/doctor.md's ACL recipe grants exactly these (a test holds the two and the
//! code to each other: a command added to a script or a request without its line here fails it).

/// Where a command is sent, which says who needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    /// Inside redlock's Lua scripts (the server checks a script's commands as the user's own).
    Script,
    /// On the connection, by every kind of server.
    Connection,
    /// Only to a server whose URL names a database other than 0 (`SELECT`).
    Database,
    /// Only to a Sentinel group's master (`ROLE`, which confirms it is one).
    Sentinel,
    /// Only to a Redis Cluster's nodes.
    Cluster,
}

/// A name a command's arguments use, filled in by the check with one of redlock's own under the
/// prefix (`doctor::access`), so that the ACL's key and channel patterns are checked too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arg {
    Text(&'static str),
    /// A lock's key (a string).
    Lock,
    /// A lock's queue (a sorted set).
    Queue,
    /// A fencing counter (a hash).
    Hash,
    /// A name's run history (a list).
    History,
    /// A waiter's wake-up channel.
    Channel,
    /// The database the URL names.
    Database,
}

/// One command redlock sends, with arguments like the ones it sends it with.
#[derive(Debug, Clone, Copy)]
pub(super) struct Need {
    /// As the ACL names it: `zpopmin`, `pubsub|numsub`.
    pub(super) command: &'static str,
    pub(super) args: &'static [Arg],
    pub(super) place: Place,
    /// Why redlock sends it, for a finding that says it is refused.
    pub(super) for_what: &'static str,
    /// Nothing but promptness or information depends on it: refused, waiters ask at their next
    /// retry instead of at once (`PUBLISH`, `SUBSCRIBE`) or runs go unrecorded (the run
    /// history's `LPUSH`…); never a wrong outcome.
    pub(super) optional: bool,
    /// Running it writes (only in a script that deletes what it wrote, `access`).
    pub(super) writes: bool,
}

const fn need(command: &'static str, args: &'static [Arg], for_what: &'static str) -> Need {
    Need {
        command,
        args,
        place: Place::Script,
        for_what,
        optional: false,
        writes: false,
    }
}

const fn at(place: Place, need: Need) -> Need {
    Need { place, ..need }
}

const fn optional(need: Need) -> Need {
    Need {
        optional: true,
        ..need
    }
}

const fn writes(need: Need) -> Need {
    Need {
        writes: true,
        ..need
    }
}

use Arg::{Channel, Database, Hash, History, Lock, Queue, Text};

const LOCKS: &str = "every lock";
const WAITS: &str = "waiting (--wait) and releases with waiters";
const FENCES: &str = "--fence and latches";
const RUNS: &str = "recording runs (redlock history)";

/// Everything redlock needs, in the order docs/doctor.md's ACL recipe lists it.
pub(super) const NEEDS: &[Need] = &[
    at(
        Place::Connection,
        need("eval", &[Text("return 0"), Text("0")], LOCKS),
    ),
    at(
        Place::Connection,
        need(
            "evalsha",
            &[Text("0000000000000000000000000000000000000000"), Text("0")],
            LOCKS,
        ),
    ),
    // Only after a SCRIPT FLUSH while connected: refused, one request fails on that server and
    // its next connection sends the script whole (EVAL). Every lock works without it.
    at(
        Place::Connection,
        optional(need(
            "script|load",
            &[Text("return 0")],
            "a script the server forgot while connected (SCRIPT FLUSH)",
        )),
    ),
    at(Place::Connection, need("ping", &[], LOCKS)),
    at(
        Place::Connection,
        need("get", &[Lock], "semaphores (--limit)"),
    ),
    at(Place::Connection, need("mget", &[Lock], "status")),
    at(
        Place::Connection,
        need("scan", &[Text("0")], "status and latch status"),
    ),
    // Sizes a listing's time, and over 100,000 keys has it read the index (lock/list.rs):
    // refused, a listing on a server with many keys walks them all, and may run out of
    // --timeout.
    at(
        Place::Connection,
        optional(need(
            "dbsize",
            &[],
            "sizing status and latch status on a server with many keys",
        )),
    ),

    at(
        Place::Connection,
        optional(need("subscribe", &[Channel], WAITS)),
    ),
    at(
        Place::Connection,
        optional(need("unsubscribe", &[Channel], WAITS)),
    ),
    at(Place::Database, need("select", &[Database], "a URL's /db")),
    at(
        Place::Sentinel,
        need("role", &[], "Sentinel groups (it confirms the master)"),
    ),
    at(
        Place::Cluster,
        need("cluster|slots", &[], "Redis Cluster (the slot map)"),
    ),
    at(
        Place::Cluster,
        need("asking", &[], "Redis Cluster (a slot being migrated)"),
    ),
    need("del", &[Lock], LOCKS),
    need("exists", &[Lock], LOCKS),
    need("hdel", &[Hash, Text("f")], "latches"),
    need("hget", &[Hash, Text("f")], FENCES),
    need("hgetall", &[Hash], FENCES),
    need("hlen", &[Hash], FENCES),
    writes(need("hset", &[Hash, Text("f"), Text("v")], FENCES)),
    writes(need("hsetnx", &[Hash, Text("f"), Text("v")], FENCES)),
    optional(writes(need("lpush", &[History, Text("v")], RUNS))),
    optional(need(
        "lrange",
        &[History, Text("0"), Text("0")],
        "redlock history",
    )),
    optional(need("ltrim", &[History, Text("0"), Text("99")], RUNS)),
    need("persist", &[Lock], "release --hold-at-least"),
    need("pexpire", &[Lock, Text("1000")], LOCKS),
    need("pexpireat", &[Lock, Text("1")], "--hold-at-least"),
    need("pttl", &[Lock], LOCKS),
    optional(need("publish", &[Channel, Text("doctor")], WAITS)),
    need("pubsub|numsub", &[Channel], "shared locks with waiters"),
    need("set", &[Lock, Text("v"), Text("XX")], LOCKS),
    need("time", &[], LOCKS),
    need("type", &[Lock], LOCKS),
    need("zadd", &[Queue, Text("XX"), Text("0"), Text("m")], WAITS),
    need("zcard", &[Queue], WAITS),
    need(
        "zpopmin",
        &[Queue],
        "releases with shared waiters (woken together)",
    ),
    need(
        "zrange",
        &[Queue, Text("0"), Text("0")],
        "every acquire and release (the first waiter), and listing a server of over 100,000 keys (the index)",
    ),
    need(
        "zrangebyscore",
        &[Queue, Text("0"), Text("0")],
        "shared locks",
    ),
    need("zrank", &[Queue, Text("m")], WAITS),
    need("zrem", &[Queue, Text("m")], WAITS),
    need(
        "zremrangebyscore",
        &[Queue, Text("0"), Text("0")],
        "shared locks",
    ),
    need("zscore", &[Queue, Text("m")], WAITS),
];

/// docs/doctor.md's ACL recipe's permissions for `prefix`: the key and channel patterns, then every
/// command. On a Redis Cluster the keys beside a lock key are named for its hash slot
/// (lock/keys/cluster.rs), `␟{<prefix>…`, which take a pattern of their own.
pub(super) fn recipe(prefix: &str, cluster: bool) -> String {
    let commands: Vec<String> = NEEDS.iter().map(|n| format!("+{}", n.command)).collect();
    let slotted = if cluster {
        format!(" \"~\\x1f{{{prefix}*\"")
    } else {
        String::new()
    };
    format!(
        "resetkeys ~{prefix}*{slotted} resetchannels &{prefix}* -@all {}",
        commands.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every file under `src/` whose name ends with `ext`, with its text.
    fn sources(ext: &str) -> Vec<(std::path::PathBuf, String)> {
        let mut found = Vec::new();
        let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.to_string_lossy().ends_with(ext) {
                    let text = std::fs::read_to_string(&path).unwrap();
                    found.push((path, text));
                }
            }
        }
        found
    }

    fn needs(command: &str) -> bool {
        NEEDS
            .iter()
            .any(|need| need.command.split('|').next() == Some(command))
    }

    #[test]
    fn every_command_a_script_calls_is_needed() {
        let mut checked = 0;
        for (path, text) in sources(".lua") {
            for call in ["redis.call('", "redis.pcall('"] {
                for piece in text.split(call).skip(1) {
                    let command = piece.split('\'').next().unwrap().to_lowercase();
                    checked += 1;
                    assert!(
                        needs(&command),
                        "{} calls {command}, which NEEDS lacks",
                        path.display()
                    );
                }
            }
        }
        assert!(checked > 50, "{checked}");
    }

    #[test]
    fn every_command_sent_on_a_connection_is_needed() {
        // Sent before any user is checked (AUTH), to the sentinels with their own user
        // (SENTINEL), or by doctor alone, which needs nothing it checks.
        let exempt = [
            "AUTH",
            "SENTINEL",
            "INFO",
            "CONFIG",
            "ACL",
            "CLUSTER INFO",
            "CLUSTER NODES",
        ];
        for (path, text) in sources(".rs") {
            if path.components().any(|c| c.as_os_str() == "doctor") {
                continue;
            }
            let code = text.split("#[cfg(test)]").next().unwrap();
            for piece in code.split("redis::cmd(\"").skip(1) {
                let command = piece.split('"').next().unwrap();
                let with_sub = piece
                    .split_once(".arg(\"")
                    .map(|(_, rest)| format!("{command} {}", rest.split('"').next().unwrap()));
                if exempt.contains(&command)
                    || with_sub.as_deref().is_some_and(|c| exempt.contains(&c))
                {
                    continue;
                }
                assert!(
                    needs(&command.to_lowercase()),
                    "{} sends {command}, which NEEDS lacks",
                    path.display()
                );
            }
        }
    }

    /// docs/doctor.md's recipe is the one built here, for the default prefix.
    #[test]
    fn documented_recipe_grants_what_is_needed() {
        let doc = include_str!("../../docs/doctor.md");
        let wanted = recipe("redlock:", false);
        assert!(recipe("p:", true).starts_with("resetkeys ~p:* \"~\\x1f{p:*\" resetchannels"));
        let line = doc
            .lines()
            .find(|line| line.contains("ACL SETUSER redlock"))
            .expect("docs/doctor.md has the ACL recipe");
        assert!(
            line.ends_with(&wanted),
            "docs/doctor.md's recipe:\n{line}\nexpected it to end with:\n{wanted}"
        );
    }
}
