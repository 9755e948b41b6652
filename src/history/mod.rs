//! The run history of a lock name: what each run's give-back records (entry.rs, record.rs) and
//! `redlock history NAME`, which reads every server's copy in one round, merges them (merge.rs)
//! and shows the runs newest first (show.rs). Recording rides in the release or keep that ends
//! a run; the list on the servers, and why nothing but this command ever reads it, is
//! lock/history.rs's.

mod entry;
mod merge;
mod record;
mod show;

pub(crate) use entry::Ended;
pub(crate) use record::{of_exec, of_release, retention};
pub(crate) use show::HistoryDocument;

use crate::cli::HistoryArgs;
use crate::config::Config;
use crate::exit::{self, Outcome};
use crate::report::Reporter;
use crate::status::print;
use merge::{merge, Cut};
use show::Shown;

/// `redlock history NAME`: exits 0 with runs to show, 1 with none, 69 when fewer than a quorum
/// of servers answered (what they had is shown first).
pub(crate) fn run(
    config: &Config,
    reporter: Reporter,
    args: &HistoryArgs,
) -> anyhow::Result<Outcome> {
    let target = config.target(&args.name, None, false, false)?;
    let mut engine = config.redlock(reporter);
    let copies = engine.history(&target);
    let cut = Cut::new(args.since, args.last, crate::token::unix_ms_now());
    let answers: Vec<_> = copies.iter().map(|(_, copy)| copy).collect();
    let runs = merge(&answers, cut);
    let key = target.keys.history();
    let shown = Shown {
        name: &args.name,
        key: &key,
        runs: &runs,
        copies: &copies,
        quorum: engine.quorum(),
        since: args.since,
    };
    if args.json {
        print(&crate::schema::to_json(&shown.document())?);
    } else {
        print(shown.table().trim_end());
    }
    let answered = answers.iter().filter(|copy| copy.is_ok()).count();
    if answered < engine.quorum() {
        let reasons: Vec<String> = copies
            .iter()
            .filter_map(|(server, copy)| copy.as_ref().err().map(|e| format!("{server}: {e}")))
            .collect();
        return Err(exit::incomplete(
            "history",
            (answered, copies.len()),
            &reasons,
        ));
    }
    Ok(if runs.is_empty() {
        Outcome::Negative
    } else {
        Outcome::Success
    })
}
