//! A blocking connection, the redis crate's: what a relay's thread (relay/) waits on for a
//! Sentinel group's master and its sentinels, a cluster's nodes and a RESP3 server, and what
//! `doctor` and the other one-off connections use
//! (`Server::connect_near`). It is opened and used the way a wire is (wire.rs), so that each
//! costs what a wire costs in round trips:
//! - its set-up (AUTH, SELECT, and a Sentinel group's master's ROLE: setup.rs) goes out in the
//!   same write as its first request, not a round trip ahead of it as the crate would send it;
//! - a script's first run on it carries the script's source (`EVAL`, scripts.rs), so a server
//!   that never ran it (new, or restarted) costs no `NOSCRIPT` and second round trip;
//! - it sets TCP_NODELAY, which the crate does not by default. Over TLS this is what lets the
//!   first request go with the handshake's last flight. rustls 0.23 allows application data as
//!   soon as the client has read the server's Finished (TLS 1.3: the client's own Finished is
//!   then queued, and data written before that is buffered and sent right behind it), but the
//!   crate's stream writes the Finished and the request in two writes; with Nagle's algorithm
//!   the second waits for the server to acknowledge the first, a round trip. 0-RTT early data
//!   would need a session resumed from an earlier connection, which a one-shot run does not
//!   have (and early data can be replayed), so it is not used.
//!
//! A request whose reply does not come in time leaves its replies owed on the connection: the
//! crate skips the first one when it comes, and this counts the rest, so that no late reply is
//! ever taken for the answer to a later request (a relay keeps such a connection: relay/).

use super::client::{client, connect, Tls};
use super::scripts;
use super::setup;
use crate::clock::BootInstant;
use redis::io::tcp::TcpSettings;
use redis::{
    Client, Connection, ConnectionInfo, ConnectionLike, ProtocolVersion, RedisConnectionInfo,
    RedisResult, Value,
};

/// How blocking connections to one server are opened: a client that connects and says nothing
/// (TCP, TLS), and the set-up each connection then sends ahead of its first request.
#[derive(Clone)]
pub(crate) struct Dialer {
    client: Client,
    setup: Vec<Vec<u8>>,
    db: i64,
}

impl Dialer {
    /// For the server `info` names, with `tls`: certificates are read and checked here.
    pub(crate) fn new(info: &ConnectionInfo, tls: &Tls) -> RedisResult<Dialer> {
        let settings = info.redis_settings();
        let info = info
            .clone()
            .set_tcp_settings(TcpSettings::default().set_nodelay(true));
        if settings.protocol() != ProtocolVersion::RESP2 {
            // RESP3's HELLO, which the crate sends on connecting, carries the credentials.
            return Ok(Dialer {
                client: client(&info, tls)?,
                setup: Vec::new(),
                db: settings.db(),
            });
        }
        let silent = RedisConnectionInfo::default().set_skip_set_lib_name();
        Ok(Dialer {
            setup: setup::commands(settings),
            db: settings.db(),
            client: client(&info.set_redis_settings(silent), tls)?,
        })
    }

    /// A connection made by `deadline` (TCP, and the TLS handshake), which also bounds its
    /// reads and writes until `Blocking::bound` says otherwise. Its set-up goes out with its
    /// first request, and with `role`, `ROLE` behind it: the request then counts only if the
    /// server says it is the master.
    pub(crate) fn open(&self, deadline: BootInstant, role: bool) -> RedisResult<Blocking> {
        let mut ahead: Vec<u8> = self.setup.concat();
        let mut count = self.setup.len();
        if role {
            ahead.extend(setup::role());
            count += 1;
        }
        Ok(Blocking {
            connection: connect(&self.client, deadline)?,
            ahead: (count > 0).then_some(Ahead {
                packed: ahead,
                count,
                role,
            }),
            scripts: Vec::new(),
            owed: 0,
            db: self.db,
            not_master: None,
        })
    }
}

/// The set-up a connection has yet to send.
struct Ahead {
    packed: Vec<u8>,
    count: usize,
    /// Its last command is `ROLE`.
    role: bool,
}

/// One blocking connection (see the module comment).
pub(crate) struct Blocking {
    connection: Connection,
    ahead: Option<Ahead>,
    /// The hashes of the scripts this connection has sent the source of.
    scripts: Vec<&'static str>,
    /// Replies still to come for requests that timed out, beyond the one the crate skips.
    owed: usize,
    db: i64,
    /// Why the server is not the master, when its `ROLE` said so.
    not_master: Option<String>,
}

impl Blocking {
    /// Bounds the reads and writes that follow by `deadline`.
    pub(crate) fn bound(&mut self, deadline: BootInstant) -> RedisResult<()> {
        let left = super::client::time_left(deadline)?;
        self.connection.set_read_timeout(Some(left))?;
        self.connection.set_write_timeout(Some(left))
    }

    /// Why the server is not the master, when the `ROLE` sent with the first request said so
    /// (that request then failed, whatever the server did with it).
    pub(crate) fn not_master(&self) -> Option<&str> {
        self.not_master.as_deref()
    }

    /// The connection as the crate uses it (a subscription), its set-up done by `deadline`.
    pub(crate) fn into_connection(mut self, deadline: BootInstant) -> RedisResult<Connection> {
        self.bound(deadline)?;
        if self.ahead.is_some() || self.owed > 0 {
            self.request(&[], 0, 0)?;
        }
        Ok(self.connection)
    }

    /// Sends `packed` (`skip + count` commands, possibly none) behind whatever set-up is still
    /// to go, and returns the replies after the first `skip`, as the crate's own connection
    /// does (an error reply stays a value, `Value::ServerError`).
    pub(crate) fn request(
        &mut self,
        packed: &[u8],
        skip: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let ahead = self.ahead.take();
        let mut out = ahead.as_ref().map_or_else(Vec::new, |a| a.packed.clone());
        match scripts::first_use(packed, &mut self.scripts) {
            Some(eval) => out.extend(eval),
            None => out.extend_from_slice(packed),
        }
        if !out.is_empty() {
            self.connection.send_packed_command(&out)?;
        }
        let (stale, set_up) = (self.owed, ahead.as_ref().map_or(0, |a| a.count));
        let total = stale + set_up + skip + count;
        let mut replies = Vec::with_capacity(total);
        for index in 0..total {
            match self.connection.recv_response() {
                Ok(reply) => replies.push(reply),
                Err(err) => {
                    // The crate skips the reply it gave up on; the ones behind it are ours to.
                    self.owed = total - index - 1;
                    return Err(err);
                }
            }
        }
        self.owed = 0;
        let mut replies = replies.split_off(stale);
        let wanted = replies.split_off(set_up);
        if let Some(ahead) = ahead {
            let role = ahead.role.then(|| replies.pop()).flatten();
            if let Some(why) = replies.iter().find_map(setup::refused) {
                return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, why).into());
            }
            if let Some(why) = role.as_ref().and_then(setup::not_the_master) {
                self.not_master = Some(why.clone());
                return Err(std::io::Error::other(why).into());
            }
        }
        Ok(wanted.into_iter().skip(skip).collect())
    }
}

impl ConnectionLike for Blocking {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.request(cmd, 0, 1).and_then(only)
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.request(cmd, offset, count)
    }

    fn get_db(&self) -> i64 {
        self.db
    }

    fn check_connection(&mut self) -> bool {
        redis::cmd("PING").query::<String>(self).is_ok()
    }

    fn is_open(&self) -> bool {
        self.connection.is_open()
    }
}

/// The reply to a single command.
pub(crate) fn only(mut replies: Vec<Value>) -> RedisResult<Value> {
    replies
        .pop()
        .ok_or_else(|| std::io::Error::other("no reply").into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::IntoConnectionInfo;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::time::Duration;

    #[test]
    fn the_replies_of_a_request_that_timed_out_are_never_taken_for_the_next_ones() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // A server that answers the set-up and the first request late, then the second.
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            std::thread::sleep(Duration::from_millis(300));
            stream.write_all(b"+OK\r\n+LATE\r\n").unwrap();
            let _ = stream.read(&mut buf);
            stream.write_all(b"+NEXT\r\n").unwrap();
        });
        let info = format!("redis://:pw@127.0.0.1:{port}")
            .into_connection_info()
            .unwrap();
        let dialer = Dialer::new(&info, &Tls::default()).unwrap();
        let mut connection = dialer
            .open(BootInstant::now().add(Duration::from_millis(100)), false)
            .unwrap();
        let get = |key: &str| redis::cmd("GET").arg(key).get_packed_command();
        let late = connection.request(&get("a"), 0, 1);
        assert!(late.is_err_and(|err| err.is_timeout()));
        connection
            .bound(BootInstant::now().add(Duration::from_secs(5)))
            .unwrap();
        let next = connection.request(&get("b"), 0, 1).unwrap();
        assert_eq!(next, [Value::SimpleString("NEXT".into())]);
        server.join().unwrap();
    }
}
