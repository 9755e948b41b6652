//! Sentinel-managed groups for the tests: per group one master, one replica and three sentinels
//! (`redis-server FILE --sentinel`, with the config file it must be able to rewrite), all on
//! free loopback ports, killed by pid on drop. Short `down-after-milliseconds` and
//! `failover-timeout` keep failovers quick.

use super::redis_server::{free_port, server_command_from, signal, spawn_listening, Redis};
use super::wait_for;
use std::collections::HashMap;
use std::process::Child;
use std::time::Duration;

/// What a test may wait for a group to settle (sync, discovery, a failover).
const SETTLE: Duration = Duration::from_secs(20);

/// One `redis-server --sentinel` process.
pub struct Sentinel {
    pub port: u16,
    child: Option<Child>,
    _dir: tempfile::TempDir,
}

impl Sentinel {
    /// A sentinel watching `monitor` (master name, master port), or nothing. `extra` lines go
    /// into its config file (e.g. `requirepass x`, `sentinel auth-pass NAME y`), after the
    /// `port` line, with `{port}` replaced by the port chosen (`port 0`, `tls-port {port}`).
    pub fn start(monitor: Option<(&str, u16)>, extra: &[String]) -> Sentinel {
        for _ in 0..20 {
            let port = free_port();
            let dir = tempfile::tempdir().expect("temp dir");
            let mut config = format!("port {port}\n");
            if let Some((name, master)) = monitor {
                config.push_str(&format!(
                    "sentinel monitor {name} 127.0.0.1 {master} 2\n\
                     sentinel down-after-milliseconds {name} 1000\n\
                     sentinel failover-timeout {name} 2000\n"
                ));
            }
            for line in extra {
                config.push_str(&line.replace("{port}", &port.to_string()));
                config.push('\n');
            }
            let file = dir.path().join("sentinel.conf");
            std::fs::write(&file, config).unwrap();
            let mut command = server_command_from(Some(&file), dir.path());
            command.arg("--sentinel");
            if let Some(child) = spawn_listening(command, port) {
                return Sentinel {
                    port,
                    child: Some(child),
                    _dir: dir,
                };
            }
        }
        panic!("could not start a sentinel on a free port");
    }

    pub fn connection(&self, password: Option<&str>) -> redis::Connection {
        let url = match password {
            Some(pw) => format!("redis://:{pw}@127.0.0.1:{}", self.port),
            None => format!("redis://127.0.0.1:{}", self.port),
        };
        redis::Client::open(url)
            .unwrap()
            .get_connection_with_timeout(Duration::from_secs(2))
            .expect("connect to test sentinel")
    }

    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            signal(child.id() as i32, libc::SIGCONT);
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One Sentinel-managed group: master, replica and three sentinels.
pub struct Group {
    pub name: String,
    /// The two data servers: the first started as the master, the second as its replica.
    pub nodes: [Redis; 2],
    pub sentinels: Vec<Sentinel>,
    /// The sentinels' `requirepass`, if any.
    pub sentinel_password: Option<String>,
}

/// Passwords for a group: the data servers' and the sentinels'.
#[derive(Default, Clone, Copy)]
pub struct Passwords<'a> {
    pub master: Option<&'a str>,
    pub sentinel: Option<&'a str>,
}

impl Group {
    /// Starts `count` groups named g1, g2…, side by side: every phase (masters, replicas, sync,
    /// sentinels, discovery) overlaps across groups, so three groups take about as long as one.
    /// Processes are spawned from the calling thread (their parent-death signal is per thread).
    pub fn start_many(count: usize, passwords: Passwords) -> Vec<Group> {
        Group::start_many_monitoring(count, passwords, |master| master.port)
    }

    /// `start_many`, with the sentinels watching each master at the port `monitored` gives for
    /// it (a proxy's in front of it, say): that is the address they give clients.
    pub fn start_many_monitoring(
        count: usize,
        passwords: Passwords,
        mut monitored: impl FnMut(&Redis) -> u16,
    ) -> Vec<Group> {
        let auth: Vec<&str> = passwords
            .master
            .map_or(vec![], |pw| vec!["--requirepass", pw, "--masterauth", pw]);
        // Redis 7 waits 5 s before a diskless full sync, hoping for more replicas to share it.
        let mut master_args = vec!["--repl-diskless-sync-delay", "0"];
        master_args.extend(&auth);
        let masters: Vec<Redis> = (0..count)
            .map(|_| Redis::start_with(&master_args))
            .collect();
        let replicas: Vec<Redis> = masters
            .iter()
            .map(|master| {
                let port = master.port.to_string();
                let mut args = vec!["--replicaof", "127.0.0.1", &port];
                args.extend(&auth);
                Redis::start_with(&args)
            })
            .collect();
        for master in &masters {
            wait_for("the replica to sync", SETTLE, || {
                info(master, "replication").contains("state=online")
            });
        }
        let mut groups: Vec<Group> = masters
            .into_iter()
            .zip(replicas)
            .enumerate()
            .map(|(index, (master, replica))| {
                let name = format!("g{}", index + 1);
                let mut extra = Vec::new();
                if let Some(pw) = passwords.master {
                    extra.push(format!("sentinel auth-pass {name} {pw}"));
                }
                if let Some(pw) = passwords.sentinel {
                    // Sentinels that require a password must use it with each other too: a
                    // Sentinel sends its own `requirepass` to the others, in every version
                    // (`sentinel sentinel-pass`, to send another, came in 6.2).
                    extra.push(format!("requirepass {pw}"));
                }
                let port = monitored(&master);
                let sentinels = (0..3)
                    .map(|_| Sentinel::start(Some((&name, port)), &extra))
                    .collect();
                Group {
                    name,
                    nodes: [master, replica],
                    sentinels,
                    sentinel_password: passwords.sentinel.map(str::to_string),
                }
            })
            .collect();
        for group in &mut groups {
            group.wait_settled();
        }
        groups
    }

    /// Every sentinel knows the replica (so a failover has a candidate) and the two other
    /// sentinels (so a failover's new configuration reaches all of them).
    fn wait_settled(&self) {
        for sentinel in &self.sentinels {
            let mut con = sentinel.connection(self.sentinel_password.as_deref());
            wait_for("the sentinels to discover the group", SETTLE, || {
                let replicas: Vec<HashMap<String, String>> = redis::cmd("SENTINEL")
                    .arg("replicas")
                    .arg(&self.name)
                    .query(&mut con)
                    .unwrap_or_default();
                let peers: Vec<HashMap<String, String>> = redis::cmd("SENTINEL")
                    .arg("sentinels")
                    .arg(&self.name)
                    .query(&mut con)
                    .unwrap_or_default();
                peers.len() == 2
                    && replicas.iter().any(|r| {
                        r.get("flags").map(String::as_str) == Some("slave")
                            && r.get("master-link-status").map(String::as_str) == Some("ok")
                    })
            });
        }
    }

    /// `redis+sentinel://` with the three sentinels and the master name, no password.
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self
            .sentinels
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect();
        format!("redis+sentinel://{}/{}", hosts.join(","), self.name)
    }

    /// The master's port as `sentinel` reports it.
    pub fn master_port_seen_by(&self, sentinel: &Sentinel) -> Option<u16> {
        let answer: Option<(String, u16)> = redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(&self.name)
            .query(&mut sentinel.connection(self.sentinel_password.as_deref()))
            .ok()
            .flatten();
        answer.map(|(_, port)| port)
    }

    /// The data server on `port`.
    pub fn node(&self, port: u16) -> &Redis {
        self.nodes
            .iter()
            .find(|n| n.port == port)
            .expect("a node of this group")
    }

    /// SIGKILL for the data server on `port`.
    pub fn kill_node(&mut self, port: u16) {
        let node = self.nodes.iter_mut().find(|n| n.port == port);
        node.expect("a node of this group").kill();
    }

    /// The current master, as the first sentinel reports it.
    pub fn master(&self) -> &Redis {
        let port = self
            .master_port_seen_by(&self.sentinels[0])
            .expect("a master");
        self.node(port)
    }

    /// The node that is not the current master.
    pub fn replica(&self) -> &Redis {
        let master = self.master().port;
        self.nodes
            .iter()
            .find(|n| n.port != master)
            .expect("a replica")
    }

    /// Starts `SENTINEL FAILOVER` and returns the port of the master-to-be.
    pub fn start_failover(&self) -> u16 {
        let next = self.replica().port;
        let _: () = redis::cmd("SENTINEL")
            .arg("failover")
            .arg(&self.name)
            .query(&mut self.sentinels[0].connection(self.sentinel_password.as_deref()))
            .expect("SENTINEL FAILOVER");
        next
    }

    /// Waits until every sentinel names `port` as the master.
    pub fn wait_master(&self, port: u16) {
        wait_for("every sentinel to name the new master", SETTLE, || {
            self.sentinels
                .iter()
                .all(|s| self.master_port_seen_by(s) == Some(port))
        });
    }
}

fn info(server: &Redis, section: &str) -> String {
    redis::cmd("INFO")
        .arg(section)
        .query(&mut server.connection())
        .unwrap_or_default()
}
