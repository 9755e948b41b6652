//! How much room a server has left before it refuses redlock: clients against `maxclients`
//! (memory against `maxmemory` is findings.rs's, beside eviction), and sizes as redis.conf
//! writes them.

use super::codes::{Code, Finding};

/// The share of `maxclients` in use above which a server has too little headroom: one run of
/// redlock holds up to two connections to it (its requests, and a waiter's subscription), so
/// a few cron jobs or CI jobs starting together, or a client pool growing, take the last tenth
/// at once; the same bound as memory's.
const CLIENTS_FULL: f64 = 0.9;

/// A server's clients against `maxclients`: a connection it refuses is a vote lost.
pub(super) fn clients(
    at: &str,
    name: Option<&str>,
    facts: &super::facts::Facts,
    found: &mut Vec<Finding>,
) {
    let (Some(max), Some(connected)) = (facts.maxclients, facts.clients) else {
        return;
    };
    let rejected = facts.rejected.unwrap_or(0);
    let full = max > 0 && connected as f64 > max as f64 * CLIENTS_FULL;
    if !full && rejected == 0 {
        return;
    }
    let refused = match rejected {
        0 => String::new(),
        1 => ", and it has refused 1 connection since it started (max number of clients reached)"
            .into(),
        n => format!(
            ", and it has refused {n} connections since it started (max number of clients reached)"
        ),
    };
    found.push(Finding::new(
        Code::Clients,
        name,
        format!("{at} has {connected} of its maxclients {max} clients connected{refused}: a connection it refuses is a vote lost; raise maxclients, or find the client that holds so many connections (CLIENT LIST)"),
    ));
}

/// `2mb`, `512kb`, `1.5gb`: a memory size as redis.conf writes one.
pub(super) fn bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10)];
    for (unit, size) in UNITS {
        if n >= size {
            let value = n as f64 / size as f64;
            return if value.fract() == 0.0 {
                format!("{value:.0}{unit}")
            } else {
                format!("{value:.1}{unit}")
            };
        }
    }
    format!("{n}b")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_redis_conf_writes_them() {
        assert_eq!(bytes(2 * 1024 * 1024), "2mb");
        assert_eq!(bytes(1536 * 1024 * 1024), "1.5gb");
        assert_eq!(bytes(100), "100b");
    }
}
