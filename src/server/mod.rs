//! Server addresses: parsing `redis://`, `rediss://`, Sentinel and cluster URLs, preparing each
//! server's client (credentials and TLS settings included), and showing servers without their
//! password.
//!
//! `Server` (one server as the user named it, and how to reach it) is `endpoint`'s; the URL text
//! (accepted forms, refused query parameters, redaction) is in `url`, the redis client's TLS and
//! credential settings in `client`, Sentinel groups in `sentinel`, Redis Clusters in `cluster`,
//! the connection a request goes on, whichever the kind, in `session` (a cluster's nodes as one,
//! in `route`). A round reaches every server on a `wire` that never blocks (waited on together:
//! `ready`; a published message told from a reply: `message`): over our own `socket` to a single
//! server (TCP, TLS configured by `tls`, or a Unix socket), where one reply ends is `resp`'s; or
//! through a `relay`, a thread holding the blocking session of a Sentinel group, a cluster or a
//! RESP3 server. The record of a round's replies its closure runs over again is `replay`'s (a
//! failure kept as data, `failure`). The blocking connections (a group's master, a cluster's
//! nodes, a relay's, `doctor`'s) are `blocking`, the redis crate's, used as a wire is: what a new
//! connection says first (`setup`) rides with its first request, and a script's source with its
//! first use on a connection (`scripts`). How a server was named (its address, a group's
//! sentinels) is `named`'s.

mod blocking;
mod client;
mod cluster;
mod diagnosis;
mod endpoint;
mod failure;
mod message;
mod named;
mod ready;
mod relay;
mod replay;
mod resp;
mod route;
pub(crate) mod scripts;
mod sentinel;
mod session;
mod setup;
mod sink;
mod socket;
mod tls;
mod url;
mod wire;

pub(crate) use client::Tls;
pub(crate) use cluster::{hash_slot, hash_tag};
pub(crate) use diagnosis::{cannot_vote, diagnose, verbatim, Diagnosis};
pub(crate) use endpoint::{Credentials, Server};
pub(crate) use failure::{refusal, WireAnswer, WireFailure};
pub(crate) use message::payload;
pub(crate) use ready::{wait_any, wait_any_or};
pub(crate) use replay::{Replay, Request, Step};
pub(crate) use sentinel::SentinelCredentials;
pub(crate) use session::Session;
pub(crate) use sink::Sink;
pub(crate) use socket::Reach;
pub(crate) use url::rejoin_host_lists;
pub(crate) use wire::Wire;
