//! Everything redlock says on stderr: errors, warnings, lifecycle events (acquired, renewed,
//! renewal failed, lost, released, child exited) and, with `-v`, each round's per-server detail.
//!
//! One `Reporter` per run, made once from the command line (`-q`, `-v`, `--log-format`) and
//! passed by value (it is two small enums) to whatever reports. Every line is written whole with
//! one call, so lines from two threads never interleave. Text is for
//! people; `--log-format json` makes every line one JSON object for log collectors.
//!
//! Servers only ever appear as their redacted URL (`Server::display`), and tokens only as their
//! first 8 characters (`token_id`): a log line never carries a password or a usable token.
//!
//! This file owns the `Reporter` (what each level shows, and in which form); the events, each
//! with its JSON fields and its words, are in `event`, `-v`'s round rendering in `round`, and the
//! writing of one line in `line`.

pub(crate) mod event;
pub(crate) mod line;
pub(crate) mod round;

pub(crate) use crate::cli::LogFormat as Format;
use crate::lock::Round;
pub(crate) use event::token_id;
use event::Event;
use line::{json_line, text_line, Severity};
use round::{round_text, RoundEvent};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    /// `-q`: errors only.
    Quiet,
    Normal,
    /// `-v`: also each round, server by server.
    Verbose,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reporter {
    pub(crate) level: Level,
    pub(crate) format: Format,
}

impl Reporter {
    /// The reporter `-q`, `-v` and `--log-format` ask for.
    pub(crate) fn from_args(output: &crate::cli::OutputArgs) -> Reporter {
        let level = if output.quiet {
            Level::Quiet
        } else if output.verbose {
            Level::Verbose
        } else {
            Level::Normal
        };
        Reporter {
            level,
            format: output.log_format,
        }
    }

    fn shows(&self, severity: Severity) -> bool {
        match severity {
            Severity::Error => true,
            Severity::Warning => self.level >= Level::Normal,
            Severity::Notice => self.level >= Level::Normal || self.format == Format::Json,
            // Text stays silent on success unless asked; collectors asked by choosing json.
            Severity::Info => {
                self.level == Level::Verbose
                    || (self.level == Level::Normal && self.format == Format::Json)
            }
        }
    }

    /// Writes one event, if this level shows it.
    pub(crate) fn emit<E: Event>(&self, event: &E) {
        if !self.shows(E::SEVERITY) {
            return;
        }
        match self.format {
            Format::Text => text_line(&format!("redlock: {}", event.text())),
            Format::Json => json_line(E::SEVERITY, E::NAME, event),
        }
    }

    /// The fault margin a run ended with (once per run, from the engine: config/servers.rs).
    /// A server down is a warning, which `-q` silences: it may come back. A misconfigured one
    /// is written even with `-q`: it will not come back by itself, and a crontab's `-q` run
    /// must still mail it to someone by the next morning.
    pub(crate) fn margin(&self, margin: &event::Margin) {
        if !self.shows(Severity::Warning) && !margin.misconfigured() {
            return;
        }
        match self.format {
            Format::Text => text_line(&format!("redlock: {}", event::Event::text(margin))),
            Format::Json => json_line(Severity::Warning, "margin", margin),
        }
    }

    /// A warning: something that does not stop us.
    pub(crate) fn warn(&self, message: &str) {
        self.emit(&event::Warning { message });
    }

    /// The error that ends the run, with the exit status it ends with.
    pub(crate) fn error(&self, message: &str, exit_code: u8) {
        self.emit(&event::Error { message, exit_code });
    }

    /// One round, server by server (`-v` only).
    pub(crate) fn round(&self, round: &Round<'_>) {
        if self.level != Level::Verbose {
            return;
        }
        match self.format {
            Format::Text => text_line(&round_text(round)),
            Format::Json => json_line(Severity::Info, "round", &RoundEvent::of(round)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reporter(level: Level, format: Format) -> Reporter {
        Reporter { level, format }
    }

    #[test]
    fn levels_filter_by_severity() {
        let quiet = reporter(Level::Quiet, Format::Json);
        assert!(quiet.shows(Severity::Error));
        assert!(!quiet.shows(Severity::Warning));
        assert!(!quiet.shows(Severity::Info));
        let text = reporter(Level::Normal, Format::Text);
        assert!(text.shows(Severity::Warning));
        assert!(!text.shows(Severity::Info));
        assert!(reporter(Level::Normal, Format::Json).shows(Severity::Info));
        assert!(reporter(Level::Verbose, Format::Text).shows(Severity::Info));
        // A busy lock: one line unless -q, and always in a JSON log.
        assert!(text.shows(Severity::Notice));
        assert!(!reporter(Level::Quiet, Format::Text).shows(Severity::Notice));
        assert!(quiet.shows(Severity::Notice));
    }
}
