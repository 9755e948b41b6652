//! Shared locks under contention: a writer's release wakes every shared waiter behind it at
//! once, a waiting writer is not starved by a stream of readers, crowds of readers and
//! writers keep writers alone, also while servers stop, and a batch of readers woken together
//! goes before the writer queued behind it, also with a server stopped or black-holed.

use crate::support::proxy::{Fault, Proxy};
use crate::support::waiters::*;
use crate::support::*;
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn a_writer_release_wakes_every_shared_waiter_behind_it_together() {
    let cluster = Cluster::start(3);
    let writer = cluster.acquire_token("job", &["--ttl", "60s"]);
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let readers: Vec<_> = (0..3)
        .map(|i| {
            let inside = dir.path().join(format!("inside-{i}"));
            let section = format!(
                "touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
                inside.display(),
                go.display()
            );
            // A retry delay far beyond the test: only a wake-up lets a waiter in in time.
            let child = cluster.spawn(&[
                "exec",
                "job",
                "--shared",
                "--wait",
                "60s",
                "--retry-delay",
                "60s",
                "--",
                "sh",
                "-c",
                &section,
            ]);
            wait_for(
                "the waiter to listen everywhere",
                Duration::from_secs(10),
                || subscribers(&cluster) == 3 * (i + 1),
            );
            child
        })
        .collect();
    cluster
        .call(["release", "job", "--token", &writer])
        .succeeds();
    wait_for(
        "all three shared waiters inside at once",
        Duration::from_secs(15),
        || (0..3).all(|i| dir.path().join(format!("inside-{i}")).exists()),
    );
    std::fs::write(&go, "").unwrap();
    for reader in readers {
        let output = reader.finish(Duration::from_secs(20));
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
}

#[test]
fn a_writer_that_waits_is_not_starved_by_a_stream_of_readers() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let stop = dir.path().join("stop");
    // A new shared holder every 100 ms, each inside for 300 ms, logging when it got in.
    let stream = format!(
        r#"i=0; while [ ! -e '{stop}' ] && [ $i -lt 100 ]; do
          "$REDLOCK" exec job --shared --wait 30s -- sh -c 'echo "reader $(date +%s%N)" >> "{log}"; sleep 0.3' &
          sleep 0.1; i=$((i + 1))
        done; wait"#,
        stop = stop.display(),
        log = log.display()
    );
    let workers = spawn_workers(
        &cluster,
        (1, 1, Duration::from_secs(60)),
        &stream,
        dir.path(),
        &[],
    );
    wait_for("readers to overlap", Duration::from_secs(10), || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.lines().count() >= 3)
    });
    let arrived = Instant::now();
    let writer = run(
        &cluster,
        &[
            "exec",
            "job",
            "--wait",
            "20s",
            "--",
            "sh",
            "-c",
            &format!(r#"echo "writer $(date +%s%N)" >> "{}""#, log.display()),
        ],
    );
    let waited = arrived.elapsed();
    std::fs::write(&stop, "").unwrap();
    assert_eq!(writer.status.code(), Some(0), "{}", stderr_of(&writer));
    // The longest reader section is 300 ms; one hand-over and a loaded machine's slack more.
    assert!(
        waited < Duration::from_secs(5),
        "the writer waited {waited:?}"
    );
    for worker in workers {
        let output = worker.wait();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    // Readers kept arriving while the writer waited: some got in only after it.
    let text = std::fs::read_to_string(&log).unwrap();
    let after = text
        .lines()
        .skip_while(|line| !line.starts_with("writer"))
        .filter(|line| line.starts_with("reader"))
        .count();
    assert!(after > 0, "{text}");
}

/// `count` workers looping `sections` times over `exec NAME --wait`, `--shared` or not, each
/// section checking the others with markers: a writer's directory, each reader's file.
fn mixed_crowd(cluster: &Cluster, dir: &Path, readers: usize, writers: usize, sections: usize) {
    std::fs::create_dir(dir.join("readers")).unwrap();
    // A writer marks itself, then checks nobody else is inside; a reader marks itself, then
    // checks no writer is. Of two overlapping sections, the one that starts second sees the
    // other's mark, so any overlap is caught.
    let writer = r#"mkdir "$DIR/writer" || echo "writer beside a writer" >> "$DIR/errors"
        [ -z "$(ls "$DIR/readers")" ] || echo "writer beside readers" >> "$DIR/errors"
        sleep 0.02
        [ -z "$(ls "$DIR/readers")" ] || echo "writer beside readers" >> "$DIR/errors"
        echo w >> "$DIR/sections"; rmdir "$DIR/writer""#;
    let reader = r#"touch "$DIR/readers/$$"
        [ ! -d "$DIR/writer" ] || echo "reader beside a writer" >> "$DIR/errors"
        ls "$DIR/readers" | wc -l >> "$DIR/peaks"; sleep 0.05
        [ ! -d "$DIR/writer" ] || echo "reader beside a writer" >> "$DIR/errors"
        echo r >> "$DIR/sections"; rm "$DIR/readers/$$""#;
    let script = format!(
        r#"for i in $(seq {sections}); do "$REDLOCK" exec job $MODE --wait "$WAIT" -- sh -c "$SECTION" || exit 1; done"#
    );
    let wait = Duration::from_secs(60);
    let mut workers = spawn_workers(
        cluster,
        (readers, sections as u32, wait),
        &script,
        dir,
        &[("MODE", "--shared"), ("SECTION", reader)],
    );
    workers.extend(spawn_workers(
        cluster,
        (writers, sections as u32, wait),
        &script,
        dir,
        &[("MODE", ""), ("SECTION", writer)],
    ));
    for worker in workers {
        let output = worker.wait();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
}

fn assert_mixed_crowd(dir: &Path, readers: usize, writers: usize, sections: usize) {
    let errors = std::fs::read_to_string(dir.join("errors")).unwrap_or_default();
    assert!(errors.is_empty(), "{errors}");
    let ran = std::fs::read_to_string(dir.join("sections")).unwrap();
    assert_eq!(
        ran.lines().filter(|l| *l == "w").count(),
        writers * sections
    );
    assert_eq!(
        ran.lines().filter(|l| *l == "r").count(),
        readers * sections
    );
    let peak = std::fs::read_to_string(dir.join("peaks"))
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().parse::<usize>().ok())
        .max()
        .unwrap();
    assert!(peak > 1, "shared holders never overlapped");
}

#[test]
fn a_mixed_crowd_of_readers_and_writers_keeps_writers_alone() {
    let cluster = Cluster::start(5);
    let dir = tempfile::tempdir().unwrap();
    mixed_crowd(&cluster, dir.path(), 12, 3, 3);
    assert_mixed_crowd(dir.path(), 12, 3, 3);
}

#[test]
fn a_mixed_crowd_keeps_writers_alone_while_two_of_five_servers_stop() {
    let cluster = std::sync::Arc::new(Cluster::start(5));
    let dir = tempfile::tempdir().unwrap();
    let pauser = {
        let cluster = cluster.clone();
        let sections = dir.path().join("sections");
        std::thread::spawn(move || {
            wait_for("a few sections", Duration::from_secs(60), || {
                std::fs::read_to_string(&sections).is_ok_and(|s| s.lines().count() >= 6)
            });
            cluster.servers[3].stop();
            cluster.servers[4].stop();
            std::thread::sleep(Duration::from_secs(2));
            cluster.servers[3].resume();
            cluster.servers[4].resume();
        })
    };
    mixed_crowd(&cluster, dir.path(), 12, 3, 3);
    pauser.join().unwrap();
    assert_mixed_crowd(dir.path(), 12, 3, 3);
}

/// How the fifth of five servers is faulted while a batch of readers is handed the lock.
enum Fifth {
    Stopped,
    BlackHoled,
}

/// Two readers queued behind a holder, the first of them past its first attempts, and a writer
/// queued behind them; the fifth server `fifth`. The holder's release must let both readers in
/// at once (a batch), ahead of the writer, by the wake-up alone.
fn a_batch_of_readers_goes_before_the_writer_behind_it(fifth: Fifth) {
    let cluster = Cluster::start(5);
    let mut watch = Watch::new(&cluster);
    watch.each(&[4], &holder_key(Duration::from_secs(60)));
    let proxy = Proxy::start(cluster.servers[4].port);
    let urls = match fifth {
        Fifth::Stopped => {
            cluster.servers[4].stop();
            cluster.urls()
        }
        Fifth::BlackHoled => {
            proxy.set(Fault::BlackHole);
            let mut urls: Vec<String> = cluster.servers[..4].iter().map(Redis::url).collect();
            urls.push(format!("redis://127.0.0.1:{}", proxy.port));
            urls.join(",")
        }
    };
    let live = [0, 1, 2, 3];
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let inside = |i: usize| dir.path().join(format!("inside-{i}"));
    let reader = |i: usize| {
        let section = format!(
            "touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
            inside(i).display(),
            go.display()
        );
        Cmd::new(redlock_on(&urls))
            .args(["exec", "job", "--shared", "--wait", "60s"])
            .args([
                "--retry-delay",
                &format!("{}s", WAITER_RETRY_DELAY.as_secs()),
            ])
            .args(["--", "sh", "-c", &section])
            .spawn()
    };
    // The head, past its first attempts; the second reader on its first pause.
    let mut readers = vec![past_first_attempts(&mut watch, &live, || reader(0))];
    readers.push(reader(1));
    watch.wait_for_waiters(&live, 2);
    let mut writer = Cmd::new(redlock_on(&urls))
        .args(["acquire", "job", "--wait", "60s", "--ttl", "60s"])
        .args([
            "--retry-delay",
            &format!("{}s", WAITER_RETRY_DELAY.as_secs()),
        ])
        .spawn();
    watch.wait_for_waiters(&live, 3);
    Cmd::new(redlock_on(&urls))
        .args(["release", "job", "--token", "holder"])
        .assert()
        .code(0);
    // Their own pauses are 10 s and more: only the wake-up lets them in sooner.
    wait_for(
        "both readers inside at once",
        WAITER_RETRY_DELAY / 4,
        || (0..2).all(|i| inside(i).exists()),
    );
    assert!(writer.try_wait().is_none(), "the writer got in beside them");
    std::fs::write(&go, "").unwrap();
    for reader in readers {
        let output = reader.finish(Duration::from_secs(20));
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    }
    // The last reader's release hands the lock to the writer.
    let output = writer.finish(WAITER_RETRY_DELAY / 4);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    cluster.servers[4].resume();
}

#[test]
fn a_batch_of_readers_goes_before_the_writer_behind_it_with_a_server_stopped() {
    a_batch_of_readers_goes_before_the_writer_behind_it(Fifth::Stopped);
}

#[test]
fn a_batch_of_readers_goes_before_the_writer_behind_it_with_a_server_black_holed() {
    a_batch_of_readers_goes_before_the_writer_behind_it(Fifth::BlackHoled);
}
