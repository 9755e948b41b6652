//! Text for people: one way to say how long something took, and library messages made into
//! the lowercase tail of ours.

use std::time::Duration;

/// `250ms`, `1.5s`, `2m 3s`: precise enough for people, short enough for a line or a table.
pub(crate) fn duration(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else if d < Duration::from_secs(60) {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        whole_seconds(d)
    }
}

/// `0s`, `3s`, `2m 3s`: whole seconds, for a count that moves once a second.
pub(crate) fn whole_seconds(d: Duration) -> String {
    humantime::format_duration(Duration::from_secs(d.as_secs())).to_string()
}

/// The first unix millisecond RFC 3339's four-digit year cannot write: 10000-01-01T00:00:00Z.
const YEAR_10000_UNIX_MS: u64 = 253_402_300_800_000;

/// `2026-11-28T03:12:00Z`: a time the servers hold (in a token, a history entry), in unix ms, to
/// the second; `None` from the year 10000 on, which a hand-written entry or a host whose clock
/// is wrong can put there.
pub(crate) fn rfc3339_seconds(unix_ms: u64) -> Option<String> {
    (unix_ms < YEAR_10000_UNIX_MS).then(|| {
        let at = std::time::UNIX_EPOCH + Duration::from_millis(unix_ms);
        humantime::format_rfc3339_seconds(at).to_string()
    })
}

/// `rfc3339_seconds`, or, for a time it cannot write, the number: `253402300800000 (unix ms)`.
pub(crate) fn utc(unix_ms: u64) -> String {
    rfc3339_seconds(unix_ms).unwrap_or_else(|| format!("{unix_ms} (unix ms)"))
}

/// `0.4ms`, `12.3ms`: a round-trip time.
pub(crate) fn latency(d: Duration) -> String {
    format!("{:.1}ms", d.as_secs_f64() * 1000.0)
}

/// What the user typed, in quotes, with control characters escaped (`'5s\n'`), so that a
/// message that names it stays one line.
pub(crate) fn quoted(text: &str) -> String {
    format!("'{}'", printable(text))
}

/// `text` with control characters written as escapes: `\n`, `\t` and `\r` as in Rust and C,
/// other ASCII ones as `\x1f` (as `redis-cli` shows the unit separator in redlock's own keys),
/// and the rest (C1 controls, Unicode's line and paragraph separators) as `\u{2028}`. The one
/// function every text line on stderr goes through, so that no raw control byte reaches a
/// terminal or a log.
pub(crate) fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' | '\r' => out.extend(c.escape_default()),
            '\0'..='\x1f' | '\x7f' => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            _ if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                out.extend(c.escape_default())
            }
            _ => out.push(c),
        }
    }
    out
}

/// The first line of another library's message, which may run on with details we do not show.
pub(crate) fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// `1 server`, `3 servers`.
pub(crate) fn servers(n: usize) -> String {
    match n {
        1 => "1 server".into(),
        n => format!("{n} servers"),
    }
}

/// A first word with another capital in it (`ERR`, `NOPERM`, `NoPerm`) is a code or a name, and
/// keeps its spelling: a server's own words are shown as it wrote them.
pub(crate) fn lowercase_first(text: &str) -> String {
    let first_word = text.split([' ', ':']).next().unwrap_or_default();
    if first_word.chars().skip(1).any(char::is_uppercase) {
        return text.to_string();
    }
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A whole number with its thousands separated by commas, as the docs write them: `100,000`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(100_000), "100,000");
        assert_eq!(thousands(1_000_020), "1,000,020");
    }

    #[test]
    fn durations_read_short_at_every_scale() {
        assert_eq!(duration(Duration::from_millis(250)), "250ms");
        assert_eq!(duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(duration(Duration::from_millis(4260)), "4.3s");
        assert_eq!(duration(Duration::from_secs(123)), "2m 3s");
        assert_eq!(whole_seconds(Duration::from_millis(3400)), "3s");
        assert_eq!(whole_seconds(Duration::ZERO), "0s");
        assert_eq!(latency(Duration::from_micros(1234)), "1.2ms");
    }

    #[test]
    fn a_servers_own_words_keep_their_capitals() {
        assert_eq!(lowercase_first("Connection refused"), "connection refused");
        assert_eq!(
            lowercase_first("ERR The user executing"),
            "ERR The user executing"
        );
        assert_eq!(lowercase_first("NOPERM: no"), "NOPERM: no");
        assert_eq!(lowercase_first("ResponseError: x"), "ResponseError: x");
        assert_eq!(lowercase_first(""), "");
    }

    #[test]
    fn any_time_can_be_shown() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(YEAR_10000_UNIX_MS - 1), "9999-12-31T23:59:59Z");
        assert_eq!(utc(YEAR_10000_UNIX_MS), "253402300800000 (unix ms)");
        assert_eq!(utc(u64::MAX), format!("{} (unix ms)", u64::MAX));
        assert_eq!(rfc3339_seconds(YEAR_10000_UNIX_MS), None);
    }

    #[test]
    fn quoted_text_stays_on_one_line() {
        assert_eq!(quoted("5s"), "'5s'");
        assert_eq!(quoted("5s\nrm -rf"), "'5s\\nrm -rf'");
        assert_eq!(printable("a\u{1b}[2Jb\tü"), "a\\x1b[2Jb\\tü");
        assert_eq!(
            printable("redlock:x\u{1f}fence\u{7f}"),
            "redlock:x\\x1ffence\\x7f"
        );
        assert_eq!(printable("a\u{85}\u{2028}b"), "a\\u{85}\\u{2028}b");
    }

    #[test]
    fn only_the_first_letter_is_lowered() {
        assert_eq!(lowercase_first("Connection refused"), "connection refused");
        assert_eq!(lowercase_first("État TLS"), "état TLS");
        assert_eq!(lowercase_first(""), "");
    }
}
