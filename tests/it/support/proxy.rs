//! A loopback TCP proxy between redlock and one real redis-server, with network faults a test
//! can switch while redlock runs: delay, black hole, reset, and replies lost after the server
//! applied the command. Every connection and thread it made is closed on drop.
//!
//! It also counts what a run cost in round trips (`counted`): the connections opened through it
//! (each a TCP handshake, one round trip) and, on each, the request flights that waited for a
//! reply. A flight is one turn of the client: the bytes it sends from the moment it starts
//! sending until the first reply bytes the proxy hands back to it after them. It is counted when
//! those reply bytes are handed over; bytes the client sends and never gets a reply to (a
//! clean-up nobody waits for) count for nothing, and bytes the server sends unasked (a TLS
//! session ticket) can only end a flight already started. So a client that sends a pipeline in
//! several writes, or a TLS Finished and then its first request, without reading in between, is
//! one flight; one that waits for a reply before it sends again is two.
//!
//! Counting is by order, not by time, as long as the client's writes of one flight reach the
//! proxy before the reply to them is handed back. `hold_replies` makes that certain on a loaded
//! machine: every reply waits that long before it is handed over, far longer than a client
//! takes between two writes it makes without reading, so a thread of the client that is not
//! scheduled for a moment cannot split a flight in two.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the proxy does to the bytes it sees from now on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Forward both ways at once.
    None,
    /// Forward both ways, each chunk `D` after it arrived (so a round trip costs 2·D).
    Delay(Duration),
    /// `Delay(D)`, and a connection's first bytes from the client wait 2·D more: the round
    /// trip of the TCP handshake, which a server `D` away would have made them wait for (the
    /// proxy's own end accepts at once). What the benchmark's distance is made of
    /// (bench/distance.rs).
    Distance(Duration),
    /// Accept and read, never forward either way: a server that is reachable but never answers.
    BlackHole,
    /// Abort every open connection (RST) and every new one as soon as it is accepted.
    Reset,
    /// Forward requests, swallow the replies: the server applies every command and the client
    /// never learns it did.
    DropReplies,
}

/// One proxy in front of one redis-server.
pub struct Proxy {
    pub port: u16,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

struct Shared {
    fault: Mutex<Fault>,
    /// How long every reply waits before it is handed to the client (`hold_replies`).
    hold: Mutex<Duration>,
    stop: AtomicBool,
    open: Mutex<Vec<Arc<Link>>>,
    /// Every connection since the counts were last cleared, in the order they were accepted.
    /// Only the counts: a link kept here would keep its sockets open, and an aborted one must
    /// close (the last close is what sends the RST).
    counted: Mutex<Vec<Arc<Flights>>>,
    /// Connections aborted so far.
    resets: AtomicUsize,
}

/// One client connection and the proxy's connection to the server for it.
struct Link {
    client: TcpStream,
    server: TcpStream,
    aborted: AtomicBool,
    flights: Arc<Flights>,
}

/// What one connection cost in flights (the module comment).
#[derive(Default)]
struct Flights {
    /// The client has sent bytes since it was last handed a reply: a flight is under way.
    sent: AtomicBool,
    /// Flights that got their reply.
    done: AtomicUsize,
}

/// What the connections through a proxy cost, since it started or since `recount`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    /// Connections opened through the proxy.
    pub connections: usize,
    /// Request flights that got a reply, per connection, in the order they were opened.
    pub flights: Vec<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Request,
    Reply,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `127.0.0.1:server_port`.
    pub fn start(server_port: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared {
            fault: Mutex::new(Fault::None),
            hold: Mutex::new(Duration::ZERO),
            stop: AtomicBool::new(false),
            open: Mutex::new(Vec::new()),
            counted: Mutex::new(Vec::new()),
            resets: AtomicUsize::new(0),
        });
        let acceptor = {
            let shared = shared.clone();
            std::thread::spawn(move || accept(listener, server_port, shared))
        };
        Proxy {
            port,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// How many connections it has reset.
    pub fn resets(&self) -> usize {
        self.shared.resets.load(Ordering::SeqCst)
    }

    /// Every reply from now on waits `hold` before it is handed to the client (see the module
    /// comment: what makes the counts certain), on top of any fault's delay.
    pub fn hold_replies(&self, hold: Duration) {
        *self.shared.hold.lock().unwrap() = hold;
    }

    /// The connections and flights since the proxy started or since `recount`.
    pub fn counted(&self) -> Counted {
        let links = self.shared.counted.lock().unwrap();
        Counted {
            connections: links.len(),
            flights: links
                .iter()
                .map(|flights| flights.done.load(Ordering::SeqCst))
                .collect(),
        }
    }

    /// Counts from zero: the connections already open are no longer counted.
    pub fn recount(&self) {
        self.shared.counted.lock().unwrap().clear();
    }

    /// Applies `fault` to every byte from now on; `Reset` also aborts every open connection.
    pub fn set(&self, fault: Fault) {
        *self.shared.fault.lock().unwrap() = fault;
        if fault == Fault::Reset {
            for link in self.shared.open.lock().unwrap().drain(..) {
                self.shared.abort(&link);
            }
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wakes the acceptor, which sees `stop` and returns.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
        for link in self.shared.open.lock().unwrap().drain(..) {
            link.close();
        }
    }
}

impl Shared {
    fn abort(&self, link: &Link) {
        if !link.aborted.swap(true, Ordering::SeqCst) {
            self.resets.fetch_add(1, Ordering::SeqCst);
            link.abort();
        }
    }
}

impl Link {
    /// RST both ways: with SO_LINGER 0 the last close aborts instead of ending politely, and a
    /// read shutdown wakes the pumps so that they let go of the sockets.
    fn abort(&self) {
        for socket in [&self.client, &self.server] {
            let _ = socket2::SockRef::from(socket).set_linger(Some(Duration::ZERO));
            let _ = socket.shutdown(Shutdown::Read);
        }
    }

    fn close(&self) {
        let _ = self.client.shutdown(Shutdown::Both);
        let _ = self.server.shutdown(Shutdown::Both);
    }

    /// The socket a direction reads from and the one it writes to.
    fn ends(&self, direction: Direction) -> (&TcpStream, &TcpStream) {
        match direction {
            Direction::Request => (&self.client, &self.server),
            Direction::Reply => (&self.server, &self.client),
        }
    }
}

fn accept(listener: TcpListener, server_port: u16, shared: Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        let Ok(server) = TcpStream::connect(("127.0.0.1", server_port)) else {
            // The server is down: the client sees the connection close at once.
            continue;
        };
        // Each chunk goes on as it came, as over a wire: not held back until the other end
        // acknowledged the last one.
        for socket in [&client, &server] {
            let _ = socket.set_nodelay(true);
        }
        let link = Arc::new(Link {
            client,
            server,
            aborted: AtomicBool::new(false),
            flights: Arc::default(),
        });
        shared.counted.lock().unwrap().push(link.flights.clone());
        if *shared.fault.lock().unwrap() == Fault::Reset {
            shared.abort(&link);
            continue;
        }
        shared.open.lock().unwrap().push(link.clone());
        for direction in [Direction::Request, Direction::Reply] {
            let (link, shared) = (link.clone(), shared.clone());
            std::thread::spawn(move || pump(&link, direction, &shared));
        }
    }
}

/// Moves one direction's bytes, applying the fault in force when each chunk arrives. A second
/// thread writes them out when they are due, so that a delay is added to each chunk once
/// rather than piling up behind the previous one.
fn pump(link: &Arc<Link>, direction: Direction, shared: &Shared) {
    let (due_tx, due_rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let writer = {
        let link = link.clone();
        std::thread::spawn(move || {
            let (_, mut to) = link.ends(direction);
            for (due, bytes) in due_rx {
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
                // A reply handed over ends the flight under way, if any; counted before the
                // client can see it (and exit, and the test read the count).
                if direction == Direction::Reply && link.flights.sent.swap(false, Ordering::SeqCst)
                {
                    link.flights.done.fetch_add(1, Ordering::SeqCst);
                }
                if to.write_all(&bytes).is_err() {
                    return;
                }
            }
            if !link.aborted.load(Ordering::SeqCst) {
                // Pass the end of this direction on, as a real network would.
                let _ = to.shutdown(Shutdown::Write);
            }
        })
    };
    let (mut from, _) = link.ends(direction);
    let mut buf = vec![0u8; 64 * 1024];
    let mut first = direction == Direction::Request;
    loop {
        if direction == Direction::Request {
            delay_acks(from);
        }
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let now = Instant::now();
        if direction == Direction::Request {
            link.flights.sent.store(true, Ordering::SeqCst);
        }
        let held = match direction {
            Direction::Request => now,
            Direction::Reply => now + *shared.hold.lock().unwrap(),
        };
        let due = match *shared.fault.lock().unwrap() {
            Fault::None => Some(held),
            Fault::Delay(delay) => Some(held + delay),
            Fault::Distance(delay) if first => Some(held + delay * 3),
            Fault::Distance(delay) => Some(held + delay),
            Fault::BlackHole => None,
            Fault::DropReplies => (direction == Direction::Request).then_some(held),
            Fault::Reset => {
                shared
                    .open
                    .lock()
                    .unwrap()
                    .retain(|l| !Arc::ptr_eq(l, link));
                shared.abort(link);
                break;
            }
        };
        first = false;
        if let Some(due) = due {
            if due_tx.send((due, buf[..n].to_vec())).is_err() {
                break;
            }
        }
    }
    drop(due_tx);
    let _ = writer.join();
}

/// Lets the kernel delay its acknowledgements of what the client sends, as a server across a
/// network does (Linux otherwise acknowledges at once on loopback, and leaves quick-ack mode
/// only for a while: hence before every read). A client that holds a write back until its last
/// one is acknowledged (Nagle's algorithm, without TCP_NODELAY) then waits for the reply, and
/// the count shows the flight it costs.
fn delay_acks(socket: &TcpStream) {
    use std::os::fd::AsRawFd;
    let off: libc::c_int = 0;
    // SAFETY: a plain setsockopt on a socket we own, with a pointer to an int that outlives
    // the call and its size; failure only leaves acknowledgements as they were.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_QUICKACK,
            (&off as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}
