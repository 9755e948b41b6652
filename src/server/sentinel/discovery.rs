//! Asking a group's sentinels where its master is: every sentinel at once, each on a thread of
//! its own, the answers coming in as they arrive. What is done with them (which master to
//! trust) is the group's (group.rs).

use redis::{Client, RedisResult};
use std::sync::mpsc;
use std::time::Duration;

/// Stack of a thread that asks one sentinel: the redis client needs little.
const ASKER_STACK: usize = 256 * 1024;

/// One sentinel's answer: the master's address, or `None` when it knows no such master.
pub(super) type Answer = RedisResult<Option<(String, u16)>>;

/// Asks every one of `sentinels` at once where the master named `master_name` is, each within
/// `timeout`: the answers come on the receiver, with the index of the sentinel that gave each,
/// in the order they arrive.
pub(super) fn ask_all(
    sentinels: &[Client],
    master_name: &str,
    timeout: Duration,
) -> mpsc::Receiver<(usize, Answer)> {
    let (answers, asked) = mpsc::channel();
    for (index, sentinel) in sentinels.iter().enumerate() {
        let sentinel = sentinel.clone();
        let name = master_name.to_string();
        let answers = answers.clone();
        // Not joined: a black-holed sentinel's thread ends by its own timeout, later.
        let _ = std::thread::Builder::new()
            .stack_size(ASKER_STACK)
            .spawn(move || {
                let _ = answers.send((index, ask(&sentinel, &name, timeout)));
            });
    }
    asked
}

/// One sentinel's answer.
fn ask(sentinel: &Client, master_name: &str, timeout: Duration) -> Answer {
    let mut connection = sentinel.get_connection_with_timeout(timeout)?;
    connection.set_read_timeout(Some(timeout))?;
    connection.set_write_timeout(Some(timeout))?;
    let answer: Option<(String, String)> = redis::cmd("SENTINEL")
        .arg("get-master-addr-by-name")
        .arg(master_name)
        .query(&mut connection)?;
    answer
        .map(|(host, port)| match port.parse() {
            Ok(port) => Ok((host, port)),
            Err(_) => Err(std::io::Error::other(format!("answered port '{port}'")).into()),
        })
        .transpose()
}
