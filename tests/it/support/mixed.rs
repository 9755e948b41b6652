//! A Redis Cluster beside two plain servers, as one lock sees them: the cluster counts as one
//! server, named by one seed node (a replica unless said otherwise, which serves no slot at
//! all); redlock configured for the three, and what they hold. Also the names redlock gives, on
//! a cluster, to what it keeps beside a lock key.

use super::binary::stdout_of;
use super::cluster::{redlock_on, Cluster};
use super::one_shot::{one_shot, Call};
use super::process::Cmd;
use super::redis_cluster::RedisCluster;
use super::redis_server::Redis;
use std::ffi::OsStr;

/// A cluster and two plain servers, and the URLs a lock is taken on.
pub struct Mixed {
    pub cluster: RedisCluster,
    pub plain: Cluster,
    pub servers: Vec<String>,
}

impl Mixed {
    pub fn start() -> Mixed {
        let cluster = RedisCluster::start();
        let plain = Cluster::start(2);
        let seed = cluster
            .replica_of(cluster.masters()[0].port)
            .expect("a replica")
            .port;
        let mut servers = vec![cluster.url_via(seed)];
        servers.extend(plain.servers.iter().map(Redis::url));
        Mixed {
            cluster,
            plain,
            servers,
        }
    }

    /// `redlock` on these servers, to spawn or run through `process`.
    pub fn redlock(&self) -> Cmd {
        Cmd::new(redlock_on(&self.servers.join(",")))
    }

    /// `redlock ARGS` on these servers, for one `assert_cmd` run.
    pub fn cmd<I, S>(&self, args: I) -> assert_cmd::Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        one_shot(redlock_on(&self.servers.join(",")), args)
    }

    /// `redlock ARGS` on these servers, run to its end and asserted in a chain: [`Call`].
    pub fn call<I, S>(&self, args: I) -> Call
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Call::run(redlock_on(&self.servers.join(",")), args)
    }

    /// `acquire NAME ARGS`, which must succeed: what it printed.
    pub fn acquire(&self, name: &str, args: &[&str]) -> String {
        let acquired = self.cmd([&["acquire", name], args].concat()).assert();
        stdout_of(acquired.success().get_output())
    }

    /// How many servers (the cluster as one) hold `value` at `key`.
    pub fn holding(&self, key: &str, value: &str) -> usize {
        let on_cluster = self.cluster.master_of(key).get(key).as_deref() == Some(value);
        self.plain.holding(key, value) + usize::from(on_cluster)
    }
}

/// The name on a cluster of what redlock keeps beside the lock key `lock` (one with no hash
/// tag): `␟{lock}␟suffix`, in the lock key's slot.
pub fn beside(lock: &str, suffix: &str) -> String {
    format!("\x1f{{{lock}}}\x1f{suffix}")
}

/// The lock key of the lock `name`.
pub fn key_of(name: &str) -> String {
    format!("redlock:{name}")
}
