//! One Sentinel-managed group as a server: what identifies it, and which master this run uses.
//!
//! A run asks the sentinels once, and keeps the master a majority of them named (once its own
//! `ROLE` said master) for every round after, until the master moved: a round failed on it (it
//! said it is not the master, refused a write as a replica, broke the connection or did not
//! answer in time), or a majority of the sentinels no longer name it. Every round after the
//! first asks the sentinels again beside its request (master.rs), on the connections kept from
//! the last time, so that costs no round trip of its own; a round that hears a majority name
//! another master goes there within its deadline, so `exec` follows a failover at its next
//! renewal even while the old master still accepts writes. So the group votes through the one
//! master most of its sentinels agree on (discovery.rs says why a majority), never through
//! whichever sentinel answers first. A master the run used before and no longer does is
//! remembered (`former`): releases and extensions reach it too, so that no copy of the lock is
//! left on it.

use super::super::blocking::{Blocking, Dialer};
use super::super::client::{at, Tls};
use super::discovery::{Address, Discovery, Sentinels};
use crate::clock::BootInstant;
use redis::{ConnectionInfo, RedisResult};
use std::sync::Mutex;

/// One Sentinel-managed group: its sentinels, the master's name, and how to log in to a master.
pub(crate) struct Group {
    pub(super) master_name: String,
    /// `host:port` of each sentinel, for messages and for recognising the same group twice.
    pub(super) addresses: Vec<String>,
    pub(super) sentinels: Sentinels,
    /// The master's settings (db, user, password); the address is filled in once resolved.
    pub(super) master: ConnectionInfo,
    tls: Tls,
    known: Mutex<Known>,
}

/// Which master this run uses.
#[derive(Default)]
struct Known {
    /// The master in use: the last one a round got an answer from.
    master: Option<Address>,
    /// A round failed on it since: ask the sentinels again before the next one.
    stale: bool,
    /// The masters used before it, in this run.
    former: Vec<Address>,
}

impl Group {
    pub(super) fn new(
        master_name: String,
        addresses: Vec<String>,
        sentinels: Vec<Dialer>,
        master: ConnectionInfo,
        tls: Tls,
    ) -> Group {
        Group {
            master_name,
            sentinels: Sentinels::new(sentinels, addresses.clone()),
            addresses,
            master,
            tls,
            known: Mutex::new(Known::default()),
        }
    }

    /// Two URLs name the same group when they name the same master and share a sentinel: they
    /// would reach the same master and must vote once.
    pub(crate) fn same_as(&self, other: &Group) -> bool {
        self.master_name == other.master_name
            && self.master.redis_settings().db() == other.master.redis_settings().db()
            && self.addresses.iter().any(|a| other.addresses.contains(a))
    }

    /// What identifies the group: the master name, the database and the sentinels, sorted.
    pub(crate) fn identity(&self) -> String {
        let mut addresses = self.addresses.clone();
        addresses.sort();
        format!(
            "sentinel:{}/{}@{}",
            self.master_name,
            self.master.redis_settings().db(),
            addresses.join(",")
        )
    }

    /// The master's settings; its address is the first sentinel's until one is resolved.
    pub(crate) fn master_settings(&self) -> &ConnectionInfo {
        &self.master
    }

    /// The master's name, and each sentinel as `host:port` with its dialer: for `redlock
    /// doctor`'s `SENTINEL CKQUORUM`.
    pub(crate) fn sentinels(&self) -> (&str, Vec<(&str, &Dialer)>) {
        (&self.master_name, self.sentinels.each())
    }

    /// The master in use, as `host:port`.
    pub(crate) fn answered(&self) -> Option<String> {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        known
            .master
            .as_ref()
            .map(|(host, port)| format!("{host}:{port}"))
    }

    /// Whether this run has found its master (it may have moved since).
    pub(crate) fn found(&self) -> bool {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        known.master.is_some()
    }

    /// The master to use without asking the sentinels, if there is one.
    pub(super) fn master_in_use(&self) -> Option<Address> {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        known.master.clone().filter(|_| !known.stale)
    }

    /// Asks every sentinel where the master is, by `deadline`.
    pub(super) fn discover(&self, deadline: BootInstant) -> Discovery {
        Discovery::start(&self.sentinels, &self.master_name, deadline)
    }

    /// A connection to the server at `address`, made by `deadline`; with `role`, its first
    /// request counts only if the server says it is the master (`ROLE` rides with it).
    pub(super) fn dial(
        &self,
        (host, port): &Address,
        deadline: BootInstant,
        role: bool,
    ) -> RedisResult<Blocking> {
        Dialer::new(&at(&self.master, host, *port), &self.tls)?.open(deadline, role)
    }

    /// `address` answered a round as the master: it is the one to use from now on. The one
    /// used before, if another, is remembered as a former master.
    pub(super) fn use_master(&self, address: &Address) {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        known.stale = false;
        if known.master.as_ref() == Some(address) {
            return;
        }
        known.former.retain(|former| former != address);
        if let Some(before) = known.master.replace(address.clone()) {
            known.former.push(before);
        }
    }

    /// A round failed on the master in use: the next round asks the sentinels again.
    pub(super) fn suspect(&self) {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        known.stale = true;
    }

    /// The masters this run used before the one in use, and the one in use too while a round
    /// failed on it or the sentinels stopped naming it (a round may not reach it then: the
    /// group votes no when its sentinels disagree), each connected to by `deadline` (those
    /// that cannot be are left out): releases and extensions reach them too.
    /// Whether this run used another master before the one it uses now (`former`).
    pub(crate) fn has_former(&self) -> bool {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        !known.former.is_empty() || (known.stale && known.master.is_some())
    }

    pub(crate) fn former(&self, deadline: BootInstant) -> Vec<Blocking> {
        let former = {
            let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            let mut former = known.former.clone();
            if known.stale {
                former.extend(known.master.clone());
            }
            former
        };
        former
            .iter()
            .filter_map(|address| self.dial(address, deadline, false).ok())
            .collect()
    }
}
