//! `redlock doctor`: the deployment contract (docs/guarantees.md: what Redlock
//! needs) checked against the servers themselves. Every listed server is asked at once, a
//! Sentinel group through to its master and a cluster to each of its masters; what they say is
//! turned into findings, each an error (exclusion can break, or nothing works) or a warning
//! (less margin than it seems), and the run ends 0 with no error, 1 with one (`--strict`: or a
//! warning), 69 when fewer than a quorum answer and the servers that are down could bring it back
//! (a quorum kept away by misconfigured servers alone is 1: waiting will not help).
//!
//! - needs.rs: every command, key and channel redlock needs (and docs/doctor.md's ACL recipe);
//!   access.rs: whether a server's user may do each (`ACL DRYRUN`, or a probe), probe.lua the
//!   probe's script.
//! - facts.rs: one Redis process's facts, read from `INFO` and `CONFIG GET`; probe.rs: every
//!   server asked; reach.rs: why one could not be (down or misconfigured), and who reads its configuration.
//! - codes.rs: the findings' codes and severities; findings.rs: each server's rules; across.rs:
//!   the rules of the servers side by side.
//! - show.rs: the report for people; json.rs: `--json`.

mod access;
mod across;
mod codes;
mod facts;
mod findings;
mod headroom;
mod json;
mod needs;
mod probe;
mod reach;
mod show;

use crate::cli::DoctorArgs;
use crate::config::Config;
use crate::exit::Outcome;
use crate::server::Server;
use across::Twin;
use codes::{Code, Severity};
use findings::Measures;
use std::io::Write;

pub(crate) use codes::CODES;
pub(crate) use json::DoctorDocument;

pub(crate) fn run(config: &Config, args: &DoctorArgs, verbose: bool) -> anyhow::Result<Outcome> {
    let mut listed: Vec<(&Server, bool)> = config.servers.iter().map(|s| (s, true)).collect();
    listed.extend(config.aliases.iter().map(|alias| (&alias.server, false)));
    let read_as = args.read_as.as_ref().map(|user| probe::ReadAs {
        user: user.clone(),
        password: std::env::var("REDLOCK_READ_AS_PASSWORD").ok(),
    });
    let checked = probe::check_all(&listed, &config.prefix, config.timeout, read_as.as_ref());
    let twins: Vec<Twin> = config
        .aliases
        .iter()
        .enumerate()
        .map(|(i, alias)| Twin {
            of: alias.of,
            alias: config.servers.len() + i,
            why: alias.why,
        })
        .collect();
    let measures = Measures {
        ttl: args.ttl,
        timeout: config.timeout,
        prefix: config.prefix.clone(),
    };
    let mut found = findings::each_server(&checked, &measures);
    across::across(&checked, &twins, &mut found);
    let servers = config.servers.len();
    let reachable = checked.iter().filter(|c| c.votes && c.reachable()).count();
    let errors = show::counted(&found, args.strict, Severity::Error);
    let warnings = show::counted(&found, args.strict, Severity::Warning);
    let printed = if args.json {
        let fields = json::document(
            &checked,
            &found,
            (args.strict, args.ttl, config.timeout),
            (servers, reachable, errors, warnings),
        );
        crate::schema::to_json(&fields)?
    } else {
        let summary = show::summary(servers, reachable, errors, warnings);
        show::text(&checked, &found, (args.strict, verbose), &summary)
    };
    // A closed pipe (`redlock doctor | head`) is not an error worth reporting.
    let _ = writeln!(std::io::stdout(), "{printed}");
    // 69 (unavailable) only while the servers that are down could bring the quorum back;
    // when the misconfigured ones alone keep it away, waiting will not help: 1, an error.
    let down = checked
        .iter()
        .filter(|c| c.votes && c.error.as_ref().is_some_and(|seen| !seen.misconfigured()))
        .count();
    let outage = reachable + down >= crate::lock::quorum::quorum(servers);
    Ok(
        if found.iter().any(|f| f.code == Code::NoQuorum) && outage {
            Outcome::Unavailable
        } else if errors > 0 {
            Outcome::Negative
        } else {
            Outcome::Success
        },
    )
}
