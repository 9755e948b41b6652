//! A plain server's socket (TCP or a Unix socket), reached without blocking: where the server
//! listens (`Plain`), its host name resolved and each address tried in turn until one accepts,
//! and bytes moved each way as far as the socket takes them. What the bytes mean is the wire's
//! (wire.rs).

use super::failure::WireFailure;
use redis::{ConnectionAddr, RedisConnectionInfo};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;

/// Where a plain server listens, and what a new connection must say first.
#[derive(Clone)]
pub(crate) struct Plain {
    address: Address,
    settings: RedisConnectionInfo,
}

#[derive(Clone)]
enum Address {
    Tcp(String, u16),
    Unix(std::path::PathBuf),
}

impl Plain {
    /// The server as a wire reaches it, if it can: TCP or a Unix socket spoken in RESP2. TLS and
    /// RESP3 connections stay with the redis crate's own (a thread each in a round).
    pub(crate) fn of(info: &redis::ConnectionInfo) -> Option<Plain> {
        let settings = info.redis_settings();
        if settings.protocol() != redis::ProtocolVersion::RESP2 {
            return None;
        }
        let address = match info.addr() {
            ConnectionAddr::Tcp(host, port) => Address::Tcp(host.clone(), *port),
            ConnectionAddr::Unix(path) => Address::Unix(path.clone()),
            _ => return None,
        };
        Some(Plain {
            address,
            settings: settings.clone(),
        })
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

/// A non-blocking socket to one plain server.
pub(super) struct Socket {
    stream: Stream,
    /// Still connecting (TCP): the addresses left to try after this one.
    connecting: Option<Vec<SocketAddr>>,
}

impl Socket {
    /// Starts connecting to `plain` (a Unix socket connects at once).
    pub(super) fn open(plain: &Plain) -> Result<Socket, WireFailure> {
        let (stream, connecting) = match &plain.address {
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
        Ok(Socket { stream, connecting })
    }

    /// Whether a TCP connect is still under way.
    pub(super) fn connecting(&self) -> bool {
        self.connecting.is_some()
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
                    Some(address) => {
                        self.stream = Stream::Tcp(start_connect(address)?);
                        Ok(false)
                    }
                    None => Err(WireFailure::of(&err)),
                }
            }
        }
    }

    /// Writes from the front of `out` as much as the socket takes now, and removes it.
    pub(super) fn write_from(&mut self, out: &mut Vec<u8>) -> Result<(), WireFailure> {
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

    pub(super) fn fd(&self) -> BorrowedFd<'_> {
        match &self.stream {
            Stream::Tcp(stream) => stream.as_fd(),
            Stream::Unix(stream) => stream.as_fd(),
        }
    }
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
