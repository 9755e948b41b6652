//! Real redis-server processes for the tests: started on free loopback ports in a temp dir,
//! killed by pid on drop (also when a test panics), and faults that are real: SIGSTOP, SIGKILL,
//! and a black hole that accepts connections and never answers.
use assert_cmd::Command;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

#[path = "../support/redis_server.rs"]
mod redis_server;
pub use redis_server::*;

/// The per-server timeout tests run with unless they say otherwise.
pub const TEST_TIMEOUT: &str = "400ms";

/// The key of the lock named `job`, which most tests take.
pub const KEY: &str = "redlock:job";

/// N servers, as the lock sees them.
pub struct Cluster {
    pub servers: Vec<Redis>,
}

impl Cluster {
    pub fn start(n: usize) -> Cluster {
        // Started from this thread: PR_SET_PDEATHSIG fires when the spawning *thread* exits.
        Cluster {
            servers: (0..n).map(|_| Redis::start()).collect(),
        }
    }

    pub fn urls(&self) -> String {
        self.servers
            .iter()
            .map(|s| s.url_with_password())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `redlock` with only this cluster configured, and no REDLOCK_* from the caller's env.
    pub fn redlock(&self) -> Command {
        with_timeout(Command::from_std(self.process()))
    }

    /// The same, as a `std::process::Command`, for tests that act while redlock runs or give
    /// it other standard streams.
    pub fn process(&self) -> std::process::Command {
        let mut cmd = clean_redlock();
        cmd.env("REDLOCK_SERVERS", self.urls());
        // More than the 200ms default: a loaded CI machine must not turn a slow healthy server
        // into a missing vote. Tests about timeouts pass --timeout themselves.
        cmd.env("REDLOCK_TIMEOUT", TEST_TIMEOUT);
        cmd
    }

    /// `redlock ARGS` started in the background, stdin closed and its output captured.
    pub fn spawn(&self, args: &[&str]) -> Child {
        let mut command = self.process();
        command.args(args);
        spawn_captured(command)
    }

    /// `redlock acquire NAME ARGS`, which must succeed: the token it printed.
    pub fn acquire_token(&self, name: &str, args: &[&str]) -> String {
        let output = self
            .redlock()
            .args(["acquire", name])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "acquire failed: {}",
            stderr_of(&output)
        );
        stdout_of(&output)
    }

    /// The lock's value on every server.
    pub fn values(&self, key: &str) -> Vec<Option<String>> {
        self.servers
            .iter()
            .map(|s| if s.is_running() { s.get(key) } else { None })
            .collect()
    }

    /// How many servers hold `value` at `key`.
    pub fn holding(&self, key: &str, value: &str) -> usize {
        self.values(key)
            .iter()
            .filter(|v| v.as_deref() == Some(value))
            .count()
    }
}

/// The binary under test with a clean environment.
pub fn redlock() -> Command {
    with_timeout(Command::from_std(clean_redlock()))
}

/// Starts `command` in the background, stdin closed and its output captured.
pub fn spawn_captured(mut command: std::process::Command) -> Child {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts")
}

/// The path of the built binary, for scripts that run it themselves.
pub fn redlock_path() -> PathBuf {
    assert_cmd::cargo::cargo_bin("redlock")
}

/// The binary under test with no REDLOCK_* from the caller's environment.
pub fn clean_redlock() -> std::process::Command {
    let mut cmd = std::process::Command::new(redlock_path());
    for (name, _) in std::env::vars() {
        if name.starts_with("REDLOCK_") {
            cmd.env_remove(name);
        }
    }
    cmd
}

/// A hung redlock fails its test instead of hanging the suite.
fn with_timeout(mut cmd: Command) -> Command {
    cmd.timeout(Duration::from_secs(60));
    cmd
}

/// A port that accepts TCP connections and never reads or answers: a black-holed server.
pub struct BlackHole {
    listener: TcpListener,
}

impl BlackHole {
    pub fn start() -> BlackHole {
        BlackHole {
            listener: TcpListener::bind("127.0.0.1:0").unwrap(),
        }
    }

    pub fn url(&self) -> String {
        format!(
            "redis://127.0.0.1:{}",
            self.listener.local_addr().unwrap().port()
        )
    }
}

/// Waits for `condition` to hold, polling; panics with `what` after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if condition() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("timed out after {limit:?} waiting for {what}");
}

pub fn stdout_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

pub fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).trim().to_string()
}

/// True if a TCP connection to `port` is refused (nothing listening).
pub fn port_closed(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_err()
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, made by the openssl CLI
/// in a temp dir (P-256 keys: quick to make).
pub struct Certs {
    pub dir: tempfile::TempDir,
}

impl Certs {
    pub fn generate() -> Certs {
        let certs = Certs {
            dir: tempfile::tempdir().expect("temp dir"),
        };
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        certs.openssl(
            &["req", "-x509"],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.crt",
                "-days",
                "2",
                "-subj",
                "/CN=redlock test CA",
            ],
        );
        for (name, ext) in [
            (
                "server",
                "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
            ),
            ("client", "extendedKeyUsage=clientAuth\n"),
        ] {
            std::fs::write(certs.path(&format!("{name}.ext")), ext).unwrap();
            certs.openssl(
                &["req"],
                &ec,
                &[
                    "-keyout",
                    &format!("{name}.key"),
                    "-out",
                    &format!("{name}.csr"),
                    "-subj",
                    &format!("/CN={name}"),
                ],
            );
            certs.openssl(
                &["x509", "-req"],
                &[],
                &[
                    "-in",
                    &format!("{name}.csr"),
                    "-CA",
                    "ca.crt",
                    "-CAkey",
                    "ca.key",
                    "-CAcreateserial",
                    "-days",
                    "2",
                    "-out",
                    &format!("{name}.crt"),
                    "-extfile",
                    &format!("{name}.ext"),
                ],
            );
        }
        certs
    }

    fn openssl(&self, head: &[&str], key: &[&str], tail: &[&str]) {
        let output = std::process::Command::new("openssl")
            .args(head)
            .args(key)
            .args(tail)
            .current_dir(self.dir.path())
            .output()
            .expect("cannot run openssl: install it (Debian/Ubuntu: apt-get install openssl)");
        assert!(
            output.status.success(),
            "openssl {head:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// The path of `ca.crt`, `server.key`, `client.crt`… as a string for argv.
    pub fn path(&self, file: &str) -> String {
        self.dir.path().join(file).display().to_string()
    }
}

/// Runs `command` and waits until it listens on `port`; `None` (nothing left running) if it
/// exited first, e.g. because another process took the port. Listening means ready: redis binds
/// its ports after loading (nothing to load here).
pub fn spawn_listening(mut command: std::process::Command, port: u16) -> Option<Child> {
    let mut child = command.spawn().expect("cannot run redis-server");
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

/// A redis-server that speaks TLS only, with the certificates of `certs`. With
/// `require_client_cert`, it refuses clients without a certificate signed by the CA.
pub struct TlsRedis {
    pub port: u16,
    child: Option<Child>,
    _dir: tempfile::TempDir,
}

impl TlsRedis {
    pub fn start(certs: &Certs, require_client_cert: bool) -> TlsRedis {
        for _ in 0..20 {
            let port = free_port();
            let dir = tempfile::tempdir().expect("temp dir");
            let mut command = server_command(dir.path());
            command
                .args(["--port", "0", "--tls-port", &port.to_string()])
                .args(["--tls-cert-file", &certs.path("server.crt")])
                .args(["--tls-key-file", &certs.path("server.key")])
                .args(["--tls-ca-cert-file", &certs.path("ca.crt")])
                .args([
                    "--tls-auth-clients",
                    if require_client_cert { "yes" } else { "no" },
                ]);
            if let Some(child) = spawn_listening(command, port) {
                return TlsRedis {
                    port,
                    child: Some(child),
                    _dir: dir,
                };
            }
        }
        panic!("could not start a TLS redis-server (is redis-server built with TLS?)");
    }

    pub fn url(&self) -> String {
        format!("rediss://127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().expect("server is running").id() as i32
    }

    pub fn stop(&self) {
        signal(self.pid(), libc::SIGSTOP);
    }
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            signal(child.id() as i32, libc::SIGCONT);
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
