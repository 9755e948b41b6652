//! Each lock-taking command's own options, checked after the name and before any server: what
//! `acquire` and `exec` take, what `release` gives back or keeps (`--hold-at-least`), and what
//! `extend` renews.

use super::servers::Config;
use crate::cli::{ExtendArgs, ReleaseArgs, TakeArgs};
use crate::exit::usage;
use crate::lock::{Acquisition, Hold, Target};
use crate::schedule::Schedule;
use std::time::Duration;

impl Config {
    /// What `acquire` (with `renewed_by` None) or `exec` (with its renewal schedule's
    /// `--kill-after`) is asked to take, after every check that needs no server: the name, and a
    /// TTL that leaves validity after a round and, for `exec`, room for its renewals.
    pub(crate) fn take(
        &self,
        take: &TakeArgs,
        renewed_by: Option<Duration>,
    ) -> anyhow::Result<(Target, Option<Schedule>)> {
        let target = self.target(&take.name, take.limit, take.fence, take.shared)?;
        self.check_ttl(take.ttl)?;
        let schedule = renewed_by
            .map(|kill_after| self.renewal_schedule(take.ttl, kill_after))
            .transpose()?;
        Ok((target, schedule))
    }

    /// What `release` is asked to give back, and for how long to keep it (`--hold-at-least`,
    /// which counts from the acquisition time the token carries: a token that carries none is a
    /// usage error with nothing half-done).
    pub(crate) fn release(&self, args: &ReleaseArgs) -> anyhow::Result<(Target, Option<Hold>)> {
        let target = self.target(&args.name, args.limit, false, args.shared)?;
        check_hold(&target, args.hold_at_least)?;
        let hold = match (args.hold_at_least, args.token.as_deref()) {
            (Some(at_least), Some(token)) => {
                let Some(holder) = crate::token::holder(token) else {
                    return Err(usage(
                        "--hold-at-least needs a token made by `redlock acquire` (it carries the acquisition time); this one does not",
                    ));
                };
                Some(Hold {
                    at_least,
                    acquired: Acquisition::Token {
                        unix_ms: holder.acquired_unix_ms,
                    },
                })
            }
            _ => None,
        };
        Ok((target, hold))
    }

    /// What `extend` is asked to renew: a holder's token, with a TTL that leaves validity.
    pub(crate) fn extension(&self, args: &ExtendArgs) -> anyhow::Result<Target> {
        let target = self.target(&args.name, args.limit, false, args.shared)?;
        self.check_ttl(args.ttl)?;
        if crate::token::holder(&args.token).is_some_and(|holder| holder.kept.is_some()) {
            // A kept lock ends when its hold does: stretching it would defeat the bound that
            // `--hold-at-least` promises (see lock/keep.rs).
            return Err(usage(
                "--token is the value of a lock kept by --hold-at-least, not a holder's token; a kept lock cannot be extended",
            ));
        }
        Ok(target)
    }
}

/// `--hold-at-least` keeps a lock's key after its run; a shared holder has no key of its own to
/// keep, and keeping the shared mark would keep every other holder's share too.
pub(crate) fn check_hold(target: &Target, hold: Option<Duration>) -> anyhow::Result<()> {
    if target.is_shared() && hold.is_some() {
        return Err(usage(
            "--hold-at-least does not go with --shared: a shared holder has no key of its own to keep; expected one or the other",
        ));
    }
    Ok(())
}
