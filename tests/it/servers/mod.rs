//! Server kinds beyond a plain one: Sentinel groups (`sentinel`, `sentinel_masters`), Redis
//! Cluster (`cluster_mode`, `cluster_failover`), TLS and ACL users (`security`), and docs/doctor.md's
//! ACL recipe (`acl`).

mod acl;
mod cluster_failover;
mod cluster_mode;
mod security;
mod sentinel;
mod sentinel_masters;
