//! How a server was named, as what looks at a deployment needs it: a server named directly by
//! its address (the alias guard compares them, config/aliases.rs), a Sentinel group by its
//! sentinels (`redlock doctor` asks them `SENTINEL CKQUORUM`), or neither, a cluster.

use super::blocking::Dialer;
use super::endpoint::{Endpoint, Server};
use redis::ConnectionAddr;

impl Server {
    /// Where a server named directly (not a Sentinel group or a cluster) listens, as its URL
    /// says.
    pub(crate) fn address(&self) -> Option<&ConnectionAddr> {
        match &self.endpoint {
            Endpoint::Direct(..) => Some(self.info.addr()),
            _ => None,
        }
    }

    /// For a Sentinel group, its master's name and each sentinel (`host:port`, dialer).
    pub(crate) fn sentinels(&self) -> Option<(&str, Vec<(&str, &Dialer)>)> {
        match &self.endpoint {
            Endpoint::Sentinel(group) => Some(group.sentinels()),
            _ => None,
        }
    }
}
