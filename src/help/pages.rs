//! The pages of help, the top level's and each subcommand's, and what each says besides its
//! options: examples, the variables redlock reads beyond its options' own, the variables `exec`
//! gives its command, and which notes (`notes`) explain it. `text` and `man` render the same
//! tables, and `exit` holds the exit statuses.

use super::notes::{Notes, ENDINGS, FINDINGS, STATES};

/// One help page: the top level or a subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Page {
    Top,
    Acquire,
    Release,
    Extend,
    Status,
    History,
    Exec,
    Latch,
    Doctor,
}

impl Page {
    pub(crate) const ALL: [Page; 9] = [
        Page::Top,
        Page::Acquire,
        Page::Release,
        Page::Extend,
        Page::Status,
        Page::History,
        Page::Exec,
        Page::Latch,
        Page::Doctor,
    ];

    /// The subcommand's name; `None` for the top level.
    pub(crate) fn command(self) -> Option<&'static str> {
        match self {
            Page::Top => None,
            Page::Acquire => Some("acquire"),
            Page::Release => Some("release"),
            Page::Extend => Some("extend"),
            Page::Status => Some("status"),
            Page::History => Some("history"),
            Page::Exec => Some("exec"),
            Page::Latch => Some("latch"),
            Page::Doctor => Some("doctor"),
        }
    }

    /// What the page explains beyond its one-line summary, if anything.
    pub(crate) fn notes(self) -> Option<&'static Notes> {
        match self {
            Page::Status => Some(&STATES),
            Page::Doctor => Some(&FINDINGS),
            Page::History => Some(&ENDINGS),
            _ => None,
        }
    }

    pub(crate) fn examples(self) -> &'static [Example] {
        match self {
            Page::Top => &[
                Example {
                    says: Some("run the job only if no other host is running it"),
                    line: "redlock exec nightly-backup -- ./backup.sh",
                },
                Example {
                    says: Some("take, renew and give back a lock by hand"),
                    line: "TOKEN=$(redlock acquire deploy --ttl 5m) || exit",
                },
                Example {
                    says: Some("every lock under the prefix, and who holds it"),
                    line: "redlock status",
                },
            ],
            Page::Acquire => &[
                Example {
                    says: None,
                    line: "TOKEN=$(redlock acquire deploy --ttl 5m) || exit",
                },
                Example {
                    says: None,
                    line: "redlock acquire nightly --wait 30s --json",
                },
                Example {
                    says: Some("each server's answer and latency"),
                    line: "redlock -s redis://a -s redis://b -s redis://c acquire deploy -v",
                },
            ],
            Page::Release => &[
                Example {
                    says: None,
                    line: "redlock release deploy --token \"$TOKEN\"",
                },
                Example {
                    says: None,
                    line: "REDLOCK_TOKEN=$TOKEN redlock release deploy",
                },
                Example {
                    says: Some("a stuck lock: delete it, whoever holds it"),
                    line: "redlock release deploy --force",
                },
            ],
            Page::Extend => &[
                Example {
                    says: None,
                    line: "redlock extend deploy --token \"$TOKEN\" --ttl 5m",
                },
                Example {
                    says: Some("keep it while a long job runs (REDLOCK_TOKEN exported)"),
                    line: "while sleep 100; do redlock extend deploy --ttl 5m || break; done",
                },
            ],
            Page::Status => &[
                Example {
                    says: None,
                    line: "redlock status nightly-backup",
                },
                Example {
                    says: None,
                    line: "redlock status nightly-backup --json | jq .holder",
                },
                Example {
                    says: None,
                    line: "redlock status --json",
                },
                Example {
                    says: Some("follow a lock as it changes hands, until Ctrl-C"),
                    line: "redlock status deploy-production --watch 1s",
                },
            ],
            Page::History => &[
                Example {
                    says: Some(
                        "which host ran each of the last runs, for how long, and how they ended",
                    ),
                    line: "redlock history nightly-backup",
                },
                Example {
                    says: Some("did it run in the last day? (exit 1: no run recorded)"),
                    line: "redlock history nightly-backup --since 24h -n 1",
                },
                Example {
                    says: None,
                    line: "redlock history deploy --json | jq '.runs[0].ended_as'",
                },
            ],
            Page::Latch => &[
                Example {
                    says: Some("create it on every host (the same count is a no-op)"),
                    line: "redlock latch set nightly-etl --count 3 --ttl 12h",
                },
                Example {
                    says: Some("count down once for this host (a retry counts once)"),
                    line: "redlock latch done nightly-etl --id \"$(hostname)\"",
                },
                Example {
                    says: Some("run once all three are done"),
                    line: "redlock latch wait nightly-etl --wait 2h && ./report.sh",
                },
            ],
            Page::Doctor => &[
                Example {
                    says: Some("check the servers a crontab's locks use"),
                    line: "redlock -s redis://r1 -s redis://r2 -s redis://r3 doctor",
                },
                Example {
                    says: Some("a deploy's preflight: any finding fails it"),
                    line: "redlock doctor --strict --ttl 10m || exit 1",
                },
                Example {
                    says: Some("every finding's code, for a script or a monitor"),
                    line: "redlock doctor --json | jq -r '.findings[].code'",
                },
            ],
            Page::Exec => &[
                Example {
                    says: None,
                    line: "redlock exec nightly-backup -- ./backup.sh",
                },
                Example {
                    says: Some("a shell command; wait up to 10 minutes for the lock"),
                    line: "redlock exec deploy --wait 10m -- sh -c 'make deploy'",
                },
                Example {
                    says: Some("cron on every host: one run per schedule, the others exit 0"),
                    line: "redlock -q exec nightly --hold-at-least 5m -E 0 -- ./nightly.sh",
                },
                Example {
                    says: Some("stop a hung command after 2 hours (exit 124)"),
                    line: "redlock exec backup --max-runtime 2h -- ./backup.sh",
                },
                Example {
                    says: Some("a semaphore: at most 3 at once"),
                    line: "redlock exec report --limit 3 --wait 1h -- ./report.sh",
                },
                Example {
                    says: None,
                    line: "redlock exec report --log-format json -- ./r.sh 2>>/var/log/r.jsonl",
                },
            ],
        }
    }

    /// The variables redlock reads on this page's behalf that are no option's own (an option's
    /// is shown with it).
    pub(crate) fn reads(self) -> impl Iterator<Item = &'static Variable> {
        READ.iter().filter(move |variable| match self.command() {
            None => true,
            Some(command) => variable.commands.contains(&command),
        })
    }

    /// The variables the command gets: `exec`'s (and so the top level's) only.
    pub(crate) fn gives(self) -> &'static [Variable] {
        match self {
            Page::Top | Page::Exec => GIVEN,
            _ => &[],
        }
    }
}

/// A command line to copy, and what it does when that is not plain from the line.
pub(crate) struct Example {
    pub(crate) says: Option<&'static str>,
    pub(crate) line: &'static str,
}

/// An environment variable and what it means.
pub(crate) struct Variable {
    pub(crate) name: &'static str,
    pub(crate) meaning: &'static str,
    /// The subcommands that read it.
    commands: &'static [&'static str],
}

/// Every subcommand: each one connects to the servers.
const EVERY: &[&str] = &[
    "acquire", "release", "extend", "status", "history", "exec", "latch", "doctor",
];

/// What redlock reads besides its options' variables (those are listed with each option).
const READ: &[Variable] = &[
    Variable {
        name: "REDLOCK_PASSWORD",
        meaning: "the password for servers whose URL has none (safer than a URL in argv; \
                  --password-file reads it from a file)",
        commands: EVERY,
    },
    Variable {
        name: "REDLOCK_SENTINEL_USERNAME",
        meaning: "the ACL user for the sentinels of redis+sentinel:// groups",
        commands: EVERY,
    },
    Variable {
        name: "REDLOCK_SENTINEL_PASSWORD",
        meaning: "the password for the sentinels of redis+sentinel:// groups",
        commands: EVERY,
    },
    Variable {
        name: "REDLOCK_READ_AS_PASSWORD",
        meaning: "doctor --read-as USER: USER's password, for reading each server's \
                  configuration (INFO, CONFIG GET)",
        commands: &["doctor"],
    },
    Variable {
        name: "REDLOCK_KEY",
        meaning: "exec: set by an enclosing redlock exec; with its REDLOCK_TOKEN, when they name \
                  this lock and the servers confirm the token holds it, COMMAND runs at once \
                  under that grant (re-entry: no second acquisition, no release)",
        commands: &["exec"],
    },
    Variable {
        name: "REDLOCK_FENCE",
        meaning: "exec --fence on re-entry: the enclosing exec's fence, which COMMAND inherits \
                  (without one, --fence is refused)",
        commands: &["exec"],
    },
];

/// What `exec` gives its command.
const GIVEN: &[Variable] = &[
    Variable {
        name: "REDLOCK_NAME",
        meaning: "the lock's NAME",
        commands: &["exec"],
    },
    Variable {
        name: "REDLOCK_KEY",
        meaning: "its Redis key (for a semaphore, the key of the slot held)",
        commands: &["exec"],
    },
    Variable {
        name: "REDLOCK_TOKEN",
        meaning: "the token that holds it; a redlock exec of the same lock inside COMMAND \
                  runs under this grant",
        commands: &["exec"],
    },
    Variable {
        name: "REDLOCK_FENCE",
        meaning: "with --fence: the grant's fencing number, for the protected resource to check \
                  (an outer exec's is removed without --fence)",
        commands: &["exec"],
    },
    Variable {
        name: "REDLOCK_SLOT",
        meaning: "with --limit: the slot held, 0 to N-1 (an outer exec's is removed without \
                  --limit)",
        commands: &["exec"],
    },
    Variable {
        name: "REDLOCK_SHARED",
        meaning: "with --shared: 1, the command holds a share of the lock; an exclusive redlock \
                  exec of the same lock inside it is refused (an outer exec's is removed \
                  without --shared)",
        commands: &["exec"],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::CommandFactory;

    #[test]
    fn every_page_is_a_subcommand_and_every_subcommand_has_a_page() {
        let top = Cli::command();
        let shown: Vec<&str> = top
            .get_subcommands()
            .filter(|sub| !sub.is_hide_set())
            .map(|sub| sub.get_name())
            .collect();
        let pages: Vec<&str> = Page::ALL.iter().filter_map(|page| page.command()).collect();
        assert_eq!(shown, pages);
        assert_eq!(EVERY, pages.as_slice());
    }

    /// Every `REDLOCK_*` name in the source is documented: an option's variable (clap shows it
    /// with the option), or one of the lists above. A new variable without help fails here.
    #[test]
    fn every_variable_in_the_source_is_documented() {
        let mut top = Cli::command();
        top.build();
        let mut documented: Vec<String> = READ
            .iter()
            .chain(GIVEN)
            .map(|variable| variable.name.to_string())
            .collect();
        let mut commands = vec![&top];
        while let Some(command) = commands.pop() {
            commands.extend(command.get_subcommands());
            for arg in command.get_arguments() {
                if let Some(env) = arg.get_env() {
                    documented.push(env.to_string_lossy().into_owned());
                }
            }
        }
        let mut found = Vec::new();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut dirs = vec![root];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let source = std::fs::read_to_string(&path).unwrap();
                    for piece in source.split("\"REDLOCK_").skip(1) {
                        let name: String = piece
                            .chars()
                            .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                            .collect();
                        if !name.is_empty() && piece[name.len()..].starts_with('"') {
                            found.push((format!("REDLOCK_{name}"), path.clone()));
                        }
                    }
                }
            }
        }
        assert!(found.len() > 20, "{found:?}");
        for (name, path) in found {
            assert!(
                documented.contains(&name),
                "{name} (in {}) is not in --help or the man pages",
                path.display()
            );
        }
    }
}
