//! The latch the latch tests count down, `etl`: its key and wake-up channel, `redlock latch`
//! runs on a cluster, and a count-down that must count.

use super::cluster::Cluster;

/// The key and channel of the latch named `etl`.
pub const LATCH_KEY: &str = "redlock:etl\x1flatch";
pub const CHANNEL: &str = "redlock:etl\x1flatch\x1fwake";

/// `redlock latch ARGS` on `cluster`, for one `assert_cmd` run.
pub fn latch(cluster: &Cluster, args: &[&str]) -> assert_cmd::Command {
    cluster.cmd([&["latch"], args].concat())
}

/// `latch done etl --id ID`, which must count.
pub fn count_down(cluster: &Cluster, id: &str) {
    latch(cluster, &["done", "etl", "--id", id])
        .assert()
        .success();
}
