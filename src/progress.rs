//! The one live line a waiting acquire keeps on a terminal's stderr: which lock, who holds it,
//! how long we have waited, and the holder's TTL. Nothing at all when stderr is not a terminal,
//! so logs and scripts never see it.

use crate::human;
use crate::lock::{self, WaitProgress};
use std::io::{IsTerminal, Write};

pub(crate) struct WaitLine {
    name: String,
    drawn: bool,
}

impl WaitLine {
    /// A line for lock `name`, or `None` when stderr is not a terminal.
    pub(crate) fn on_terminal(name: &str) -> Option<WaitLine> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        Some(WaitLine {
            name: name.to_string(),
            drawn: false,
        })
    }

    /// Rewrites the line in place.
    pub(crate) fn show(&mut self, progress: &WaitProgress) {
        let text = truncate(&render(&self.name, progress), columns().saturating_sub(1));
        let mut err = std::io::stderr().lock();
        // `\r` back to the start, `ESC[K` erases what a longer previous line left behind.
        let _ = write!(err, "\r{text}\x1b[K");
        let _ = err.flush();
        self.drawn = true;
    }

    /// Erases the line, so what is printed next starts on a clean line.
    pub(crate) fn clear(&mut self) {
        if std::mem::take(&mut self.drawn) {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}

impl Drop for WaitLine {
    fn drop(&mut self) {
        self.clear();
    }
}

fn render(name: &str, progress: &WaitProgress) -> String {
    let mut text = format!(
        "redlock: waiting {} for lock '{name}'",
        human::whole_seconds(progress.waited)
    );
    if let Some(holder) = &progress.holder {
        text.push_str(", held by ");
        text.push_str(&lock::describe_token(holder));
    }
    if let Some(ttl) = progress.holder_ttl {
        text.push_str(&format!(", ttl {}", human::duration(ttl)));
    }
    text
}

fn truncate(text: &str, max_chars: usize) -> String {
    text.chars().take(max_chars.max(20)).collect()
}

/// The terminal's width, 80 when it cannot be told.
fn columns() -> usize {
    match rustix::termios::tcgetwinsize(std::io::stderr()) {
        Ok(size) if size.ws_col > 0 => usize::from(size.ws_col),
        _ => 80,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn line_names_lock_holder_wait_and_ttl() {
        let progress = WaitProgress {
            waited: Duration::from_millis(3_400),
            holder: Some("0123456789abcdef0123456789abcdef:web1:42:1700000000000".into()),
            holder_ttl: Some(Duration::from_millis(4_260)),
        };
        assert_eq!(
            render("deploy", &progress),
            "redlock: waiting 3s for lock 'deploy', held by pid 42 on web1, ttl 4.3s"
        );
        let unknown = WaitProgress {
            waited: Duration::ZERO,
            holder: None,
            holder_ttl: None,
        };
        assert_eq!(
            render("deploy", &unknown),
            "redlock: waiting 0s for lock 'deploy'"
        );
    }

    #[test]
    fn truncate_keeps_a_readable_minimum() {
        assert_eq!(truncate("abcdef", 3), "abcdef");
        assert_eq!(truncate(&"x".repeat(50), 30).len(), 30);
    }
}
