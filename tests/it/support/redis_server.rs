//! One redis-server process on a free loopback port, killed by pid on drop, and the command line
//! every test server starts from, with the server binary it runs (`redis-server`, or the one
//! `REDLOCK_TEST_SERVER` names): shared by the integration tests (`tests/it/support/`) and the
//! benchmark (`bench/redlock.rs`, which includes this file with `#[path]`).

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// One redis-server we started.
pub struct Redis {
    pub port: u16,
    child: Option<Child>,
    dir: tempfile::TempDir,
    extra: Vec<String>,
    password: Option<String>,
}

impl Redis {
    pub fn start() -> Redis {
        Redis::start_with(&[])
    }

    /// Starts a server with extra `redis-server` arguments (e.g. `--requirepass x`).
    pub fn start_with(extra: &[&str]) -> Redis {
        Redis::start_on(free_port, extra)
    }

    /// `start_with` on a port that `pick` chooses; if another process takes it before the
    /// server binds it, `pick` is asked again.
    pub fn start_on(pick: fn() -> u16, extra: &[&str]) -> Redis {
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let password = extra
            .iter()
            .position(|a| a == "--requirepass")
            .map(|i| extra[i + 1].clone());
        for _ in 0..20 {
            let mut redis = Redis {
                port: pick(),
                child: None,
                dir: tempfile::tempdir().expect("temp dir"),
                extra: extra.clone(),
                password: password.clone(),
            };
            // False when another process took the port between our probe and the server's bind.
            if redis.spawn() {
                return redis;
            }
        }
        panic!(
            "could not start {} {extra:?} on a free port (does this version take these options?)",
            redis_server().display()
        );
    }

    /// Starts the process on `self.port` and waits until it answers PING. False if it exited.
    fn spawn(&mut self) -> bool {
        let mut command = server_command(self.dir.path());
        command
            .args(["--port", &self.port.to_string()])
            .args(&self.extra);
        let child = command.spawn().unwrap_or_else(|e| {
            panic!(
                "cannot run {} ({e}): install redis-server (Debian/Ubuntu: apt-get install \
                 redis-server) or name a server binary in REDLOCK_TEST_SERVER",
                redis_server().display()
            )
        });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(_)) = child.try_wait() {
                    self.child = None;
                    return false;
                }
            }
            if self.ping() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!(
            "redis-server on port {} did not answer within 10s",
            self.port
        );
    }

    fn ping(&self) -> bool {
        let Ok(client) = redis::Client::open(self.url_with_password()) else {
            return false;
        };
        let Ok(mut con) = client.get_connection_with_timeout(Duration::from_millis(200)) else {
            return false;
        };
        redis::cmd("PING").query::<String>(&mut con).is_ok()
    }

    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().expect("server is running").id() as i32
    }

    /// The URL without credentials.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The URL with the password, if the server has one.
    pub fn url_with_password(&self) -> String {
        match &self.password {
            Some(pw) => format!("redis://:{pw}@127.0.0.1:{}", self.port),
            None => self.url(),
        }
    }

    pub fn connection(&self) -> redis::Connection {
        redis::Client::open(self.url_with_password())
            .unwrap()
            .get_connection_with_timeout(Duration::from_secs(2))
            .expect("connect to test redis")
    }

    pub fn get(&self, key: &str) -> Option<String> {
        redis::cmd("GET")
            .arg(key)
            .query(&mut self.connection())
            .unwrap()
    }

    pub fn pttl(&self, key: &str) -> i64 {
        redis::cmd("PTTL")
            .arg(key)
            .query(&mut self.connection())
            .unwrap()
    }

    pub fn set(&self, key: &str, value: &str) {
        let _: () = redis::cmd("SET")
            .arg(key)
            .arg(value)
            .query(&mut self.connection())
            .unwrap();
    }

    /// Every key on the server but the listing's index of the keys under a prefix, which every
    /// grant writes and which stays by design (`is_index`; its own tests read it by name).
    pub fn keys(&self) -> Vec<String> {
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg("*")
            .query(&mut self.connection())
            .unwrap();
        keys.into_iter().filter(|key| !is_index(key)).collect()
    }

    /// How many times each command ran since the server started or `reset_stats`, from
    /// `INFO commandstats` (`evalsha`, `set`, `publish`…; this harness's own calls included).
    pub fn command_calls(&self) -> std::collections::BTreeMap<String, u64> {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut self.connection())
            .unwrap();
        info.lines()
            .filter_map(|line| {
                let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
                let calls = stats.strip_prefix("calls=")?.split(',').next()?;
                Some((name.to_string(), calls.parse().ok()?))
            })
            .collect()
    }

    /// Zeroes the counters behind `command_calls`.
    pub fn reset_stats(&self) {
        let _: () = redis::cmd("CONFIG")
            .arg("RESETSTAT")
            .query(&mut self.connection())
            .unwrap();
    }

    /// How many connections the server has accepted since it started (`total_connections_received`
    /// in `INFO stats`), read on `via`, a connection the caller keeps across readings: reading
    /// opens none, so two readings differ by the connections others made. Unlike counting
    /// commands, this does not depend on what a client library sends on connecting (the redis
    /// crate's `CLIENT SETINFO`, which some server versions count and others do not).
    pub fn connections_received(via: &mut redis::Connection) -> u64 {
        let info: String = redis::cmd("INFO").arg("stats").query(via).unwrap();
        info.lines()
            .find_map(|line| line.strip_prefix("total_connections_received:"))
            .and_then(|n| n.trim().parse().ok())
            .expect("INFO stats has total_connections_received")
    }

    /// SIGSTOP: the port still accepts connections, but nothing answers.
    pub fn stop(&self) {
        signal(self.pid(), libc::SIGSTOP);
    }

    pub fn resume(&self) {
        signal(self.pid(), libc::SIGCONT);
    }

    /// Fills the listen queue of a stopped server: connects until a connection is not made
    /// within a second, and keeps them all, so that the queue stays full until it runs again.
    /// Then the kernel drops every handshake to it, as once a crowd of short-lived clients has
    /// filled a stopped server's queue (511 by default), or as for a host that is down.
    pub fn fill_listen_queue(&self) -> Vec<TcpStream> {
        let address = std::net::SocketAddr::from(([127, 0, 0, 1], self.port));
        let mut queued = Vec::new();
        while let Ok(stream) = TcpStream::connect_timeout(&address, Duration::from_secs(1)) {
            queued.push(stream);
            assert!(queued.len() < 100_000, "port {} is not stopped", self.port);
        }
        queued
    }

    /// SIGKILL and reap: the port refuses connections.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kill, then start again on the same port with an empty dataset (persistence is off): a
    /// server that lost everything it knew.
    pub fn restart(&mut self) {
        self.kill();
        assert!(
            self.spawn(),
            "redis-server could not restart on port {}",
            self.port
        );
    }
}

/// A server a test stops (SIGSTOP) and resumes, and reads a key from, whatever it speaks: what
/// the tests of a stopped minority ask of a plain server and of a TLS one alike.
pub trait Stoppable {
    /// Its URL, as redlock is given it (with its password, if any).
    fn url(&self) -> String;
    fn stop(&self);
    fn resume(&self);
    fn get(&self, key: &str) -> Option<String>;
}

impl Stoppable for Redis {
    fn url(&self) -> String {
        self.url_with_password()
    }

    fn stop(&self) {
        Redis::stop(self);
    }

    fn resume(&self) {
        Redis::resume(self);
    }

    fn get(&self, key: &str) -> Option<String> {
        Redis::get(self, key)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_ref() {
            signal(child.id() as i32, libc::SIGCONT);
        }
        self.kill();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// True if a TCP connection to `port` is refused (nothing listening).
pub fn port_closed(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_err()
}

/// Runs `command` and waits until it listens on `port`; `None` (nothing left running) if it
/// exited first, e.g. because another process took the port. Listening means ready: redis binds
/// its ports after loading (nothing to load here).
pub fn spawn_listening(mut command: std::process::Command, port: u16) -> Option<Child> {
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {} ({e})", redis_server().display()));
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if !port_closed(port) {
            return Some(child);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Sends `signal` to the process `pid` (a negative pid: to that process group).
pub fn signal(pid: i32, signal: i32) {
    let signal = nix::sys::signal::Signal::try_from(signal).expect("a valid signal number");
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal);
}

/// A redis-server command with what every test server shares: loopback only, nothing on disk
/// but `dir`, quiet, and killed with the test process if that dies without running Drop.
pub fn server_command(dir: &Path) -> std::process::Command {
    server_command_from(None, dir)
}

/// `server_command` reading `config` first (redis-server wants the file before any option).
pub fn server_command_from(config: Option<&Path>, dir: &Path) -> std::process::Command {
    let mut command = std::process::Command::new(redis_server());
    command
        .args(config)
        .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .args(["--daemonize", "no", "--loglevel", "warning"])
        .arg("--dir")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: the closure runs between fork and exec and makes one async-signal-safe call.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    command
}

/// The server binary every test server runs (plain, cluster node or Sentinel): `redis-server`
/// on `PATH`, or the binary `REDLOCK_TEST_SERVER` names if set and not empty (another Redis
/// version, or Valkey's `valkey-server`), so that the whole suite runs against any server
/// version unchanged.
pub fn redis_server() -> &'static Path {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        std::env::var_os("REDLOCK_TEST_SERVER")
            .filter(|path| !path.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("redis-server"))
    })
}

/// Whether `key` is the listing's index of the keys under a prefix (`<prefix>␟index`).
pub fn is_index(key: &str) -> bool {
    key.ends_with("\u{1f}index")
}
