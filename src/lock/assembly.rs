//! A script's source put together when the binary is built (script.rs's `lua!`): the prelude
//! that declares the Rust constants its parts name, then the parts' code. `const fn`s over byte
//! buffers, since a `const` cannot build a `String`; `most_bytes` sizes the buffer, and the
//! script is the part of it `assembled` fills.

use super::script::{Constant, Part, Value};

/// The most bytes the source of a script of `parts` can take (`assembled` sizes its buffer by
/// it): each part's code, and a prelude line for each constant it names.
pub(crate) const fn most_bytes(parts: &[Part]) -> usize {
    let mut bytes = 0;
    let mut p = 0;
    while p < parts.len() {
        bytes += parts[p].code.len();
        let mut c = 0;
        while c < parts[p].names.len() {
            let constant = &parts[p].names[c];
            let value = match constant.value {
                // Every byte at most `\ddd`, between quotes.
                Value::Text(text) => 2 + 4 * text.len(),
                Value::Char(_) => 2 + 4 * 4,
                Value::Number(_) => 20,
            };
            bytes += "local ".len() + constant.name.len() + " = ".len() + value + 1;
            c += 1;
        }
        p += 1;
    }
    bytes
}

/// The source of a script of `parts`: the prelude (each constant they name, once, as a Lua
/// local), then each part's code. The bytes, and how many of the `N` are used.
pub(crate) const fn assembled<const N: usize>(parts: &[Part]) -> ([u8; N], usize) {
    let mut out = [0u8; N];
    let mut len = 0;
    let mut p = 0;
    while p < parts.len() {
        let mut c = 0;
        while c < parts[p].names.len() {
            let constant = parts[p].names[c];
            match named_before(parts, p, c) {
                Some(known) if !same_value(known.value, constant.value) => {
                    panic!("two parts give a constant two values")
                }
                Some(_) => {}
                None => {
                    len = push(&mut out, len, b"local ");
                    len = push(&mut out, len, constant.name.as_bytes());
                    len = push(&mut out, len, b" = ");
                    len = push_value(&mut out, len, constant.value);
                    len = push(&mut out, len, b"\n");
                }
            }
            c += 1;
        }
        p += 1;
    }
    let mut p = 0;
    while p < parts.len() {
        len = push(&mut out, len, parts[p].code.as_bytes());
        p += 1;
    }
    (out, len)
}

/// The constant named like `parts[p].names[c]` earlier in `parts`, if any.
const fn named_before(parts: &[Part], p: usize, c: usize) -> Option<Constant> {
    let name = parts[p].names[c].name.as_bytes();
    let mut q = 0;
    while q <= p {
        let names = parts[q].names;
        let mut d = 0;
        while d < names.len() && (q < p || d < c) {
            if same_bytes(names[d].name.as_bytes(), name) {
                return Some(names[d]);
            }
            d += 1;
        }
        q += 1;
    }
    None
}

const fn same_value(a: Value, b: Value) -> bool {
    match (a, b) {
        (Value::Text(a), Value::Text(b)) => same_bytes(a.as_bytes(), b.as_bytes()),
        (Value::Char(a), Value::Char(b)) => a as u32 == b as u32,
        (Value::Number(a), Value::Number(b)) => a == b,
        _ => false,
    }
}

const fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn push(out: &mut [u8], mut len: usize, bytes: &[u8]) -> usize {
    let mut i = 0;
    while i < bytes.len() {
        out[len] = bytes[i];
        len += 1;
        i += 1;
    }
    len
}

/// `value` as a Lua literal: text and characters quoted, control characters, quotes and
/// backslashes written as `\ddd` (three digits always: Lua reads up to three after a
/// backslash, so `\31` followed by a digit would be another byte).
const fn push_value(out: &mut [u8], mut len: usize, value: Value) -> usize {
    match value {
        Value::Text(text) => push_literal(out, len, text.as_bytes()),
        Value::Char(c) => {
            let mut utf8 = [0u8; 4];
            let encoded = c.encode_utf8(&mut utf8);
            push_literal(out, len, encoded.as_bytes())
        }
        Value::Number(mut n) => {
            let mut digits = [0u8; 20];
            let mut count = 0;
            loop {
                digits[count] = b'0' + (n % 10) as u8;
                count += 1;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            while count > 0 {
                count -= 1;
                out[len] = digits[count];
                len += 1;
            }
            len
        }
    }
}

const fn push_literal(out: &mut [u8], mut len: usize, text: &[u8]) -> usize {
    len = push(out, len, b"'");
    let mut i = 0;
    while i < text.len() {
        let byte = text[i];
        if byte < 0x20 || byte == b'\'' || byte == b'\\' {
            len = push(
                out,
                len,
                &[
                    b'\\',
                    b'0' + byte / 100,
                    b'0' + byte / 10 % 10,
                    b'0' + byte % 10,
                ],
            );
        } else {
            len = push(out, len, &[byte]);
        }
        i += 1;
    }
    push(out, len, b"'")
}
