//! `status` for people: aligned columns, a verdict in a few words, a kept lock's run, times as
//! UTC and "ago", and the waiters in their queue order.

use crate::human;
use crate::lock::{self, Holding, QueuedWaiter, SharedHolder};
use crate::token::{self, RunEnd};
use std::cell::RefCell;
use std::io::Write;
use std::time::Duration;

pub(super) fn is_kept(token: &str) -> bool {
    token::holder(token).is_some_and(|h| h.kept.is_some())
}

/// For a lock kept after its run (`--hold-at-least`): how the run ended, until when the lock is
/// kept, and who ran what.
pub(super) fn kept_summary(token: &str, validity: Option<Duration>) -> Option<String> {
    let holder = token::holder(token)?;
    let run = holder.kept.as_ref()?;
    let until = validity.map_or(String::new(), |left| {
        let at = token::unix_ms_now().saturating_add(left.as_millis() as u64);
        format!(
            ", until about {} ({} from now)",
            human::utc(at),
            human::duration(left)
        )
    });
    let kept = match run.end {
        RunEnd::Released => format!("kept after {} at {}", run.end, when(run.finished_unix_ms)),
        end => format!(
            "kept after a run that finished at {} with {end}",
            when(run.finished_unix_ms)
        ),
    };
    let command = holder
        .command
        .as_deref()
        .map_or(String::new(), |command| format!(" ({command})"));
    Some(format!(
        "{kept}{until}; run by pid {} on {}{command}",
        holder.pid, holder.host
    ))
}

/// A listed lock's state, holder and validity.
pub(super) fn listed(verdict: &Holding) -> (&'static str, String, String) {
    match verdict {
        Holding::Held {
            token, validity, ..
        } => (
            "held",
            lock::describe_token(token),
            validity.map_or("no expiry".into(), human::duration),
        ),
        Holding::Foreign { kind, .. } => ("held", lock::describe_foreign(kind), "-".into()),
        Holding::Shared { readers, .. } => (
            "held",
            lock::describe_shared(readers.len()),
            readers
                .iter()
                .map(|reader| reader.validity)
                .max()
                .map_or("-".into(), human::duration),
        ),
        Holding::Free => ("free", "-".into(), "-".into()),
        Holding::Partial { .. } => ("partial", "-".into(), "-".into()),
        Holding::Unknown => ("unknown", "-".into(), "-".into()),
    }
}

thread_local! {
    /// While `--watch` makes a frame (`captured`), what `print` is asked to write.
    static FRAME: RefCell<Option<String>> = const { RefCell::new(None) };
}

pub(crate) fn print(text: &str) {
    let kept = FRAME.with_borrow_mut(|frame| {
        let frame = frame.as_mut()?;
        frame.push_str(text);
        frame.push('\n');
        Some(())
    });
    if kept.is_none() {
        // A closed pipe (`redlock status | head -1`) is not an error worth reporting.
        let _ = writeln!(std::io::stdout(), "{text}");
    }
}

/// Runs `show` with what it prints kept rather than written: the text, then `show`'s result.
/// So `--watch` shows what a `status` prints, exactly, without a second way to print it.
pub(super) fn captured<T>(show: impl FnOnce() -> T) -> (String, T) {
    FRAME.set(Some(String::new()));
    let result = show();
    (FRAME.take().unwrap_or_default(), result)
}

/// Columns padded to their widest cell, two spaces apart; the last column is not padded.
pub(crate) fn align<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

pub(super) fn short_token(token: &str) -> String {
    if token.chars().count() > 12 {
        format!("{}…", token.chars().take(12).collect::<String>())
    } else {
        token.to_string()
    }
}

/// An acquisition time as UTC and how long ago it was.
pub(super) fn when(unix_ms: u64) -> String {
    let ago = token::unix_ms_now()
        .checked_sub(unix_ms)
        .map(|ms| format!(" ({} ago)", human::duration(Duration::from_millis(ms))))
        .unwrap_or_default();
    format!("{}{ago}", human::utc(unix_ms))
}

/// The shared holders of a lock, who each is and how long each is still certain to hold it.
pub(super) fn readers_table(readers: &[SharedHolder]) -> String {
    let mut rows = vec![[
        "SHARED HOLDER".to_string(),
        "ACQUIRED".to_string(),
        "VALID FOR".to_string(),
        "SERVERS".to_string(),
    ]];
    for reader in readers {
        let acquired =
            token::holder(&reader.token).map_or("-".into(), |holder| when(holder.acquired_unix_ms));
        rows.push([
            lock::describe_token(&reader.token),
            acquired,
            human::duration(reader.validity),
            reader.servers.to_string(),
        ]);
    }
    align(&rows)
}

/// The waiters, in the order they queued: nothing when there are none.
pub(super) fn waiters_table(waiters: &[QueuedWaiter]) -> String {
    if waiters.is_empty() {
        return String::new();
    }
    let mut rows = vec![[
        "WAITING".to_string(),
        "WHO".to_string(),
        "SINCE".to_string(),
        "SERVERS".to_string(),
    ]];
    for (place, waiter) in waiters.iter().enumerate() {
        let mut who = lock::describe_token(&waiter.token);
        if waiter.shared {
            who.push_str(", shared");
        }
        rows.push([
            (place + 1).to_string(),
            who,
            when(waiter.since_unix_ms),
            waiter.servers.to_string(),
        ]);
    }
    format!("{} waiting:\n{}", waiters.len(), align(&rows))
}

/// Says which servers a listing read from the index rather than by walking their keys, and
/// what that leaves out: once, on stderr, so that the table stays the same.
pub(super) fn say_indexed(reporter: crate::report::Reporter, indexed: &[String]) {
    if indexed.is_empty() {
        return;
    }
    reporter.warn(&format!(
        "listed {} from the index of the keys redlock set there (over {} keys): a lock another client (redsync, redis-py) took there is not shown; --scan walks every key",
        indexed.join(", "),
        crate::human::thousands(crate::lock::INDEXED_ABOVE),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn align_pads_all_but_the_last_column() {
        let rows = [
            ["a".to_string(), "bb".to_string()],
            ["ccc".to_string(), "d".to_string()],
        ];
        assert_eq!(align(&rows), "a    bb\nccc  d\n");
    }
}
