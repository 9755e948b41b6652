//! What only the servers side by side show: one server listed twice (by its address, or found
//! by its `run_id`), a replica beside its master, too few of them answering, an even count.

use super::codes::{Code, Finding};
use super::probe::Checked;
use crate::lock::quorum;

/// A listed server that is another one under a second name (config/aliases.rs): the index of
/// each in the checked list, and why they are one.
pub(super) struct Twin {
    pub(super) of: usize,
    pub(super) alias: usize,
    pub(super) why: &'static str,
}

/// What only the servers side by side show.
pub(super) fn across(checked: &[Checked], twins: &[Twin], found: &mut Vec<Finding>) {
    let voting: Vec<&Checked> = checked.iter().filter(|c| c.votes).collect();
    for twin in twins {
        let (a, b) = (&checked[twin.of], &checked[twin.alias]);
        found.push(Finding::new(
            Code::SameServer,
            Some(&b.display),
            format!("{} and {} are one server ({}){}: redlock counts it once, so there are fewer independent servers than listed; list each server once", a.display, b.display, twin.why, databases(a, b)),
        ));
    }
    // One run_id behind two voting servers: names only DNS knows, a plain URL beside the group
    // or cluster it belongs to.
    let ids = |server: &Checked| -> Vec<String> {
        server
            .nodes
            .iter()
            .filter_map(|n| n.facts.run_id.clone())
            .collect()
    };
    for (i, a) in voting.iter().enumerate() {
        for b in &voting[i + 1..] {
            let shared = ids(a).into_iter().find(|id| ids(b).contains(id));
            if let Some(id) = shared {
                found.push(Finding::new(
                    Code::SameServer,
                    Some(&b.display),
                    format!("{} and {} are one server (the same run_id {id}){}: it votes twice, so one restart can hand a lock to two holders; list each server once", a.display, b.display, databases(a, b)),
                ));
            }
        }
    }
    replicas(&voting, found);
    let n = voting.len();
    let reachable = voting.iter().filter(|c| c.reachable()).count();
    let needed = quorum::quorum(n);
    if reachable < needed {
        found.push(Finding::new(
            Code::NoQuorum,
            None,
            format!("{reachable} of {} answered, {needed} needed: no lock can be taken until a quorum answers", crate::human::servers(n)),
        ));
    }
    let count = match n {
        1 => Some("1 server is a single point of failure, not Redlock: use 3 or 5 independent servers".to_string()),
        2 => Some("2 servers need both for a quorum, so one down stops every lock: use 3 or 5".to_string()),
        n if n % 2 == 0 => Some(format!("{n} servers is an even number: a quorum needs {needed}, so {} servers tolerate as many failures", n - 1)),
        _ => None,
    };
    if let Some(message) = count {
        found.push(Finding::new(Code::ServerCount, None, message));
    }
}

/// Every replica listed as a server, and whether its master is listed too (they share a
/// replication ID).
fn replicas(voting: &[&Checked], found: &mut Vec<Finding>) {
    for server in voting {
        for node in &server.nodes {
            if node.facts.role.as_deref() != Some("replica") {
                continue;
            }
            let of = node.facts.replica_of.as_deref().unwrap_or("its master");
            // The master it follows, by the replication ID they share once in sync, or by the
            // address it follows (before the first sync, its ID is still its own).
            let master = voting.iter().find(|other| {
                other.display != server.display
                    && other.nodes.iter().any(|n| {
                        let same_id =
                            n.facts.replid.is_some() && n.facts.replid == node.facts.replid;
                        let followed = n.address.is_some() && n.address == node.facts.replica_of;
                        n.facts.role.as_deref() == Some("master") && (same_id || followed)
                    })
            });
            let listed = master.map_or(String::new(), |master| {
                format!(", and its master is listed too as {}: one failover can hand a lock to two holders", master.display)
            });
            found.push(Finding::new(
                Code::Replica,
                Some(&server.display),
                format!("{} is a replica of {of} (read-only: it refuses every lock){listed}; list independent masters, or the group as redis+sentinel://", server.display),
            ));
        }
    }
}

/// `, two databases of it` when `a` and `b` name different databases.
fn databases(a: &Checked, b: &Checked) -> &'static str {
    if a.db != b.db {
        ", two of its databases"
    } else {
        ""
    }
}
