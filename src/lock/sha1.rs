//! SHA1 as a `const fn`, so that every script's hash is worked out when the binary is built
//! (script.rs's `lua!`), not by each run: a process's first use of a script sends its source
//! anyway (server/scripts.rs), and hashing a few kilobytes of Lua was a sixth of what an
//! `exec` did in its own code. The hash names the script to the servers (`EVALSHA`, `NOSCRIPT`
//! and the `script: <sha>` of their errors), which is all SHA1 is for here: nothing secret
//! depends on it.

/// The SHA1 of `data` as 40 lowercase hexadecimal digits, as Redis names a script.
pub(crate) const fn sha1_hex(data: &[u8]) -> [u8; 40] {
    let digest = sha1(data);
    let mut hex = [0u8; 40];
    let mut i = 0;
    while i < 20 {
        hex[2 * i] = DIGITS[(digest[i] >> 4) as usize];
        hex[2 * i + 1] = DIGITS[(digest[i] & 0xf) as usize];
        i += 1;
    }
    hex
}

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// FIPS 180-4's SHA1 of `data`.
const fn sha1(data: &[u8]) -> [u8; 20] {
    let mut state: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    // The message, a 1 bit, zeros, and its length in bits, to a whole number of 64-byte blocks.
    let padded = (data.len() + 8) / 64 * 64 + 64;
    let mut block = 0;
    while block < padded / 64 {
        let mut w = [0u32; 80];
        let mut t = 0;
        while t < 16 {
            let mut b = 0;
            while b < 4 {
                w[t] = (w[t] << 8) | padded_byte(data, padded, block * 64 + t * 4 + b) as u32;
                b += 1;
            }
            t += 1;
        }
        while t < 80 {
            w[t] = (w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]).rotate_left(1);
            t += 1;
        }
        let [mut a, mut b, mut c, mut d, mut e] = state;
        let mut t = 0;
        while t < 80 {
            let (f, k) = match t / 20 {
                0 => ((b & c) | (!b & d), 0x5A827999),
                1 => (b ^ c ^ d, 0x6ED9EBA1),
                2 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let next = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(w[t]);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = next;
            t += 1;
        }
        state[0] = state[0].wrapping_add(a);
        state[1] = state[1].wrapping_add(b);
        state[2] = state[2].wrapping_add(c);
        state[3] = state[3].wrapping_add(d);
        state[4] = state[4].wrapping_add(e);
        block += 1;
    }
    let mut digest = [0u8; 20];
    let mut i = 0;
    while i < 20 {
        digest[i] = (state[i / 4] >> (24 - 8 * (i % 4))) as u8;
        i += 1;
    }
    digest
}

/// Byte `at` of `data` padded to `padded` bytes.
const fn padded_byte(data: &[u8], padded: usize, at: usize) -> u8 {
    if at < data.len() {
        data[at]
    } else if at == data.len() {
        0x80
    } else if at >= padded - 8 {
        let bits = (data.len() as u64) * 8;
        (bits >> (8 * (padded - 1 - at))) as u8
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::sha1_hex;

    fn hex(data: &[u8]) -> String {
        String::from_utf8(sha1_hex(data).to_vec()).expect("hex digits")
    }

    #[test]
    fn the_standard_vectors() {
        assert_eq!(hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
    }

    #[test]
    fn the_same_as_the_redis_crate_at_every_padding_length() {
        let text: String = (0..300u32)
            .map(|i| char::from(32 + (i * 7 % 95) as u8))
            .collect();
        for len in 0..text.len() {
            let data = &text[..len];
            let theirs = redis::Script::new(data).get_hash().to_string();
            assert_eq!(hex(data.as_bytes()), theirs, "{len} bytes");
        }
    }
}
