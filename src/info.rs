//! What an `INFO` reply says, field by field: read by the alias guard (`run_id`) and by
//! `redlock doctor` (every fact it shows). `INFO` answers where `CONFIG` is often renamed or
//! denied, so it is what redlock reads a server's state from.

/// The value of `field` in an `INFO` reply (`name:value` lines under `# Section` headings).
pub(crate) fn field<'a>(info: &'a str, field: &str) -> Option<&'a str> {
    info.lines().find_map(|line| {
        let (name, value) = line.trim_end().split_once(':')?;
        (name == field).then_some(value)
    })
}

/// The value of `field` as a number.
pub(crate) fn number(info: &str, name: &str) -> Option<u64> {
    field(info, name)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_by_name() {
        let info = "# Server\r\nredis_version:7.0.15\r\nrun_id:abc\r\nuptime_in_seconds:12\r\n";
        assert_eq!(field(info, "run_id"), Some("abc"));
        assert_eq!(field(info, "redis_version"), Some("7.0.15"));
        assert_eq!(field(info, "run"), None);
        assert_eq!(number(info, "uptime_in_seconds"), Some(12));
        assert_eq!(number(info, "run_id"), None);
    }
}
