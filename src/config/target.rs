//! The lock or latch a name names: the name checked (not empty, not too long, printable), the
//! kind it is taken as (a mutex, shared or exclusive, or a semaphore of N slots), and the usage
//! error when the servers record another N.

use super::servers::Config;
use crate::exit::usage;
use crate::lock::keys::{LatchKeys, LockKeys};
use crate::lock::latch::Latch;
use crate::lock::{Kind, Target};

const MAX_NAME_BYTES: usize = 1024;

impl Config {
    /// The lock `name` names: a mutex (taken `shared` or exclusively), or with `limit` a
    /// semaphore of that many slots, whose grants also get a fencing number with `fence`. The
    /// name is checked first.
    pub(crate) fn target(
        &self,
        name: &str,
        limit: Option<usize>,
        fence: bool,
        shared: bool,
    ) -> anyhow::Result<Target> {
        check_name(name)?;
        let kind = match (limit, shared) {
            (Some(_), true) => {
                return Err(usage(
                    "--shared and --limit do not go together: a semaphore's holders already share it, N at a time; expected one or the other",
                ))
            }
            (Some(slots), false) => Kind::Semaphore { slots },
            (None, true) => Kind::Shared,
            (None, false) => Kind::Mutex,
        };
        Ok(Target::new(
            name,
            LockKeys::new(&self.prefix, name),
            kind,
            fence,
        ))
    }

    /// The latch `name` names (`redlock latch`), checked as a lock name is: a latch's key is
    /// its name's lock key and a suffix after the separator (`lock::keys`).
    pub(crate) fn latch(&self, name: &str) -> anyhow::Result<Latch> {
        check_named("latch", name)?;
        Ok(Latch {
            name: name.to_string(),
            keys: LatchKeys::new(&self.prefix, name),
        })
    }
}

/// `--limit asked` for NAME, which the servers record as a semaphore of `slots` slots
/// (`lock::Limit`): a usage error, since every user of a semaphore must give the same N.
pub(crate) fn limit_mismatch(name: &str, asked: Option<usize>, slots: usize) -> anyhow::Error {
    let given = asked.map_or("no --limit".to_string(), |asked| format!("--limit {asked}"));
    usage(format!(
        "lock '{name}' is a semaphore of {slots} slots, and {given} does not match it (every user of a semaphore must give the same N); expected --limit {slots}"
    ))
}

/// A lock name: not empty, not too long, and without control characters, so that no lock's key
/// is ever one of the keys redlock keeps beside a lock (`lock::keys`).
fn check_name(name: &str) -> anyhow::Result<()> {
    check_named("lock", name)
}

/// A `kind` (lock or latch) name, by the lock name's rules.
fn check_named(kind: &str, name: &str) -> anyhow::Result<()> {
    if name.is_empty() {
        return Err(usage(format!(
            "empty {kind} name; expected a name such as nightly-backup"
        )));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(usage(format!(
            "{kind} name of {} bytes is too long; expected at most {MAX_NAME_BYTES}",
            name.len()
        )));
    }
    if let Some(bad) = name.chars().find(|c| c.is_control()) {
        return Err(usage(format!(
            "{kind} name {name:?} contains the control character {bad:?}; expected printable text"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::servers::tests::args;

    #[test]
    fn names_are_checked() {
        let config = Config::from_args(&args(&[])).unwrap();
        let key = |name: &str| {
            config
                .target(name, None, false, false)
                .map(|target| target.keys.lock().to_string())
        };
        assert_eq!(key("job").unwrap(), "redlock:job");
        assert!(key("").is_err());
        assert!(key("a\nb").unwrap_err().to_string().contains("control"));
        let latch = config.latch("etl").unwrap();
        assert_eq!(latch.keys.key(), "redlock:etl\u{1f}latch");
        let err = config.latch("").unwrap_err().to_string();
        assert!(err.contains("empty latch name"), "{err}");
        assert!(config.latch("a\u{1f}b").is_err());
    }

    mod properties {
        use super::*;
        use crate::exit::{self, Outcome};
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(128))]

            #[test]
            fn a_lock_name_is_its_key_or_a_one_line_usage_error(
                name in prop_oneof![
                    any::<String>(),
                    "[a-z:/._ -]{0,8}\\PC{0,4}[\n\t\u{1b}\u{0}]?\\PC{0,4}",
                    "[a-z]{1020,1030}",
                ]
            ) {
                let config = Config::from_args(&args(&[])).unwrap();
                match config.target(&name, None, false, false) {
                    Ok(target) => {
                        prop_assert_eq!(target.keys.lock(), format!("redlock:{name}"));
                        prop_assert!(!name.is_empty() && name.len() <= MAX_NAME_BYTES);
                        prop_assert!(!name.chars().any(char::is_control), "{name:?}");
                    }
                    Err(err) => {
                        prop_assert_eq!(exit::code_of(&err).0, Outcome::Usage.code());
                        let message = err.to_string();
                        prop_assert!(!message.contains(['\n', '\r']), "{message:?}");
                        prop_assert!(message.contains("expected"), "{message}");
                    }
                }
            }
        }
    }
}
