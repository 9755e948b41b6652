//! How much help says: `-h` a screen (the top level's in 40 lines, each subcommand's in 50, at
//! 80 and 100 columns), `--help` everything (each option in full with its variable, the
//! credentials and TLS, the exit statuses); doctor's `-v` and `-q` in doctor's terms; the
//! variables of `--fence` and `--shared` explained beside them; `--version` naming the build's
//! target. Help only: no server.

use crate::support::*;

/// A help page as a terminal of `columns` shows it: `redlock WORDS FLAG`.
fn help_page(words: &[String], flag: &str, columns: &str) -> String {
    let output = redlock_cmd(words.iter().map(String::as_str).chain([flag]))
        .env("COLUMNS", columns)
        .assert()
        .success();
    stdout_of(output.get_output())
}

/// The subcommands a help page lists under "Commands:" (`help` aside).
fn listed(help: &str) -> Vec<String> {
    let list = help.split("\nCommands:\n").nth(1).unwrap_or_default();
    list.lines()
        .take_while(|line| !line.trim().is_empty())
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

#[test]
fn short_help_fits_a_screen_and_long_help_keeps_everything() {
    let top = help_page(&[], "-h", "80");
    let mut pages: Vec<Vec<String>> = vec![vec![]];
    for sub in listed(&top) {
        let verbs = listed(&help_page(std::slice::from_ref(&sub), "-h", "80"));
        pages.push(vec![sub.clone()]);
        pages.extend(verbs.into_iter().map(|verb| vec![sub.clone(), verb]));
    }
    assert!(pages.len() >= 13, "{pages:?}");
    for columns in ["80", "100"] {
        for page in &pages {
            let name = format!("redlock {} at {columns} columns", page.join(" "));
            let most = if page.is_empty() { 40 } else { 50 };
            let short = help_page(page, "-h", columns);
            let lines = short.lines().count();
            assert!(lines <= most, "{name}: -h is {lines} lines:\n{short}");
            assert!(
                short.contains("(see more with '--help')"),
                "{name}:\n{short}"
            );
            assert!(!short.contains("[env: "), "{name}:\n{short}");
            let long = help_page(page, "--help", columns);
            assert!(long.lines().count() > lines, "{name}");
            assert!(long.contains("[env: REDLOCK_SERVERS]"), "{name}");
            assert!(long.contains("--tls-ca <FILE>"), "{name}");
            // The top level and each subcommand give every exit status in --help alone.
            if page.len() < 2 {
                assert!(long.contains("\nExit status:\n  0 "), "{name}:\n{long}");
                assert!(long.contains("\n  69 "), "{name}");
                assert!(!short.contains("\nExit status:"), "{name}");
                assert!(short.contains("--help adds"), "{name}:\n{short}");
            }
        }
    }
}

#[test]
fn doctors_verbose_and_quiet_say_what_they_do_for_doctor() {
    // The text of option `flag` on a --help page: from its line to the next option's.
    let option = |page: &str, flag: &str| -> String {
        let help = help_page(&[page.to_string()], "--help", "100");
        let from = help.split(flag).nth(1).unwrap_or_default();
        let text = from.split("\n  -").next().unwrap_or_default();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let verbose = option("doctor", "-v, --verbose");
    let quiet = option("doctor", "-q, --quiet");
    assert!(verbose.contains("for doctor"), "{verbose}");
    assert!(quiet.contains("for doctor"), "{quiet}");
    assert!(!verbose.contains("validity") && !quiet.contains("busy lock"));
    // Every other page keeps the lock terms.
    let exec = option("exec", "-v, --verbose");
    assert!(
        exec.contains("validity") && !exec.contains("doctor"),
        "{exec}"
    );
}

#[test]
fn the_variables_of_fence_and_shared_are_explained_where_the_flags_are() {
    for sub in ["acquire", "exec", "release", "extend"] {
        let help = help_page(&[sub.to_string()], "--help", "100");
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("Its variable is REDLOCK_SHARING, not REDLOCK_SHARED"),
            "{sub}"
        );
        if sub == "acquire" || sub == "exec" {
            assert!(
                flat.contains("Its variable is REDLOCK_FENCING, not REDLOCK_FENCE"),
                "{sub}"
            );
        }
    }
}

/// `--version` names the target the binary was built for (build.rs), so a bug report says which
/// build it came from: this test's own target, as the compiler describes it, for the top level
/// and a subcommand alike. The man pages, shared by every build, carry the version alone.
#[test]
fn version_names_the_target_it_was_built_for() {
    let triple = env!("BUILT_FOR_TARGET");
    assert!(
        triple.starts_with(&format!("{}-", std::env::consts::ARCH)),
        "{triple} is not for {}",
        std::env::consts::ARCH
    );
    assert!(triple.contains("-linux-"), "{triple}");
    assert_eq!(
        triple.ends_with("-musl"),
        cfg!(target_env = "musl"),
        "{triple}"
    );
    let version = env!("CARGO_PKG_VERSION");
    for (words, name) in [(vec!["--version"], "redlock"), (vec!["-V"], "redlock")]
        .into_iter()
        .chain([(vec!["exec", "--version"], "redlock-exec")])
    {
        let output = redlock_cmd(words.iter().copied()).assert().success();
        assert_eq!(
            stdout_of(output.get_output()),
            format!("{name} {version} ({triple})"),
            "{words:?}"
        );
    }
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/man/redlock.1"))
        .expect("man/redlock.1");
    assert!(page.contains(&format!("\"redlock {version}\"")), "{page}");
    assert!(!page.contains(triple), "man/redlock.1 names {triple}");
}
