//! `redlock doctor`: findings against misconfigured plain servers (`findings`), through Sentinel
//! groups and Redis Clusters (`groups`), and servers set up wrong as doctor and every command see
//! them (`misconfigured`).

mod findings;
mod groups;
mod misconfigured;
