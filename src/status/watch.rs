//! `status --watch [DUR]`: the same `status` (of NAME, or the list) every DUR over the same
//! connections, until a signal stops it (exit 0, as watch(1) does). On a terminal each frame is
//! redrawn in place; otherwise each is written after the last: a table, under a line that says
//! when, or with `--json` one document per line.
//!
//! A frame is what one `status` prints (`text::captured`), so the watch shows exactly what a
//! `status` shows. The signals are blocked before the engine starts any thread and read from a
//! signalfd between frames: a signal during a frame's rounds waits, pending, until the frame is
//! drawn, and the screen is never left half-drawn.

use super::text::captured;
use crate::cli::StatusArgs;
use crate::clock::BootInstant;
use crate::config::Config;
use crate::exit::{self, Outcome};
use crate::report::{Level, Reporter};
use crate::signals;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::time::{Duration, SystemTime};

/// Home, then each line cleared to its end, then everything below cleared: a redraw in place
/// that never blanks the screen between frames.
const HOME: &str = "\x1b[H";
const CLEAR_LINE: &str = "\x1b[K";
const CLEAR_BELOW: &str = "\x1b[J";
const HIDE_CURSOR: &str = "\x1b[?25l";
const SHOW_CURSOR: &str = "\x1b[?25h";

pub(super) fn run(
    config: &Config,
    reporter: Reporter,
    args: &StatusArgs,
    every: Duration,
) -> anyhow::Result<Outcome> {
    signals::block(&signals::TERMINATING)?;
    let stop = signals::signal_fd(&signals::TERMINATING)?;
    let mut engine = config.redlock(reporter);
    let mut screen = Screen {
        terminal: !args.json && std::io::stdout().is_terminal(),
        json: args.json,
        started: false,
    };
    let what = match &args.name {
        Some(name) => format!("status {name}"),
        None => "status".into(),
    };
    let mut frame_reporter = reporter;
    loop {
        let started = BootInstant::now();
        let (text, outcome) = captured(|| super::once(config, frame_reporter, &mut engine, args));
        let mut text = text;
        if let Err(err) = outcome {
            // A usage error (a bad name, another --limit) is the same in every frame.
            if exit::code_of(&err).0 == Outcome::Usage.code() {
                screen.finish();
                return Err(err);
            }
            screen.note(&mut text, &format!("{err:#}"), reporter);
        }
        let drawn = screen.draw(&text, &what, every);
        if screen.terminal {
            // What stderr said once (a warning) is not said again over the table.
            frame_reporter.level = Level::Quiet;
        }
        if drawn.is_err() {
            // Nobody reads any more (`| head`): a quiet end.
            return Ok(Outcome::Success);
        }
        if stopped(&stop, started.add(every)) {
            screen.finish();
            return Ok(Outcome::Success);
        }
    }
}

/// Waits until `until` or a signal, whichever comes first: whether a signal came.
fn stopped(stop: &nix::sys::signalfd::SignalFd, until: BootInstant) -> bool {
    loop {
        if signals::read(stop).is_some() {
            return true;
        }
        let left = until.remaining();
        if left.is_zero() {
            return false;
        }
        let timeout =
            PollTimeout::try_from(left.as_millis().saturating_add(1)).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(stop.as_fd(), PollFlags::POLLIN)];
        let _ = poll(&mut fds, timeout);
    }
}

/// Where the frames go: a terminal redrawn in place, or a stream of frames.
struct Screen {
    terminal: bool,
    /// A stream of JSON documents, one per line.
    json: bool,
    /// The first frame is drawn (and the cursor hidden).
    started: bool,
}

impl Screen {
    /// An error of this frame: under the table on a terminal, else on stderr.
    fn note(&self, text: &mut String, message: &str, reporter: Reporter) {
        if self.terminal {
            text.push_str(&format!("redlock: {message}\n"));
        } else {
            reporter.warn(message);
        }
    }

    /// Writes one frame: `text` as `status` printed it, under a line saying what and when.
    fn draw(&mut self, text: &str, what: &str, every: Duration) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        if self.json {
            // One document per line, as `status --json` prints it.
            out.write_all(text.as_bytes())?;
            return out.flush();
        }
        if !self.terminal {
            // A table under the line that says when, and a blank line after it.
            writeln!(out, "{}\n{text}", header(what, every, false))?;
            return out.flush();
        }
        let (rows, columns) = size();
        let mut frame = String::new();
        if !self.started {
            frame.push_str(HIDE_CURSOR);
            self.started = true;
        }
        frame.push_str(HOME);
        let lines = std::iter::once(header(what, every, true))
            .chain(text.lines().map(str::to_string))
            // The last row stays free: writing it would scroll the screen.
            .take(rows.saturating_sub(1).max(1));
        for line in lines {
            frame.extend(line.chars().take(columns));
            frame.push_str(CLEAR_LINE);
            frame.push('\n');
        }
        frame.push_str(CLEAR_BELOW);
        out.write_all(frame.as_bytes())?;
        out.flush()
    }

    /// Gives the terminal its cursor back.
    fn finish(&self) {
        if self.terminal && self.started {
            let _ = write!(std::io::stdout(), "{SHOW_CURSOR}");
            let _ = std::io::stdout().flush();
        }
    }
}

/// `every 2s: status deploy, at 2026-01-02T03:04:05Z`, and on a terminal how to stop.
fn header(what: &str, every: Duration, terminal: bool) -> String {
    let at = humantime::format_rfc3339_seconds(SystemTime::now());
    let every = humantime::format_duration(every);
    let stop = if terminal { " (Ctrl-C to stop)" } else { "" };
    format!("every {every}: {what}, at {at}{stop}")
}

/// The terminal's rows and columns (24 by 80 when it does not say).
fn size() -> (usize, usize) {
    match rustix::termios::tcgetwinsize(std::io::stdout()) {
        Ok(size) if size.ws_row > 0 && size.ws_col > 0 => {
            (usize::from(size.ws_row), usize::from(size.ws_col))
        }
        _ => (24, 80),
    }
}
