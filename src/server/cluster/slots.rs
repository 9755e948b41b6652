//! Redis Cluster's arithmetic, with no I/O: the hash slot of a key (CRC16 of the key, or of its
//! hash tag), the slot a packed command addresses (its first key's), a node's address, the
//! redirections a node answers with (`MOVED`, `ASK`), and the slot map (`CLUSTER SLOTS`).
//!
//! The transport asks `command_slot` where a request goes and `Redirect::parse` where to send it
//! again; whichever transport it is (threads today, a poll loop tomorrow) it needs nothing else
//! from here.

use redis::Value;

/// How many hash slots a cluster has.
pub(crate) const SLOTS: u16 = 16384;

/// CRC16-CCITT (XModem: polynomial 0x1021, initial value 0), the cluster's key hash.
const CRC16: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut crc = (byte as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[byte] = crc;
        byte += 1;
    }
    table
};

fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |crc, &b| {
        (crc << 8) ^ CRC16[usize::from((crc >> 8) as u8 ^ b)]
    })
}

/// The part of `key` a cluster hashes instead of the whole key: the text between its first `{`
/// and the first `}` after that, when that text is not empty.
pub(crate) fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let open = key.iter().position(|&b| b == b'{')?;
    let rest = &key[open + 1..];
    let close = rest.iter().position(|&b| b == b'}')?;
    (close > 0).then(|| &rest[..close])
}

/// The hash slot of `key`.
pub(crate) fn hash_slot(key: impl AsRef<[u8]>) -> u16 {
    let key = key.as_ref();
    crc16(hash_tag(key).unwrap_or(key)) % SLOTS
}

/// The arguments of the first command in `packed`, as the redis crate writes commands (an array
/// of bulk strings); stops at anything else.
fn arguments(packed: &[u8]) -> impl Iterator<Item = &[u8]> {
    /// A number ended by CRLF after `marker`, and what follows the CRLF.
    fn header(bytes: &[u8], marker: u8) -> Option<(usize, &[u8])> {
        let rest = bytes.strip_prefix(&[marker])?;
        let end = rest.iter().position(|&b| b == b'\r')?;
        let number = std::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
        Some((number, rest[end..].strip_prefix(b"\r\n")?))
    }
    let (count, mut rest) = header(packed, b'*').unwrap_or((0, &[]));
    (0..count).map_while(move |_| {
        let (len, body) = header(rest, b'$')?;
        let argument = body.get(..len)?;
        rest = body.get(len..)?.strip_prefix(b"\r\n")?;
        Some(argument)
    })
}

/// The slot of the first key of the first command in `packed`, or `None` for a command without
/// a key (`SCRIPT LOAD`, `SCAN`, `PING`…), which any node may answer. Knows the commands redlock
/// sends; any other is taken to have its key first, and a wrong guess only costs a `MOVED`.
pub(crate) fn command_slot(packed: &[u8]) -> Option<u16> {
    let mut args = arguments(packed);
    let name = args.next()?.to_ascii_uppercase();
    let key = match name.as_slice() {
        b"EVAL" | b"EVALSHA" | b"EVAL_RO" | b"EVALSHA_RO" | b"FCALL" | b"FCALL_RO" => {
            let _script = args.next()?;
            let numkeys: usize = std::str::from_utf8(args.next()?).ok()?.parse().ok()?;
            if numkeys == 0 {
                return None;
            }
            args.next()?
        }
        b"ASKING" | b"AUTH" | b"CLIENT" | b"CLUSTER" | b"CONFIG" | b"DBSIZE" | b"FUNCTION"
        | b"HELLO" | b"INFO" | b"PING" | b"PUBLISH" | b"READONLY" | b"ROLE" | b"SCAN"
        | b"SCRIPT" | b"SELECT" | b"SUBSCRIBE" | b"TIME" => return None,
        _ => args.next()?,
    };
    Some(hash_slot(key))
}

/// One node of a cluster, as `host:port`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Node {
    pub(crate) host: String,
    pub(crate) port: u16,
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl Node {
    /// A node as a URL names it: `host`, `host:port`, `[v6]` or `[v6]:port`.
    pub(crate) fn parse(text: &str, default_port: u16) -> Option<Node> {
        let (host, port) = match text.strip_prefix('[') {
            Some(bracketed) => {
                let (host, after) = bracketed.split_once(']')?;
                match after {
                    "" => (host, None),
                    port => (host, Some(port.strip_prefix(':')?)),
                }
            }
            None => match text.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (text, None),
            },
        };
        if host.is_empty() || host.contains(['/', '@', '?', '#', ',', '[', ']']) {
            return None;
        }
        let port = match port {
            Some(port) => port.parse().ok().filter(|&p| p > 0)?,
            None => default_port,
        };
        Some(Node {
            host: host.to_lowercase(),
            port,
        })
    }
}

/// Where a node sends us for a slot it does not serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Redirect {
    /// The slot belongs to `to` now: ask it from now on.
    Moved { slot: u16, to: Node },
    /// The slot is being migrated to `to`, which has the key already: ask it this once, after
    /// `ASKING`.
    Ask { slot: u16, to: Node },
}

impl Redirect {
    /// Reads an error reply, `MOVED 3999 127.0.0.1:6381` or `ASK 3999 127.0.0.1:6381`, from
    /// its code and details. `asked` is the node that answered: a redirection without a host
    /// (`MOVED 3999 :6381`) means that node's host.
    pub(crate) fn parse(code: &str, details: Option<&str>, asked: &Node) -> Option<Redirect> {
        let mut words = details?.split_ascii_whitespace();
        let slot: u16 = words.next()?.parse().ok().filter(|&s| s < SLOTS)?;
        let (host, port) = words.next()?.rsplit_once(':')?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let to = Node {
            host: if host.is_empty() {
                asked.host.clone()
            } else {
                host.to_lowercase()
            },
            port: port.parse().ok()?,
        };
        match code {
            "MOVED" => Some(Redirect::Moved { slot, to }),
            "ASK" => Some(Redirect::Ask { slot, to }),
            _ => None,
        }
    }
}

/// Which master serves each slot, as one node described the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Map {
    /// For each slot, its master's index in `masters`; `NONE` when no master serves it.
    owners: Vec<u16>,
    masters: Vec<Node>,
}

const NONE: u16 = u16::MAX;

impl Map {
    /// Reads a `CLUSTER SLOTS` reply given by `asked`: `[[start, end, [host, port, id, …],
    /// replicas…], …]`. A host of `""` is `asked`'s own; `"?"` (unknown) leaves those slots
    /// unserved.
    pub(crate) fn from_slots(reply: &Value, asked: &Node) -> Result<Map, String> {
        let Value::Array(ranges) = reply else {
            return Err("answered CLUSTER SLOTS with something other than a list".into());
        };
        let mut map = Map {
            owners: vec![NONE; usize::from(SLOTS)],
            masters: Vec::new(),
        };
        for range in ranges {
            let Value::Array(fields) = range else {
                return Err("answered CLUSTER SLOTS with a malformed range".into());
            };
            let (Some(start), Some(end), Some(Value::Array(master))) = (
                integer(fields.first()),
                integer(fields.get(1)),
                fields.get(2),
            ) else {
                return Err("answered CLUSTER SLOTS with a malformed range".into());
            };
            let (Some(host), Some(port)) = (text(master.first()), integer(master.get(1))) else {
                return Err("answered CLUSTER SLOTS with a malformed master".into());
            };
            if host == "?" {
                continue;
            }
            let (Ok(start), Ok(end), Ok(port)) = (
                u16::try_from(start),
                u16::try_from(end),
                u16::try_from(port),
            ) else {
                return Err("answered CLUSTER SLOTS with a slot or port out of range".into());
            };
            if start > end || end >= SLOTS {
                return Err(format!("answered CLUSTER SLOTS with slots {start}-{end}"));
            }
            let node = Node {
                host: if host.is_empty() {
                    asked.host.clone()
                } else {
                    host.to_lowercase()
                },
                port,
            };
            let index = map.index(node);
            map.owners[usize::from(start)..=usize::from(end)].fill(index);
        }
        if map.masters.is_empty() {
            return Err(
                "has no slots assigned (not yet created with redis-cli --cluster create?)".into(),
            );
        }
        Ok(map)
    }

    fn index(&mut self, node: Node) -> u16 {
        match self.masters.iter().position(|m| *m == node) {
            Some(index) => index as u16,
            None => {
                self.masters.push(node);
                (self.masters.len() - 1) as u16
            }
        }
    }

    /// The master serving `slot`, if any.
    pub(crate) fn master(&self, slot: u16) -> Option<&Node> {
        let owner = *self.owners.get(usize::from(slot))?;
        self.masters.get(usize::from(owner))
    }

    /// Every master that serves at least one slot.
    pub(crate) fn masters(&self) -> Vec<&Node> {
        let mut serving = vec![false; self.masters.len()];
        for &owner in &self.owners {
            if let Some(flag) = serving.get_mut(usize::from(owner)) {
                *flag = true;
            }
        }
        self.masters
            .iter()
            .zip(serving)
            .filter_map(|(node, serves)| serves.then_some(node))
            .collect()
    }

    /// After a `MOVED`: `slot` is `node`'s now.
    pub(crate) fn assign(&mut self, slot: u16, node: Node) {
        let index = self.index(node);
        if let Some(owner) = self.owners.get_mut(usize::from(slot)) {
            *owner = index;
        }
    }
}

fn integer(value: Option<&Value>) -> Option<i64> {
    match value? {
        Value::Int(n) => Some(*n),
        _ => None,
    }
}

fn text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(text) => Some(text.clone()),
        Value::VerbatimString { text, .. } => Some(text.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_those_redis_computes() {
        // From `CLUSTER KEYSLOT` on Redis 7.0.
        assert_eq!(hash_slot("foo"), 12182);
        assert_eq!(hash_slot("a"), 15495);
        assert_eq!(hash_slot("{t3}a"), 685);
        assert_eq!(hash_slot("123456789"), 0x31c3 % SLOTS);
        assert_eq!(hash_slot(""), 0);
    }

    #[test]
    fn a_hash_tag_is_the_first_braces_with_something_inside() {
        assert_eq!(hash_tag(b"{user1000}.following"), Some(&b"user1000"[..]));
        assert_eq!(hash_tag(b"foo{}{bar}"), None);
        assert_eq!(hash_tag(b"foo{{bar}}zap"), Some(&b"{bar"[..]));
        assert_eq!(hash_tag(b"foo{bar}{zap}"), Some(&b"bar"[..]));
        assert_eq!(hash_tag(b"a}b{c"), None);
        assert_eq!(hash_tag(b"a{b"), None);
        assert_eq!(hash_slot("foo{}{bar}"), crc16(b"foo{}{bar}") % SLOTS);
        assert_eq!(hash_slot("x{bar}y"), hash_slot("bar"));
    }

    #[test]
    fn a_command_goes_to_its_first_key() {
        let packed = |cmd: &redis::Cmd| cmd.get_packed_command();
        let mut eval = redis::cmd("EVALSHA");
        eval.arg("0123").arg(2).arg("{t3}a").arg("b").arg("argv");
        assert_eq!(command_slot(&packed(&eval)), Some(685));
        let mut none = redis::cmd("EVAL");
        none.arg("return 1").arg(0).arg("foo");
        assert_eq!(command_slot(&packed(&none)), None);
        assert_eq!(
            command_slot(&packed(redis::cmd("GET").arg("foo"))),
            Some(12182)
        );
        assert_eq!(
            command_slot(&packed(redis::cmd("mget").arg("a").arg("foo"))),
            Some(15495)
        );
        assert_eq!(
            command_slot(&packed(redis::cmd("SCRIPT").arg("LOAD").arg("x"))),
            None
        );
        assert_eq!(command_slot(&packed(redis::cmd("SCAN").arg(0))), None);
        assert_eq!(command_slot(&packed(&redis::cmd("PING"))), None);
        let mut pipeline = redis::pipe();
        pipeline.cmd("TYPE").arg("a").cmd("PTTL").arg("foo");
        assert_eq!(command_slot(&pipeline.get_packed_pipeline()), Some(15495));
        assert_eq!(command_slot(b"garbage"), None);
        assert_eq!(command_slot(b"*2\r\n$3\r\nGET\r\n$10\r\nshort\r\n"), None);
    }

    #[test]
    fn nodes_are_read_as_urls_write_them() {
        let node = |host: &str, port| Node {
            host: host.into(),
            port,
        };
        assert_eq!(Node::parse("H1:7000", 6379), Some(node("h1", 7000)));
        assert_eq!(Node::parse("h1", 6379), Some(node("h1", 6379)));
        assert_eq!(Node::parse("[::1]:7000", 6379), Some(node("::1", 7000)));
        assert_eq!(Node::parse("[::1]", 6379), Some(node("::1", 6379)));
        assert_eq!(node("::1", 7000).to_string(), "[::1]:7000");
        for bad in [
            "", ":7000", "h:0", "h:x", "h:99999", "[::1", "h/0", "[::1]x",
        ] {
            assert_eq!(Node::parse(bad, 6379), None, "{bad}");
        }
    }

    #[test]
    fn redirections_name_the_slot_and_the_node() {
        let asked = Node {
            host: "10.0.0.1".into(),
            port: 7000,
        };
        assert_eq!(
            Redirect::parse("MOVED", Some("3999 127.0.0.1:6381"), &asked),
            Some(Redirect::Moved {
                slot: 3999,
                to: Node {
                    host: "127.0.0.1".into(),
                    port: 6381
                }
            })
        );
        assert_eq!(
            Redirect::parse("ASK", Some("685 :7001"), &asked),
            Some(Redirect::Ask {
                slot: 685,
                to: Node {
                    host: "10.0.0.1".into(),
                    port: 7001
                }
            })
        );
        assert_eq!(
            Redirect::parse("MOVED", Some("1 ::1:7002"), &asked),
            Some(Redirect::Moved {
                slot: 1,
                to: Node {
                    host: "::1".into(),
                    port: 7002
                }
            })
        );
        assert_eq!(Redirect::parse("MOVED", Some("16384 h:1"), &asked), None);
        assert_eq!(Redirect::parse("NOSCRIPT", Some("1 h:1"), &asked), None);
        assert_eq!(Redirect::parse("MOVED", None, &asked), None);
    }

    fn range(start: i64, end: i64, host: &str, port: i64) -> Value {
        Value::Array(vec![
            Value::Int(start),
            Value::Int(end),
            Value::Array(vec![
                Value::BulkString(host.as_bytes().to_vec()),
                Value::Int(port),
                Value::BulkString(b"id".to_vec()),
            ]),
            Value::Array(vec![
                Value::BulkString(b"127.0.0.1".to_vec()),
                Value::Int(port + 3),
            ]),
        ])
    }

    #[test]
    fn the_slot_map_names_each_slots_master() {
        let asked = Node {
            host: "10.0.0.9".into(),
            port: 7000,
        };
        let reply = Value::Array(vec![
            range(0, 5460, "127.0.0.1", 7000),
            range(5461, 10922, "", 7001),
            range(10923, 16000, "?", 7002),
        ]);
        let mut map = Map::from_slots(&reply, &asked).unwrap();
        assert_eq!(map.master(0).unwrap().to_string(), "127.0.0.1:7000");
        assert_eq!(map.master(5461).unwrap().to_string(), "10.0.0.9:7001");
        assert_eq!(map.master(10923), None);
        assert_eq!(map.master(16383), None);
        assert_eq!(map.masters().len(), 2);
        let moved = Node {
            host: "127.0.0.1".into(),
            port: 7005,
        };
        map.assign(16383, moved.clone());
        assert_eq!(map.master(16383), Some(&moved));
        assert_eq!(map.masters().len(), 3);
        for bad in [
            Value::Nil,
            Value::Array(vec![]),
            Value::Array(vec![range(0, 16384, "h", 1)]),
            Value::Array(vec![range(5, 4, "h", 1)]),
            Value::Array(vec![Value::Array(vec![Value::Int(0)])]),
        ] {
            assert!(Map::from_slots(&bad, &asked).is_err(), "{bad:?}");
        }
    }
}
