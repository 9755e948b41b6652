//! `redlock doctor`'s own arguments: the longest TTL the deployment's locks use (what a restart
//! without persistence and a clock offset are measured against), whether warnings fail the
//! check, and JSON for programs; and what `-v` and `-q` mean for it, which its help says.

use super::global::OutputArgs;
use super::headings::{CHECKS, OUTPUT};
use super::values::ttl;
use clap::{Arg, Args};
use std::time::Duration;

#[derive(Args, Debug)]
pub(crate) struct DoctorArgs {
    /// The longest TTL your locks use (at most 7d)
    ///
    /// A server without persistence that started less than this ago may have forgotten locks it
    /// granted, and a clock offset is allowed the drift allowance of this TTL.
    #[arg(long, value_name = "DUR", env = "REDLOCK_TTL", default_value = "30s", value_parser = ttl, help_heading = CHECKS)]
    pub(crate) ttl: Duration,

    /// Treat every warning as an error (exit 1)
    ///
    /// For a CI or deploy preflight.
    #[arg(long, env = "REDLOCK_STRICT", help_heading = CHECKS)]
    pub(crate) strict: bool,

    /// Read each server's configuration (INFO, CONFIG GET) as USER
    ///
    /// For a lock user that may not read them (docs/doctor.md's ACL grants neither, since
    /// CONFIG GET would show it every password in the configuration): USER's password comes
    /// from REDLOCK_READ_AS_PASSWORD, never argv. What redlock's own user may do is still
    /// checked as that user.
    #[arg(long, value_name = "USER", env = "REDLOCK_READ_AS", help_heading = CHECKS)]
    pub(crate) read_as: Option<String>,

    /// Print one JSON object for programs
    ///
    /// Every server's facts and every finding (its fields: docs/json.md).
    #[arg(long, env = "REDLOCK_JSON", help_heading = OUTPUT)]
    pub(crate) json: bool,
}

/// What `-v` and `-q` do for doctor, said on its own help page and man page: the global
/// options' help speaks of rounds and busy locks, which doctor has none of. The options are the
/// global ones (`OutputArgs`), cloned with doctor's texts.
const OWN_TEXTS: [(&str, &str, &str); 2] = [
    (
        "verbose",
        "Also each finding's cause in the server's or the library's own words",
        "Adds, for doctor, under each finding that comes from an error, its cause as the server \
         or the client library said it (`--json` always has it, in `detail`); the report shows \
         every server's facts either way.",
    ),
    (
        "quiet",
        "Changes nothing: the report is always whole",
        "Changes nothing for doctor: its report goes to stdout whole, warnings included; the exit \
         status says whether it found an error (1: a misconfigured server, whose fix it names, \
         among them) or too few servers answered while those down could bring the quorum back (69).",
    ),
];

/// Doctor's own `-v` and `-q`, which its help pages show instead of the global ones.
pub(super) fn output_options(command: clap::Command) -> clap::Command {
    let global = OutputArgs::augment_args(clap::Command::new("output"));
    OWN_TEXTS
        .iter()
        .fold(command, |command, (id, help, long_help)| {
            let arg: Arg = global
                .get_arguments()
                .find(|arg| arg.get_id() == id)
                .expect("OutputArgs has -v and -q")
                .clone();
            command.arg(arg.global(false).help(*help).long_help(*long_help))
        })
}
