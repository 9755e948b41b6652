//! The value parsers for durations, semaphore limits and tokens, with their ceilings: a bad
//! value is refused while parsing, in one line that names it and says what was expected.

use crate::human;
use std::time::Duration;

/// The longest TTL a lock may be given: longer is a typo (`99999h`) more often than a plan, and
/// a lock that outlives its holder by years is worse than one that must be extended.
pub(crate) const MAX_TTL: Duration = Duration::from_secs(7 * 24 * 3600);
/// The longest `--wait` (and `--retry-delay`).
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(7 * 24 * 3600);
/// The longest per-server `--timeout`.
pub(crate) const MAX_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest `--kill-after`.
pub(crate) const MAX_KILL_AFTER: Duration = Duration::from_secs(3600);
/// The longest `--hold-at-least`: a hold keeps the key alive as a TTL does, so the same ceiling.
pub(crate) const MAX_HOLD: Duration = MAX_TTL;
/// The longest `--max-runtime`.
pub(crate) const MAX_RUNTIME: Duration = Duration::from_secs(7 * 24 * 3600);
/// The shortest and the longest pause of `status --watch`: more often than ten times a second
/// is load on the servers that nobody can read.
pub(crate) const WATCH: (Duration, Duration) =
    (Duration::from_millis(100), Duration::from_secs(24 * 3600));

/// The most slots a semaphore may have: every attempt's script walks them, and a semaphore that
/// wide is better served by a queue or a rate limiter.
pub(crate) const MAX_LIMIT: usize = 1000;

/// A semaphore's number of slots, `--limit`: a whole number from 1 to `MAX_LIMIT`.
pub(crate) fn limit(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{text}' is not a number of slots; expected a whole number from 1 to {MAX_LIMIT}"
        )),
    }
}

pub(crate) fn ttl(text: &str) -> Result<Duration, String> {
    at_most(text, duration(text)?, MAX_TTL)
}

pub(crate) fn wait(text: &str) -> Result<Duration, String> {
    at_most(text, duration_or_zero(text)?, MAX_WAIT)
}

pub(crate) fn retry_delay(text: &str) -> Result<Duration, String> {
    at_most(text, duration(text)?, MAX_WAIT)
}

pub(crate) fn timeout(text: &str) -> Result<Duration, String> {
    at_most(text, duration(text)?, MAX_TIMEOUT)
}

pub(crate) fn kill_after(text: &str) -> Result<Duration, String> {
    at_most(text, duration(text)?, MAX_KILL_AFTER)
}

pub(crate) fn hold(text: &str) -> Result<Duration, String> {
    at_most(text, duration(text)?, MAX_HOLD)
}

pub(crate) fn max_runtime(text: &str) -> Result<Duration, String> {
    at_most(text, duration(text)?, MAX_RUNTIME)
}

/// `status --watch DUR`: from `WATCH.0` to `WATCH.1`.
pub(crate) fn watch(text: &str) -> Result<Duration, String> {
    if !text.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
        // `status --watch deploy`: the name was taken for the pause.
        return Err(format!(
            "{} is not a duration; expected a pause such as 2s after --watch (a lock name goes before it: status NAME --watch)",
            human::quoted(text)
        ));
    }
    let value = at_most(text, duration(text)?, WATCH.1)?;
    if value < WATCH.0 {
        return Err(format!(
            "{} is too short; expected at least {}",
            human::quoted(text),
            humantime::format_duration(WATCH.0)
        ));
    }
    Ok(value)
}

pub(super) fn at_most(text: &str, value: Duration, max: Duration) -> Result<Duration, String> {
    if value > max {
        return Err(format!(
            "{} is too long; expected at most {}",
            human::quoted(text),
            humantime::format_duration(max)
        ));
    }
    Ok(value)
}

/// A token as `acquire` printed it: never empty or blank, which would match no lock and hide a
/// script's missing variable behind "not held".
pub(crate) fn token(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err(format!(
            "{text:?} is empty; expected the token `redlock acquire` printed"
        ));
    }
    if text.trim_end().contains('\n') {
        // `TOKEN=$(redlock acquire NAME --fence)` captures the fence's line too.
        return Err(format!(
            "{text:?} has more than one line; expected the token alone (acquire --fence prints the token, then the fence on a second line)"
        ));
    }
    Ok(text.to_string())
}

/// A humantime duration with a unit and above zero: `500ms`, `30s`, `2m`.
pub(crate) fn duration(text: &str) -> Result<Duration, String> {
    let parsed = duration_or_zero(text)?;
    if parsed.is_zero() {
        return Err(format!(
            "{} is zero; expected a positive duration such as 500ms or 30s",
            human::quoted(text)
        ));
    }
    Ok(parsed)
}

/// Like `duration`, but `0s` is allowed (for `--wait`, where it means one attempt).
pub(crate) fn duration_or_zero(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('-') {
        return Err(format!(
            "{} is negative; expected a positive duration such as 500ms or 30s",
            human::quoted(text)
        ));
    }
    if !trimmed.is_empty() && trimmed.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(format!(
            "{} has no unit; expected a duration such as {trimmed}ms or {trimmed}s",
            human::quoted(text)
        ));
    }
    humantime::parse_duration(trimmed).map_err(|e| {
        format!(
            "{} is not a duration ({}); expected e.g. 500ms, 30s, 2m",
            human::quoted(text),
            human::printable(&e.to_string())
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_need_a_unit_and_a_positive_value() {
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert!(duration("30").unwrap_err().contains("no unit"));
        assert!(duration("0s").unwrap_err().contains("zero"));
        assert!(duration("-5s").unwrap_err().contains("negative"));
        assert!(duration("soon").is_err());
        assert_eq!(duration_or_zero("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn durations_have_documented_maxima() {
        assert_eq!(ttl("7d"), Ok(MAX_TTL));
        assert!(ttl("99999999999h").unwrap_err().contains("at most 7days"));
        assert!(ttl("8d").is_err());
        assert!(timeout("61s").unwrap_err().contains("at most 1m"));
        assert!(kill_after("2h").is_err());
        assert_eq!(wait("0s"), Ok(Duration::ZERO));
        assert!(wait("30d").is_err());
        assert_eq!(hold("7d"), Ok(MAX_HOLD));
        assert!(hold("8d").is_err());
        assert!(hold("0s").unwrap_err().contains("zero"));
        assert!(max_runtime("5").unwrap_err().contains("no unit"));
        assert!(max_runtime("8d").unwrap_err().contains("at most 7days"));
        assert_eq!(watch("2s"), Ok(Duration::from_secs(2)));
        assert!(watch("10ms").unwrap_err().contains("at least 100ms"));
        assert!(watch("2d").unwrap_err().contains("at most 1day"));
        assert!(watch("deploy").unwrap_err().contains("status NAME --watch"));
    }

    #[test]
    fn limits_are_whole_numbers_from_1_to_the_cap() {
        assert_eq!(limit("3"), Ok(3));
        assert_eq!(limit("1000"), Ok(MAX_LIMIT));
        for bad in ["0", "-1", "three", "1001", "2.5", ""] {
            assert!(limit(bad).unwrap_err().contains("from 1 to 1000"), "{bad}");
        }
    }

    #[test]
    fn blank_tokens_are_refused() {
        assert!(token("").is_err());
        assert!(token(" \t").unwrap_err().contains("expected the token"));
        assert_eq!(token("abc").as_deref(), Ok("abc"));
        assert!(token("abc\n7").unwrap_err().contains("second line"));
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        type Parser = fn(&str) -> Result<Duration, String>;

        /// Every duration flag's parser, its maximum, and whether zero is allowed.
        const FLAGS: [(Parser, Duration, bool); 7] = [
            (duration, Duration::MAX, false),
            (duration_or_zero, Duration::MAX, true),
            (ttl, MAX_TTL, false),
            (wait, MAX_WAIT, true),
            (retry_delay, MAX_WAIT, false),
            (timeout, MAX_TIMEOUT, false),
            (kill_after, MAX_KILL_AFTER, false),
        ];

        /// Any text, and text shaped like a duration (signs, huge numbers, fractions, units,
        /// stray whitespace), so that both accepted and rejected paths are walked.
        fn duration_like() -> impl Strategy<Value = String> {
            prop_oneof![
                any::<String>(),
                "[ \t\n]?-?[0-9]{0,22}(\\.[0-9]{0,4})?[ ]?(ns|us|ms|s|sec|m|min|h|d|w|M|y|x|)( ?[0-9]{1,4}(ms|s|m|h|d)){0,2}[ \n]?",
            ]
        }

        /// A usage error as the brief demands: one line that says what was expected.
        fn one_line_with_expectation(message: &str) -> bool {
            !message.contains(['\n', '\r']) && message.contains("expected")
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(128))]

            #[test]
            fn duration_flags_accept_in_range_or_name_the_value_in_one_line(
                text in duration_like()
            ) {
                for (parse, max, zero_allowed) in FLAGS {
                    match parse(&text) {
                        Ok(value) => {
                            prop_assert!(value <= max, "{text:?} gave {value:?}");
                            prop_assert!(zero_allowed || !value.is_zero(), "{text:?} gave zero");
                        }
                        Err(message) => {
                            prop_assert!(one_line_with_expectation(&message), "{message:?}");
                            prop_assert!(message.contains(&human::quoted(&text)), "{message:?}");
                        }
                    }
                }
            }

            #[test]
            fn a_number_and_a_unit_mean_what_they_say(
                n in 1u64..1_000_000,
                (unit, millis) in prop::sample::select(vec![
                    ("ms", 1u64), ("s", 1_000), ("m", 60_000), ("h", 3_600_000),
                ]),
            ) {
                let text = format!("{n}{unit}");
                prop_assert_eq!(duration(&text), Ok(Duration::from_millis(n * millis)));
            }

            #[test]
            fn a_token_is_taken_as_typed_unless_blank(text in any::<String>()) {
                match token(&text) {
                    Ok(taken) => prop_assert_eq!(taken, text),
                    Err(message) => {
                        prop_assert!(text.trim().is_empty(), "{text:?} refused");
                        prop_assert!(one_line_with_expectation(&message), "{message:?}");
                    }
                }
            }
        }
    }
}
