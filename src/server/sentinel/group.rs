//! One Sentinel-managed group as a server: what identifies it, and connecting to its current
//! master through a failover: each master the sentinels name is tried as its answer arrives,
//! and used only once its own `ROLE` says master.

use super::super::client::{at, client, connect, Tls};
use super::discovery::ask_all;
use crate::clock::BootInstant;
use crate::human::{first_line, lowercase_first};
use redis::{Client, Connection, ConnectionInfo, RedisResult};
use std::sync::Mutex;
use std::time::Duration;

/// One Sentinel-managed group: its sentinels, the master's name, and how to log in to a master.
pub(crate) struct Group {
    pub(super) master_name: String,
    /// `host:port` of each sentinel, for messages and for recognising the same group twice.
    pub(super) addresses: Vec<String>,
    pub(super) sentinels: Vec<Client>,
    /// The master's settings (db, user, password); the address is filled in once resolved.
    pub(super) master: ConnectionInfo,
    tls: Tls,
    /// The master that last confirmed its role, as `host:port`.
    answered: Mutex<Option<String>>,
}

impl Group {
    pub(super) fn new(
        master_name: String,
        addresses: Vec<String>,
        sentinels: Vec<Client>,
        master: ConnectionInfo,
        tls: Tls,
    ) -> Group {
        Group {
            master_name,
            addresses,
            sentinels,
            master,
            tls,
            answered: Mutex::new(None),
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

    /// The master's name, and each sentinel as `host:port` with its client: for `redlock
    /// doctor`'s `SENTINEL CKQUORUM`.
    pub(crate) fn sentinels(&self) -> (&str, Vec<(&str, &Client)>) {
        let sentinels = self.addresses.iter().map(String::as_str);
        (&self.master_name, sentinels.zip(&self.sentinels).collect())
    }

    /// The master that answered last, as `host:port`.
    pub(crate) fn answered(&self) -> Option<String> {
        self.answered.lock().ok().and_then(|a| a.clone())
    }

    /// Connects to the group's current master within `timeout`: every sentinel is asked at once;
    /// each master named is tried as its answer arrives, and used only if its `ROLE` says
    /// master, so a stale sentinel or a demoted master never gets our writes. A stopped sentinel
    /// costs nothing while another answers; the whole costs `timeout` at most.
    pub(crate) fn connect(&self, timeout: Duration) -> RedisResult<Connection> {
        let deadline = BootInstant::now().add(timeout);
        let asked = ask_all(&self.sentinels, &self.master_name, timeout);
        let mut tried: Vec<(String, u16)> = Vec::new();
        let mut unknown = 0;
        let mut failures: Vec<String> = Vec::new();
        let mut heard = 0;
        while heard < self.sentinels.len() {
            let left = deadline.remaining();
            let Ok((index, answer)) = asked.recv_timeout(left) else {
                break;
            };
            heard += 1;
            let sentinel = &self.addresses[index];
            match answer {
                Ok(None) => unknown += 1,
                Ok(Some(master)) if tried.contains(&master) => {}
                Ok(Some((host, port))) => {
                    tried.push((host.clone(), port));
                    match self.connect_master(&host, port, deadline) {
                        Ok(connection) => {
                            if let Ok(mut answered) = self.answered.lock() {
                                *answered = Some(format!("{host}:{port}"));
                            }
                            return Ok(connection);
                        }
                        Err(err) => failures.push(format!("master {host}:{port}: {}", why(&err))),
                    }
                }
                Err(err) => failures.push(format!("sentinel {sentinel}: {}", why(&err))),
            }
        }
        let message = if unknown == self.sentinels.len() {
            format!(
                "no sentinel knows a master named '{}'; check the name after the hosts in the URL",
                self.master_name
            )
        } else if failures.is_empty() && unknown == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::TimedOut).into());
        } else {
            if unknown > 0 {
                failures.push(format!(
                    "{unknown} sentinel(s) know no master named '{}'",
                    self.master_name
                ));
            }
            if heard < self.sentinels.len() {
                failures.push(format!(
                    "{} sentinel(s): no answer in time",
                    self.sentinels.len() - heard
                ));
            }
            format!(
                "no master for '{}': {}",
                self.master_name,
                failures.join(", ")
            )
        };
        Err(std::io::Error::other(message).into())
    }

    /// The server at `host:port`, connected by `deadline`, if its own `ROLE` says master.
    fn connect_master(
        &self,
        host: &str,
        port: u16,
        deadline: BootInstant,
    ) -> RedisResult<Connection> {
        let client = client(&at(&self.master, host, port), &self.tls)?;
        let mut connection = connect(&client, deadline)?;
        let role: Vec<redis::Value> = redis::cmd("ROLE").query(&mut connection)?;
        match role.first() {
            Some(redis::Value::BulkString(role)) if role.as_slice() == b"master" => Ok(connection),
            Some(redis::Value::BulkString(role)) => Err(std::io::Error::other(format!(
                "is a {}, not the master",
                String::from_utf8_lossy(role)
            ))
            .into()),
            _ => Err(std::io::Error::other("did not say its role").into()),
        }
    }
}

/// One failure in a few words; an authentication failure says where the password comes from.
fn why(err: &redis::RedisError) -> String {
    if err.is_timeout() {
        return "no answer in time".into();
    }
    if err.is_connection_refusal() {
        return "connection refused".into();
    }
    let text = lowercase_first(first_line(&err.to_string()));
    if text.contains("auth") || err.code() == Some("NOAUTH") || err.code() == Some("WRONGPASS") {
        format!("{text} (sentinels take REDLOCK_SENTINEL_PASSWORD, masters the URL's password or REDLOCK_PASSWORD)")
    } else {
        text
    }
}
