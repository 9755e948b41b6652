//! The command line a newcomer types: flock's spellings answered with redlock's (exit 64, one
//! line, nothing sent to any server), help that fits the terminal and `redlock help` (how much
//! `-h` and `--help` say: `meta/help.rs`), man pages with every section, and the JSON log's `pid`
//! always redlock's own.

use crate::support::*;
use std::path::Path;

/// Each flock habit, and what its one line must say.
const FLOCK_HABITS: &[(&[&str], &str)] = &[
    (
        &["-n", "job", "true"],
        "redlock tries once unless --wait is given",
    ),
    (
        &["exec", "--nonblock", "job", "--", "true"],
        "redlock tries once unless --wait is given",
    ),
    (
        &["exec", "-w", "10", "job", "--", "true"],
        "durations need a unit: --wait 10s",
    ),
    (
        &["-w", "10", "exec", "job", "--", "true"],
        "redlock exec NAME --wait 10s -- COMMAND",
    ),
    (
        &["exec", "job", "-c", "make deploy"],
        "exec NAME -- sh -c CMD",
    ),
    (
        &["exec", "-x", "job", "--", "true"],
        "exclusive unless --shared",
    ),
    (
        &["exec", "-e", "job", "--", "true"],
        "exclusive unless --shared",
    ),
    (
        &["-s", "job", "exec", "x", "--", "true"],
        "'-s' is --server URL in redlock, not flock's shared lock",
    ),
    (
        &["exec", "-s", "job", "--", "true"],
        "'-s' is --server URL in redlock, not flock's shared lock",
    ),
    (
        &["--shared", "exec", "job", "--", "true"],
        "a shared lock is --shared, after the subcommand",
    ),
    (&["exec", "-u", "job"], "redlock release NAME --token TOKEN"),
    (&["job", "./backup.sh"], "redlock exec job -- COMMAND"),
    (
        &["exec", "job", "./backup.sh"],
        "the command goes after --: redlock exec NAME -- ./backup.sh",
    ),
];

#[test]
fn flock_habits_exit_64_naming_the_redlock_way_and_send_nothing() {
    let cluster = Cluster::start(1);
    let mut watch = cluster.servers[0].connection();
    let before = Redis::connections_received(&mut watch);
    for (args, hint) in FLOCK_HABITS {
        cluster
            .cmd(*args)
            .assert()
            .code(64)
            .stderr(predicate::str::contains(*hint).and(line_count(1)))
            .stdout(predicate::str::is_empty().trim());
    }
    // No run even connected to the server.
    assert_eq!(Redis::connections_received(&mut watch), before);
}

#[test]
fn a_url_or_socket_after_dash_s_is_a_server_not_a_habit() {
    let cluster = Cluster::start(1);
    let url = cluster.servers[0].url_with_password();
    call(["-s", &url, "acquire", "job"]).succeeds();
    // A socket path that nothing listens on: unavailable, not a flock habit.
    call(["-s", "/nonexistent/redis.sock", "status", "job"])
        .exits(69)
        .stderr(predicate::str::contains("flock").not());
}

#[test]
fn redlock_help_exec_exits_0_and_prints_execs_help() {
    let help = redlock_cmd(["help", "exec"])
        .env("COLUMNS", "80")
        .assert()
        .success()
        .stdout(predicate::str::contains("Usage: redlock exec"));
    let flag = redlock_cmd(["exec", "--help"])
        .env("COLUMNS", "80")
        .assert()
        .success();
    assert_eq!(stdout_of(help.get_output()), stdout_of(flag.get_output()));
    call(["help"]).succeeds().stdout_has("Commands:");
}

#[test]
fn help_fits_the_terminal_and_groups_its_options() {
    for (columns, widest) in [("80", 80), ("60", 60), ("300", 100)] {
        for sub in ["acquire", "release", "extend", "status", "exec"] {
            let output = redlock_cmd([sub, "--help"])
                .env("COLUMNS", columns)
                .assert()
                .success();
            let help = stdout_of(output.get_output());
            let examples: Vec<&str> = help
                .split("Examples:")
                .nth(1)
                .unwrap_or_default()
                .lines()
                .take_while(|line| !line.is_empty())
                .collect();
            for line in help.lines() {
                // An example's command line is never broken, so a narrow terminal may fold it.
                let example = columns != "80" && examples.contains(&line);
                assert!(
                    example || line.chars().count() <= widest,
                    "{sub} at {columns} columns: {line:?}"
                );
            }
            assert!(help.contains("\nServers and TLS:\n"), "{sub}");
            assert!(help.contains("\nOutput:\n"), "{sub}");
            assert!(help.contains("\nExit status:\n  0 "), "{sub}");
        }
    }
    let exec = redlock_cmd(["exec", "--help"])
        .env("COLUMNS", "80")
        .assert()
        .success();
    let exec = stdout_of(exec.get_output());
    for heading in ["Lock:", "Waiting:", "Exec:"] {
        assert!(exec.contains(&format!("\n{heading}\n")), "{heading}");
    }
    let environment = exec.split("Environment of COMMAND:").nth(1).unwrap();
    for name in ["NAME", "KEY", "TOKEN", "FENCE", "SLOT"] {
        assert!(
            environment.contains(&format!("  REDLOCK_{name} ")),
            "{name}"
        );
    }
    // The TLS options stand under their own heading, not among exec's.
    let own = exec.split("Servers and TLS:").next().unwrap();
    assert!(!own.contains("--tls-ca"));
}

#[test]
fn man_pages_have_every_section() {
    let fresh = tempfile::tempdir().unwrap();
    redlock_cmd(["generate", "man"])
        .arg(fresh.path())
        .assert()
        .success();
    for page in [
        "redlock.1",
        "redlock-acquire.1",
        "redlock-release.1",
        "redlock-extend.1",
        "redlock-status.1",
        "redlock-exec.1",
    ] {
        let text = std::fs::read_to_string(fresh.path().join(page)).unwrap();
        for section in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "ENVIRONMENT",
            "\"EXIT STATUS\"",
            "EXAMPLES",
            "\"SEE ALSO\"",
        ] {
            assert!(
                text.contains(&format!("\n.SH {section}\n")),
                "{page}: {section}"
            );
        }
        assert!(text.contains("\\fBflock\\fR(1)"), "{page}");
    }
    let exec = std::fs::read_to_string(fresh.path().join("redlock-exec.1")).unwrap();
    for name in ["NAME", "KEY", "TOKEN", "FENCE", "SLOT"] {
        assert!(exec.contains(&format!("\\fBREDLOCK_{name}\\fR")), "{name}");
    }
    assert!(!Path::new(&fresh.path().join("redlock-help.1")).exists());
}

/// Every line of a JSON log, parsed.
fn log(output: &std::process::Output) -> Vec<serde_json::Value> {
    stderr_of(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn the_log_gives_the_commands_pid_as_child_pid_and_keeps_pid_redlocks() {
    let cluster = Cluster::start(1);
    let output = cluster
        .redlock()
        .args(["--log-format", "json", "exec", "job", "--max-runtime", "1s"])
        .args(["--", "sh", "-c", "echo $$ $PPID; exec sleep 30"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(124), "{}", stderr_of(&output));
    // The command is redlock's own child: its $PPID is redlock's pid.
    let pids: Vec<u64> = stdout_of(&output)
        .split_whitespace()
        .map(|pid| pid.parse().unwrap())
        .collect();
    let (child, redlock) = (pids[0], pids[1]);
    let events = log(&output);
    assert!(events.iter().all(|e| e["pid"] == redlock), "{events:?}");
    for kind in ["timed_out", "child_exited"] {
        let event = events
            .iter()
            .find(|e| e["event"] == kind)
            .unwrap_or_else(|| panic!("no {kind}: {events:?}"));
        assert_eq!(event["child_pid"], child, "{kind}");
    }
}

#[test]
fn keys_with_a_unit_separator_are_escaped_in_text_messages() {
    let cluster = Cluster::start(1);
    cluster
        .call(["-v", "acquire", "pool", "--limit", "2"])
        .succeeds()
        .stderr(predicate::str::contains('\u{1f}').not())
        .stderr(predicate::str::contains("redlock:pool\\x1fslots"));
    // The JSON log carries the key as data.
    let json = [
        "-v",
        "--log-format",
        "json",
        "acquire",
        "pool",
        "--limit",
        "2",
    ];
    let output = cluster.cmd(json).assert();
    let round = log(output.get_output())
        .into_iter()
        .find(|e| e["event"] == "round")
        .expect("a round");
    assert_eq!(round["key"], "redlock:pool\u{1f}slots");
}

#[test]
fn help_shows_the_environment_variable_of_every_option_and_examples() {
    for sub in ["acquire", "release", "extend", "status", "exec"] {
        let output = call([sub, "--help"]).succeeds();
        let help = output.stdout_text();
        // Help wraps to the terminal, which may break a line inside `[env: …]`.
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for var in [
            "REDLOCK_SERVERS",
            "REDLOCK_TIMEOUT",
            "REDLOCK_TLS_CA",
            "REDLOCK_TLS_INSECURE",
            "REDLOCK_LOG_FORMAT",
            "REDLOCK_VERBOSE",
            "REDLOCK_QUIET",
        ] {
            assert!(flat.contains(&format!("[env: {var}")), "{sub}: {var}");
        }
        let examples = help.split("Examples:").nth(1).unwrap_or_default();
        assert!(examples.lines().count() >= 2, "{sub}:\n{help}");
    }
}

#[test]
fn committed_completions_man_pages_and_json_docs_are_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // What the binary writes, where it is committed, and at least how many files.
    let generated = [
        ("completions", "completions", 3),
        ("man", "man", 3),
        ("json", "docs", 1),
    ];
    for (what, dir, files) in generated {
        let fresh = tempfile::tempdir().unwrap();
        redlock_cmd(["generate", what])
            .arg(fresh.path())
            .assert()
            .success();
        let mut names: Vec<_> = std::fs::read_dir(fresh.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert!(names.len() >= files, "{what}: {names:?}");
        for name in names {
            let new = std::fs::read(fresh.path().join(&name)).unwrap();
            let committed = std::fs::read(root.join(dir).join(&name)).unwrap_or_default();
            assert!(
                new == committed,
                "{dir}/{} is stale: run `cargo run -- generate {what} {dir}` and commit",
                name.to_string_lossy()
            );
        }
    }
}
