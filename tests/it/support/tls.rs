//! TLS for the tests: a CA with server and client certificates made by the openssl CLI, and
//! redis-server processes that speak TLS only.

use super::redis_server::{free_port, server_command, signal, spawn_listening, Stoppable};
use std::process::Child;

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
            certs.signed(name, ext);
        }
        certs
    }

    /// `other.crt` and `other.key`: a server certificate signed by the CA for another name
    /// (db.example.com) than the 127.0.0.1 tests connect to.
    pub fn other_name(&self) {
        self.signed(
            "other",
            "subjectAltName=DNS:db.example.com\nextendedKeyUsage=serverAuth\n",
        );
    }

    /// `NAME.key` and `NAME.crt`, signed by the CA, with the extensions `ext` (`NAME.ext`).
    fn signed(&self, name: &str, ext: &str) {
        std::fs::write(self.path(&format!("{name}.ext")), ext).unwrap();
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        let (key, csr, crt) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.crt"),
        );
        let subject = format!("/CN={name}");
        self.openssl(
            &["req"],
            &ec,
            &["-keyout", &key, "-out", &csr, "-subj", &subject],
        );
        let ext_file = format!("{name}.ext");
        self.openssl(
            &["x509", "-req"],
            &[],
            &[
                "-in",
                &csr,
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-out",
                &crt,
                "-extfile",
                &ext_file,
            ],
        );
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

/// A redis-server that speaks TLS only, with the certificates of `certs`. With
/// `require_client_cert`, it refuses clients without a certificate signed by the CA.
pub struct TlsRedis {
    pub port: u16,
    child: Option<Child>,
    _dir: tempfile::TempDir,
}

impl TlsRedis {
    pub fn start(certs: &Certs, require_client_cert: bool) -> TlsRedis {
        TlsRedis::start_with(certs, require_client_cert, &[])
    }

    /// `start` with more `redis-server` arguments (e.g. cluster mode).
    pub fn start_with(certs: &Certs, require_client_cert: bool, extra: &[&str]) -> TlsRedis {
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
                ])
                .args(extra);
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

    /// A connection for the test's own commands (the certificate is not checked).
    pub fn connection(&self) -> redis::Connection {
        redis::Client::open(format!("rediss://127.0.0.1:{}/#insecure", self.port))
            .unwrap()
            .get_connection_with_timeout(std::time::Duration::from_secs(2))
            .expect("connect to the test TLS redis")
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().expect("server is running").id() as i32
    }

    /// SIGSTOP: the port still accepts connections, but nothing answers, not even a handshake.
    pub fn stop(&self) {
        signal(self.pid(), libc::SIGSTOP);
    }

    pub fn resume(&self) {
        signal(self.pid(), libc::SIGCONT);
    }

    pub fn get(&self, key: &str) -> Option<String> {
        redis::cmd("GET")
            .arg(key)
            .query(&mut self.connection())
            .unwrap()
    }
}

impl Stoppable for TlsRedis {
    fn url(&self) -> String {
        TlsRedis::url(self)
    }

    fn stop(&self) {
        TlsRedis::stop(self);
    }

    fn resume(&self) {
        TlsRedis::resume(self);
    }

    fn get(&self, key: &str) -> Option<String> {
        TlsRedis::get(self, key)
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
