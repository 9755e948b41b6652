//! A key's hash slot in a Redis Cluster (CRC16 of the key, or of its hash tag), and the slot a
//! packed command addresses (its first key's): where a request must go, with no I/O.

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
}
