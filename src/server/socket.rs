//! A server's socket (TCP, TCP with TLS, or a Unix socket), reached without blocking: where the
//! server listens and how (`Reach`), its host name resolved and each address tried in turn
//! until one accepts, and bytes moved each way as far as the socket takes them. What the bytes
//! mean is the wire's (wire.rs).
//!
//! **TLS** (`rediss://`) is a layer over the same non-blocking TCP stream: rustls's own state
//! machine (`rustls::ClientConnection`), configured once per server (tls.rs), which the wire
//! drives as it drives a plain socket, so that a round over TLS servers is exactly a plain
//! round. What it changes, and what it does not:
//! - **The handshake** runs inside the same flow: once TCP connects, the ClientHello goes out
//!   and the wire's first bytes (the set-up and the first request) are handed to the TLS layer,
//!   which holds them until the handshake lets it send data and then sends them with the
//!   client's last handshake flight (TLS 1.3: right behind its Finished, in one write), as the
//!   blocking connection does (blocking.rs). A handshake that fails is the connection
//!   failing, in rustls's words (`invalid peer certificate: UnknownIssuer`, `received fatal
//!   alert: CertificateRequired`…), which are the words the blocking connection's error
//!   carries, so diagnosis.rs tells the same misconfiguration from them.
//! - **What is still to be written** (`wants_write`) is the TLS layer's records, not our
//!   bytes: poll(2) waits for POLLOUT while it has some. Bytes held for a handshake still
//!   waiting on the server are not "to be written": like a reply, they wait on the server, so
//!   a stopped TLS server keeps a round waiting no more than a stopped plain one does, and our
//!   exit only briefly (see "The end"). Were we to go before such a server answers its
//!   handshake, it never gets what we held for it: a request lost on the way, which Redlock
//!   tolerates (a grant never counted, a release or extension that leaves our token on that
//!   minority until its ttl: see lock/nodes/mod.rs).
//! - **Reading**: poll(2) wakes for bytes on the socket, not for plaintext the TLS layer has
//!   already decrypted, so every read takes everything the socket has (`read_tls` until it
//!   would block), decrypts every whole record in (`process_new_packets`), and drains all the
//!   plaintext (`reader()`) each time: nothing decrypted is ever left behind for a wake-up that
//!   will not come. A record only partly arrived stays in the TLS layer until its rest does
//!   (and poll(2) wakes for that).
//! - **Order** is unchanged: one TLS stream carries our requests in the order the wire queued
//!   them and the replies in the order the server sends them, which is all the wire's
//!   bookkeeping of late replies (and lock/nodes/mod.rs's argument) relies on.
//! - **The end**: a server's close_notify, or its TCP end without one (a Redis server that
//!   drops a client), is the server closing the connection, as a plain socket's end is. We
//!   close ours without a close_notify, as a plain socket closes. But closing is riskier: the
//!   moment a TLS 1.3 server has read our last handshake message, before it reads the request
//!   that came with it, it sends us its session tickets; arriving at a socket we closed, they
//!   are answered with a reset, and a reset makes the server's system discard what the server
//!   had not read yet: our request. So before we go, a TLS connection that no reply has come
//!   back on yet is waited for (the wire's `unconfirmed`, lock/nodes/behind.rs's `finish`):
//!   for that reply if its server answered the handshake, briefly if not. A server resumed
//!   after we went reads our records one at a time and answers each, so a reset can cut what
//!   follows the first off there too: a liveness cost only.

use super::client::Tls;
use super::failure::WireFailure;
use redis::{ConnectionAddr, RedisConnectionInfo};
use rustls::pki_types::ServerName;
use rustls::ClientConnection;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;

/// How a wire reaches a server: where it listens, with TLS or not, and what a new connection
/// must say first.
#[derive(Clone)]
pub(crate) struct Reach {
    address: Address,
    /// `rediss://`: the TLS configuration its connections use (tls.rs).
    tls: Option<Arc<rustls::ClientConfig>>,
    settings: RedisConnectionInfo,
}

#[derive(Clone)]
enum Address {
    Tcp(String, u16),
    Unix(std::path::PathBuf),
}

impl Reach {
    /// The single server `info` names as a wire reaches it, if it can: TCP, TLS (`rediss://`,
    /// configured from `tls` by tls.rs) or a Unix socket, spoken in RESP2. RESP3 connections stay
    /// with the redis crate's own (a relay's, in a round). An error says why the TLS files
    /// cannot serve.
    pub(crate) fn of(info: &redis::ConnectionInfo, tls: &Tls) -> Result<Option<Reach>, String> {
        let settings = info.redis_settings();
        if settings.protocol() != redis::ProtocolVersion::RESP2 {
            return Ok(None);
        }
        let (address, tls) = match info.addr() {
            ConnectionAddr::Tcp(host, port) => (Address::Tcp(host.clone(), *port), None),
            ConnectionAddr::TcpTls {
                host,
                port,
                insecure,
                ..
            } => (
                Address::Tcp(host.clone(), *port),
                Some(super::tls::config(tls, *insecure)?),
            ),
            ConnectionAddr::Unix(path) => (Address::Unix(path.clone()), None),
            _ => return Ok(None),
        };
        Ok(Some(Reach {
            address,
            tls,
            settings: settings.clone(),
        }))
    }

    /// The database, user and password a new connection sets up.
    pub(super) fn settings(&self) -> &RedisConnectionInfo {
        &self.settings
    }
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

/// A non-blocking socket to one server.
pub(super) struct Socket {
    stream: Stream,
    /// Still connecting (TCP): the addresses left to try after this one.
    connecting: Option<Vec<SocketAddr>>,
    /// TLS over the TCP stream (see the module comment).
    tls: Option<Box<ClientConnection>>,
}

impl Socket {
    /// Starts connecting to `reach` (a Unix socket connects at once).
    pub(super) fn open(reach: &Reach) -> Result<Socket, WireFailure> {
        let (stream, connecting) = match &reach.address {
            Address::Unix(path) => {
                let stream = UnixStream::connect(path).map_err(|e| WireFailure::of(&e))?;
                stream
                    .set_nonblocking(true)
                    .map_err(|e| WireFailure::of(&e))?;
                (Stream::Unix(stream), None)
            }
            Address::Tcp(host, port) => {
                // Host names are resolved here, synchronously: a round trip to the resolver
                // before the round, bounded by the system's resolver settings.
                let mut addresses: Vec<SocketAddr> = (host.as_str(), *port)
                    .to_socket_addrs()
                    .map_err(|e| WireFailure::new(e.kind(), format!("cannot resolve {host}: {e}")))?
                    .collect();
                addresses.reverse();
                let first = addresses.pop().ok_or_else(|| {
                    WireFailure::new(io::ErrorKind::NotFound, format!("{host} has no address"))
                })?;
                (Stream::Tcp(start_connect(first)?), Some(addresses))
            }
        };
        let tls = match (&reach.tls, &reach.address) {
            (Some(config), Address::Tcp(host, _)) => Some(Box::new(tls_client(config, host)?)),
            _ => None,
        };
        Ok(Socket {
            stream,
            connecting,
            tls,
        })
    }

    /// Whether a TCP connect is still under way.
    pub(super) fn connecting(&self) -> bool {
        self.connecting.is_some()
    }

    /// Whether a TLS handshake is under way.
    pub(super) fn handshaking(&self) -> bool {
        self.tls.as_ref().is_some_and(|tls| tls.is_handshaking())
    }

    /// Whether it speaks TLS.
    pub(super) fn tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Whether the TLS layer has records to write (its handshake's, or our data's).
    pub(super) fn wants_write(&self) -> bool {
        self.tls.as_ref().is_some_and(|tls| tls.wants_write())
    }

    /// Whether the connection is made: a TCP connect under way is looked at, and moves on to
    /// the next address after a refusal.
    pub(super) fn connected(&mut self) -> Result<bool, WireFailure> {
        if self.connecting.is_none() {
            return Ok(true);
        }
        let Stream::Tcp(stream) = &self.stream else {
            self.connecting = None;
            return Ok(true);
        };
        let outcome = match rustix::net::sockopt::socket_error(stream) {
            Ok(outcome) => outcome,
            Err(errno) => Err(errno),
        };
        match outcome {
            Ok(()) => match stream.peer_addr() {
                Ok(_) => {
                    self.connecting = None;
                    let _ = stream.set_nodelay(true);
                    Ok(true)
                }
                // Not connected yet: poll said writable only because it was asked early.
                Err(_) => Ok(false),
            },
            Err(errno) => {
                let err = io::Error::from(errno);
                let next = self.connecting.as_mut().and_then(Vec::pop);
                match next {
                    // The TLS layer has sent nothing yet: it serves the next address as it is.
                    Some(address) => {
                        self.stream = Stream::Tcp(start_connect(address)?);
                        Ok(false)
                    }
                    None => Err(WireFailure::of(&err)),
                }
            }
        }
    }

    /// Writes from the front of `out` as much as the socket takes now, and removes it. Over
    /// TLS, all of `out` goes to the TLS layer (which holds it while its handshake cannot send
    /// data yet), and its records are written as far as the socket takes them.
    pub(super) fn write_from(&mut self, out: &mut Vec<u8>) -> Result<(), WireFailure> {
        if let Some(tls) = &mut self.tls {
            if !out.is_empty() {
                // No buffer limit (`tls_client`): the layer takes it all.
                tls.writer()
                    .write_all(out)
                    .map_err(|e| WireFailure::of(&e))?;
                out.clear();
            }
            return self.flush_tls();
        }
        while !out.is_empty() {
            let written = match &mut self.stream {
                Stream::Tcp(stream) => stream.write(out),
                Stream::Unix(stream) => stream.write(out),
            };
            match written {
                Ok(0) => return Err(WireFailure::new(io::ErrorKind::WriteZero, "write failed")),
                Ok(written) => {
                    out.drain(..written);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(WireFailure::of(&e)),
            }
        }
        Ok(())
    }

    /// Appends to `input` everything there is to read now; true when the server closed the
    /// connection (after what it sent before closing).
    pub(super) fn read_into(&mut self, input: &mut Vec<u8>) -> Result<bool, WireFailure> {
        if self.tls.is_some() {
            return self.read_tls_into(input);
        }
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let read = match &mut self.stream {
                Stream::Tcp(stream) => stream.read(&mut chunk),
                Stream::Unix(stream) => stream.read(&mut chunk),
            };
            match read {
                Ok(0) => return Ok(true),
                Ok(read) => input.extend_from_slice(&chunk[..read]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(WireFailure::of(&e)),
            }
        }
    }

    /// `read_into` over TLS: every byte the socket has, every whole record in it decrypted,
    /// and all the plaintext taken (see the module comment); then whatever the TLS layer now
    /// has to say (the handshake's next flight, with the data it held) is written.
    fn read_tls_into(&mut self, input: &mut Vec<u8>) -> Result<bool, WireFailure> {
        let (Some(tls), Stream::Tcp(stream)) = (&mut self.tls, &mut self.stream) else {
            unreachable!("TLS runs over TCP only");
        };
        let mut chunk = [0u8; 16 * 1024];
        let mut closed = false;
        loop {
            let ended = match tls.read_tls(stream) {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(WireFailure::of(&e)),
            };
            if let Err(err) = tls.process_new_packets() {
                // The alert that tells the server why, if it can go now; the error is ours.
                let _ = tls.write_tls(stream);
                return Err(WireFailure::new(
                    io::ErrorKind::InvalidData,
                    err.to_string(),
                ));
            }
            loop {
                match tls.reader().read(&mut chunk) {
                    Ok(0) => {
                        closed = true;
                        break;
                    }
                    Ok(read) => input.extend_from_slice(&chunk[..read]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    // The end of TCP without a close_notify: a server that dropped us.
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                        closed = true;
                        break;
                    }
                    Err(e) => return Err(WireFailure::of(&e)),
                }
            }
            if ended || closed {
                closed = true;
                break;
            }
        }
        self.flush_tls()?;
        Ok(closed)
    }

    /// Writes the TLS layer's records as far as the socket takes them.
    fn flush_tls(&mut self) -> Result<(), WireFailure> {
        let (Some(tls), Stream::Tcp(stream)) = (&mut self.tls, &mut self.stream) else {
            return Ok(());
        };
        while tls.wants_write() {
            match tls.write_tls(stream) {
                Ok(0) => return Err(WireFailure::new(io::ErrorKind::WriteZero, "write failed")),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(WireFailure::of(&e)),
            }
        }
        Ok(())
    }

    pub(super) fn fd(&self) -> BorrowedFd<'_> {
        match &self.stream {
            Stream::Tcp(stream) => stream.as_fd(),
            Stream::Unix(stream) => stream.as_fd(),
        }
    }
}

/// A TLS client for the server named `host` (the URL's host, as the redis crate names it: a
/// DNS name, or an IP address checked against the certificate's IP names), its ClientHello
/// queued to go out once TCP connects.
fn tls_client(
    config: &Arc<rustls::ClientConfig>,
    host: &str,
) -> Result<ClientConnection, WireFailure> {
    let name = ServerName::try_from(host)
        .map_err(|e| WireFailure::new(io::ErrorKind::InvalidInput, e.to_string()))?
        .to_owned();
    let mut tls = ClientConnection::new(Arc::clone(config), name)
        .map_err(|e| WireFailure::new(io::ErrorKind::InvalidData, e.to_string()))?;
    // What the wire queues is taken whole, as a plain wire's `out` is (unbounded too).
    tls.set_buffer_limit(None);
    Ok(tls)
}

/// A TCP socket that has started connecting to `address` without waiting for it.
fn start_connect(address: SocketAddr) -> Result<TcpStream, WireFailure> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType};
    let family = if address.is_ipv4() {
        AddressFamily::INET
    } else {
        AddressFamily::INET6
    };
    let socket = rustix::net::socket_with(
        family,
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )
    .map_err(|e| WireFailure::of(&e.into()))?;
    match rustix::net::connect(&socket, &address) {
        Ok(()) | Err(rustix::io::Errno::INPROGRESS) => Ok(TcpStream::from(socket)),
        Err(errno) => Err(WireFailure::of(&errno.into())),
    }
}
