//! `status --watch`: redrawn in place on a terminal (a pseudo-terminal here) over the
//! connections it opened once, a table per refresh when stdout is not a terminal, a JSON
//! document per refresh with `--json`, the list followed without a name; SIGINT ends it, exit 0.

use crate::support::*;
use nix::pty::{openpty, Winsize};
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The refresh these tests watch at.
const EVERY: Duration = Duration::from_millis(100);

/// How long `frames` refreshes may take on a loaded machine.
fn within(frames: u32) -> Duration {
    EVERY * frames + Duration::from_secs(10)
}

/// Connections `server` has accepted since it started (this call's own included).
fn connections(server: &Redis) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query(&mut server.connection())
        .unwrap();
    info.lines()
        .find_map(|line| line.strip_prefix("total_connections_received:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("total_connections_received")
}

#[test]
fn status_watch_redraws_in_place_on_a_terminal_until_sigint() {
    let cluster = Cluster::start(1);
    let size = Winsize {
        ws_row: 30,
        ws_col: 120,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pty = openpty(Some(&size), None).unwrap();
    let screen = Arc::new(Mutex::new(Vec::new()));
    let reader = {
        let screen = screen.clone();
        let mut master = std::fs::File::from(pty.master);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with an error (EIO) once nothing holds the terminal open.
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                screen.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    let watching = cluster
        .redlock()
        .args(["status", "job", "--watch", "100ms"])
        .stdout(std::fs::File::from(pty.slave))
        .spawn();
    let text = || String::from_utf8_lossy(&screen.lock().unwrap()).into_owned();
    let frames = || text().matches("\x1b[H").count();
    wait_for("two frames", within(2), || frames() >= 2);
    // Each frame is drawn over the last: home, each line cleared to its end, the rest below
    // cleared; over the connection it made once.
    let before = connections(&cluster.servers[0]);
    let seen = frames();
    wait_for("three more frames", within(3), || frames() >= seen + 3);
    assert_eq!(connections(&cluster.servers[0]), before + 1, "reconnected");
    // A change shows in a later frame.
    cluster.acquire_token("job", &[]);
    wait_for("a frame with the lock held", within(2), || {
        let text = text();
        let last = text.rsplit("\x1b[H").next().unwrap_or_default().to_string();
        last.contains("held by") && last.contains("\x1b[J")
    });
    signal(watching.id() as i32, libc::SIGINT);
    let output = watching.wait();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    reader.join().unwrap();
    let text = text();
    let first = text.split("\x1b[H").nth(1).unwrap_or_default();
    assert!(
        first.starts_with("every 100ms: status job, at ")
            && first.contains("(Ctrl-C to stop)\x1b[K"),
        "{first:?}"
    );
    assert!(
        first.contains("lock job (key redlock:job): free"),
        "{first:?}"
    );
    assert!(
        text.starts_with("\x1b[?25l") && text.ends_with("\x1b[?25h"),
        "{text:?}"
    );
}

/// The lines of `path` so far.
fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn status_watch_writes_a_frame_per_refresh_elsewhere_and_follows_the_list() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();

    // --json without a name: one list per line, each a document, the new lock in a later one.
    let documents = dir.path().join("documents");
    let watching = cluster
        .redlock()
        .args(["status", "--watch", "100ms", "--json"])
        .stdout(std::fs::File::create(&documents).unwrap())
        .spawn();
    wait_for("a document", within(1), || !lines(&documents).is_empty());
    cluster.acquire_token("job", &[]);
    let lists = |line: &String| -> Vec<String> {
        let document: Value = serde_json::from_str(line).expect("one document per line");
        assert_eq!(document["version"], 1, "{line}");
        document["locks"]
            .as_array()
            .expect("a list of locks")
            .iter()
            .map(|lock| lock["name"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    wait_for("a document that lists the lock", within(2), || {
        lines(&documents).iter().any(|line| lists(line) == ["job"])
    });
    signal(watching.id() as i32, libc::SIGINT);
    assert_eq!(watching.wait().status.code(), Some(0));
    let all = lines(&documents);
    assert!(lists(&all[0]).is_empty(), "{all:?}");

    // A table per refresh, each under the line that says when, no terminal sequences.
    let tables = dir.path().join("tables");
    let watching = cluster
        .redlock()
        .args(["status", "job", "--watch", "100ms"])
        .stdout(std::fs::File::create(&tables).unwrap())
        .spawn();
    let headers = || {
        lines(&tables)
            .iter()
            .filter(|line| line.starts_with("every 100ms: status job, at "))
            .count()
    };
    wait_for("two tables", within(2), || headers() >= 2);
    signal(watching.id() as i32, libc::SIGINT);
    assert_eq!(watching.wait().status.code(), Some(0));
    let text = std::fs::read_to_string(&tables).unwrap();
    assert!(!text.contains('\x1b'), "{text:?}");
    let frames: Vec<&str> = text.split("\n\n").filter(|f| !f.is_empty()).collect();
    assert!(frames.len() >= 2, "{text}");
    for frame in frames {
        assert!(
            frame.contains("\nlock job (key redlock:job): held by"),
            "{frame}"
        );
    }
}
