//! A lock held on only some servers, or by another client's key type: what release, extend and
//! status do there, and that what they say matches what they did.

use crate::harness::*;

const KEY: &str = "redlock:job";
const TOKEN: &str = "0123456789abcdef0123456789abcdef:host:1:1";

/// Our token at the lock's key, with a 10 s TTL, on the servers of `on` only.
fn held_on(cluster: &Cluster, on: &[usize]) {
    for &index in on {
        let _: () = redis::cmd("SET")
            .arg(KEY)
            .arg(TOKEN)
            .arg("PX")
            .arg(10_000)
            .query(&mut cluster.servers[index].connection())
            .unwrap();
    }
}

#[test]
fn release_with_another_server_down_says_what_each_server_did() {
    let mut cluster = Cluster::start(3);
    // Taken while server 3 was down, released while server 1 is.
    held_on(&cluster, &[0, 1]);
    cluster.servers[0].kill();
    let output = cluster
        .redlock()
        .args(["release", "job", "--token", TOKEN])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(69), "{}", stderr_of(&output));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("deleted on 1, not held by this token on 1, no answer from 1"),
        "{stderr}"
    );
    assert!(stderr.contains("connection refused"), "{stderr}");
    assert!(!stderr.contains("servers answered"), "{stderr}");
    assert_eq!(cluster.servers[1].get(KEY), None);
}

#[test]
fn a_release_held_on_a_minority_deletes_that_copy_and_says_so() {
    let cluster = Cluster::start(3);
    held_on(&cluster, &[0]);
    let output = cluster
        .redlock()
        .args(["release", "job", "--token", TOKEN])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("not held by this token on a quorum")
            && stderr.contains("deleted on the 1 of 3"),
        "{stderr}"
    );
    assert_eq!(cluster.values(KEY), vec![None, None, None]);
}

#[test]
fn an_extend_held_on_a_minority_puts_the_ttl_back_and_says_so() {
    let cluster = Cluster::start(3);
    held_on(&cluster, &[0]);
    let output = cluster
        .redlock()
        .args(["extend", "job", "--token", TOKEN, "--ttl", "60s"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("extended on the 1 of 3") && stderr.contains("put back on 1 of them"),
        "{stderr}"
    );
    assert!(!stderr.contains("nothing was extended"), "{stderr}");
    // Not the 60 s the failed extension asked for: the 10 s the holder had, less time passed.
    let pttl = cluster.servers[0].pttl(KEY);
    assert!((5_000..=10_000).contains(&pttl), "pttl {pttl}");
    assert_eq!(cluster.servers[0].get(KEY).as_deref(), Some(TOKEN));
}
