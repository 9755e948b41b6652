//! What a waiting acquire tells a progress display: where it stands before each pause, and about
//! once a second during a long one.

use crate::clock::BootInstant;
use std::time::Duration;

/// How often a progress display is refreshed during a long pause.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Where a waiting acquire stands, for a progress display.
#[derive(Debug, Clone)]
pub(crate) struct WaitProgress {
    pub(crate) waited: Duration,
    /// The token most refusing servers hold, if they showed one.
    pub(crate) holder: Option<String>,
    /// The shortest remaining TTL of the holder's key on the servers that showed it.
    pub(crate) holder_ttl: Option<Duration>,
}

/// A progress display, if there is one, and when the wait it shows started.
pub(super) struct Progress<'a> {
    pub(super) report: Option<&'a mut dyn FnMut(&WaitProgress)>,
    pub(super) started: BootInstant,
}

impl Progress<'_> {
    /// Pauses for `pause` unless `next_wake` (which waits up to the duration it is given) brings
    /// a wake-up, telling the display where things stand (`status`) along the way.
    pub(super) fn pause<W>(
        &mut self,
        next_wake: &mut dyn FnMut(Duration) -> Option<W>,
        pause: Duration,
        status: &WaitProgress,
    ) -> Option<W> {
        let Some(report) = self.report.as_mut() else {
            return next_wake(pause);
        };
        let until = BootInstant::now().add(pause);
        let mut status = status.clone();
        loop {
            status.waited = self.started.elapsed();
            report(&status);
            let left = until.remaining();
            if left.is_zero() {
                return None;
            }
            let slice = left.min(PROGRESS_EVERY);
            if let Some(wake) = next_wake(slice) {
                return Some(wake);
            }
            if let Some(ttl) = status.holder_ttl.as_mut() {
                *ttl = ttl.saturating_sub(slice);
            }
        }
    }
}
