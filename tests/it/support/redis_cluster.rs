//! A real Redis Cluster for the tests: three masters and three replicas (`redis-server
//! --cluster-enabled yes`, each with its cluster bus port 10000 above its own, where every
//! version puts it), joined by `redis-cli --cluster create … --cluster-replicas 1`, all on free
//! loopback ports and killed by pid on drop. A `cluster-node-timeout` of 1 s keeps failovers
//! quick. Also: where a key lives, a name whose
//! lock key lands on a given master, a manual failover, and a slot's migration step by step.

use super::redis_server::{free_port, Redis};
use super::wait_for;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a test may wait for the cluster to settle (joining, replicas syncing, a failover).
const SETTLE: Duration = Duration::from_secs(30);

/// Three masters and their replicas.
pub struct RedisCluster {
    pub nodes: Vec<Redis>,
}

impl RedisCluster {
    /// Starts six nodes, joins them (the first three become masters) and waits until every
    /// node says `cluster_state:ok` and every replica is in sync.
    pub fn start() -> RedisCluster {
        let nodes: Vec<Redis> = (0..6).map(|_| start_node(&[])).collect();
        let cluster = RedisCluster::create(nodes, 1);
        wait_for("every replica to be in sync", SETTLE, || {
            cluster.masters().iter().all(|m| {
                cluster.replica_of(m.port).is_some_and(|r| {
                    info(r, "INFO", "replication").contains("master_link_status:up")
                })
            })
        });
        cluster
    }

    /// Three masters and no replicas, each telling clients (`CLUSTER SLOTS`, redirections) of
    /// the port `announced` gives for it (a proxy's in front of it, say) rather than its own.
    ///
    /// `None` when the slot map does not name the announced ports: servers before Redis 7.0
    /// apply a `cluster-announce-port` set at run time to what they tell the others, not to their
    /// own entry of the map.
    pub fn start_announcing(mut announced: impl FnMut(&Redis) -> u16) -> Option<RedisCluster> {
        let nodes: Vec<Redis> = (0..3).map(|_| start_node(&[])).collect();
        let mut ports = Vec::new();
        for node in &nodes {
            let port = announced(node);
            ports.push(port);
            let _: () = redis::cmd("CONFIG")
                .arg("SET")
                .arg("cluster-announce-port")
                .arg(port)
                .query(&mut node.connection())
                .expect("CONFIG SET cluster-announce-port");
        }
        let cluster = RedisCluster::create(nodes, 0);
        let named = cluster
            .slots()
            .iter()
            .all(|(_, _, port)| ports.contains(port));
        named.then_some(cluster)
    }

    /// Joins `nodes` into a cluster, `replicas` for each master, and waits until every node
    /// says `cluster_state:ok`.
    fn create(nodes: Vec<Redis>, replicas: usize) -> RedisCluster {
        let mut create = Command::new("redis-cli");
        create
            .arg("--cluster")
            .arg("create")
            .args(nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)))
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"]);
        run_within(&mut create, SETTLE);
        let cluster = RedisCluster { nodes };
        wait_for("every node to say cluster_state:ok", SETTLE, || {
            cluster
                .nodes
                .iter()
                .all(|n| info(n, "CLUSTER", "INFO").contains("cluster_state:ok"))
        });
        cluster
    }

    /// `redis+cluster://` naming only the node on `port` as its seed.
    pub fn url_via(&self, port: u16) -> String {
        format!("redis+cluster://127.0.0.1:{port}")
    }

    pub fn node(&self, port: u16) -> &Redis {
        self.nodes
            .iter()
            .find(|n| n.port == port)
            .expect("a node of this cluster")
    }

    /// The nodes that serve slots, as the first running node sees them, in slot order: the
    /// first serves slot 0. (`CLUSTER SLOTS` lists the ranges in slot order from Redis 7 on, but
    /// node by node before: on Redis 6.0 the first range listed may start anywhere.)
    pub fn masters(&self) -> Vec<&Redis> {
        let mut slots = self.slots();
        slots.sort_unstable();
        let mut ports: Vec<u16> = Vec::new();
        for (_, _, port) in slots {
            if !ports.contains(&port) {
                ports.push(port);
            }
        }
        ports.into_iter().map(|port| self.node(port)).collect()
    }

    /// `CLUSTER SLOTS` of the first running node: (first slot, last slot, master port).
    fn slots(&self) -> Vec<(u16, u16, u16)> {
        let node = self.nodes.iter().find(|n| n.is_running()).expect("a node");
        let ranges: Vec<redis::Value> = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query(&mut node.connection())
            .expect("CLUSTER SLOTS");
        ranges
            .into_iter()
            .filter_map(|range| {
                // [start, end, [host, port, id, …], replicas…]
                let redis::Value::Array(fields) = range else {
                    return None;
                };
                let number = |value: &redis::Value| match value {
                    redis::Value::Int(n) => u16::try_from(*n).ok(),
                    _ => None,
                };
                let redis::Value::Array(master) = fields.get(2)? else {
                    return None;
                };
                Some((
                    number(fields.first()?)?,
                    number(fields.get(1)?)?,
                    number(master.get(1)?)?,
                ))
            })
            .collect()
    }

    /// The hash slot of `key`.
    pub fn slot_of(&self, key: &str) -> u16 {
        let node = self.nodes.iter().find(|n| n.is_running()).expect("a node");
        redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query(&mut node.connection())
            .expect("CLUSTER KEYSLOT")
    }

    /// The master serving `key`'s slot.
    pub fn master_of(&self, key: &str) -> &Redis {
        self.node(self.port_serving(key))
    }

    /// The port `CLUSTER SLOTS` names for `key`'s slot: its master's, or the one it announces.
    pub fn port_serving(&self, key: &str) -> u16 {
        let slot = self.slot_of(key);
        let (_, _, port) = self
            .slots()
            .into_iter()
            .find(|(start, end, _)| (*start..=*end).contains(&slot))
            .expect("a master for every slot");
        port
    }

    /// The replica of the master on `port`, as that master reports it.
    pub fn replica_of(&self, port: u16) -> Option<&Redis> {
        let replication = info(self.node(port), "INFO", "replication");
        let line = replication.lines().find(|l| l.starts_with("slave0:"))?;
        let replica: u16 = line
            .split(',')
            .find_map(|f| f.strip_prefix("port=")?.parse().ok())?;
        Some(self.node(replica))
    }

    /// A lock name (after `stem`) whose key under `prefix` is served by the master on `port`.
    pub fn name_on(&self, port: u16, prefix: &str, stem: &str) -> String {
        (0..)
            .map(|i| format!("{stem}-{i}"))
            .find(|name| self.master_of(&format!("{prefix}{name}")).port == port)
            .expect("some name lands on every master")
    }

    /// `CLUSTER FAILOVER` on the replica of the master on `port`; returns once every running
    /// node names the replica as the slots' master. Returns the new master's port.
    ///
    /// A manual failover that the old master does not complete within Redis's own limit (5 s:
    /// a loaded machine can make it miss that) is abandoned by the replica without a word, so
    /// it is asked again, each time once that limit has passed, until `SETTLE`.
    pub fn failover(&self, port: u16) -> u16 {
        const MANUAL_FAILOVER_LIMIT: Duration = Duration::from_secs(6);
        let replica = self.replica_of(port).expect("a replica").port;
        let deadline = Instant::now() + SETTLE;
        loop {
            let _: () = redis::cmd("CLUSTER")
                .arg("FAILOVER")
                .query(&mut self.node(replica).connection())
                .expect("CLUSTER FAILOVER");
            let asked = Instant::now();
            while asked.elapsed() < MANUAL_FAILOVER_LIMIT {
                if self.is_master(replica) {
                    self.wait_master(replica);
                    return replica;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            assert!(
                Instant::now() < deadline,
                "the replica on {replica} did not become the master within {SETTLE:?}"
            );
        }
    }

    /// Whether the node on `port` is a master in its own eyes and in `CLUSTER SLOTS`.
    fn is_master(&self, port: u16) -> bool {
        info(self.node(port), "ROLE", "").starts_with("master")
            && self.slots().iter().any(|(_, _, p)| *p == port)
    }

    /// Waits until the node on `port` is a master in its own eyes and in `CLUSTER SLOTS`.
    pub fn wait_master(&self, port: u16) {
        wait_for("the replica to become the master", SETTLE, || {
            self.is_master(port)
        });
    }

    /// Step 1 of a migration of `slot` from the node on `from` to the node on `to`:
    /// `IMPORTING` on `to`, then `MIGRATING` on `from`.
    pub fn start_migration(&self, slot: u16, from: u16, to: u16) {
        let (from_id, to_id) = (self.id(from), self.id(to));
        setslot(self.node(to), slot, &["IMPORTING", &from_id]);
        setslot(self.node(from), slot, &["MIGRATING", &to_id]);
    }

    /// Step 2: `MIGRATE` every key of `slot` from `from` to `to`; how many there were.
    pub fn move_keys(&self, slot: u16, from: u16, to: u16) -> usize {
        let mut con = self.node(from).connection();
        let keys: Vec<String> = redis::cmd("CLUSTER")
            .arg("GETKEYSINSLOT")
            .arg(slot)
            .arg(1000)
            .query(&mut con)
            .expect("CLUSTER GETKEYSINSLOT");
        if !keys.is_empty() {
            let _: () = redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(to)
                .arg("")
                .arg(0)
                .arg(5000)
                .arg("KEYS")
                .arg(&keys)
                .query(&mut con)
                .expect("MIGRATE");
        }
        keys.len()
    }

    /// Step 3: `slot` is `to`'s, told to every master.
    pub fn finish_migration(&self, slot: u16, to: u16) {
        let to_id = self.id(to);
        for master in self.masters() {
            setslot(master, slot, &["NODE", &to_id]);
        }
        setslot(self.node(to), slot, &["NODE", &to_id]);
    }

    fn id(&self, port: u16) -> String {
        redis::cmd("CLUSTER")
            .arg("MYID")
            .query(&mut self.node(port).connection())
            .expect("CLUSTER MYID")
    }
}

/// One cluster-enabled redis-server (`extra`: more arguments), not yet part of any cluster.
pub fn start_node(extra: &[&str]) -> Redis {
    let mut args = vec![
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        "1000",
        // Redis 7 waits 5 s before a diskless full sync, hoping for more replicas to share it.
        "--repl-diskless-sync-delay",
        "0",
    ];
    args.extend(extra);
    Redis::start_on(free_port_and_bus, &args)
}

/// The offset of a node's cluster bus port from its client port: fixed before Redis 7.0, which
/// added `--cluster-port` to choose it. Every version takes this default.
const BUS_OFFSET: u16 = 10_000;

/// A free port whose bus port (`BUS_OFFSET` above it) is free too.
fn free_port_and_bus() -> u16 {
    let free = |port: u16| std::net::TcpListener::bind(("127.0.0.1", port)).is_ok();
    (0..1000)
        .map(|_| free_port())
        .find(|port| port.checked_add(BUS_OFFSET).is_some_and(free))
        .expect("a free port with a free bus port")
}

fn setslot(node: &Redis, slot: u16, how: &[&str]) {
    let _: () = redis::cmd("CLUSTER")
        .arg("SETSLOT")
        .arg(slot)
        .arg(how)
        .query(&mut node.connection())
        .expect("CLUSTER SETSLOT");
}

/// `COMMAND SUBCOMMAND` (e.g. `CLUSTER INFO`, `INFO replication`, `ROLE`) as text.
fn info(node: &Redis, command: &str, section: &str) -> String {
    let mut cmd = redis::cmd(command);
    if !section.is_empty() {
        cmd.arg(section);
    }
    match cmd.query::<redis::Value>(&mut node.connection()) {
        Ok(redis::Value::Array(items)) => items
            .into_iter()
            .filter_map(|item| redis::from_redis_value::<String>(item).ok())
            .collect::<Vec<_>>()
            .join(" "),
        Ok(value) => redis::from_redis_value(value).unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Runs `command` to its end, which must come within `limit` and be a success.
fn run_within(command: &mut Command, limit: Duration) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("cannot run redis-cli");
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait for redis-cli") {
            assert!(status.success(), "{command:?} failed: {status}");
            return;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
