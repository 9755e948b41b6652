//! Sentinel-managed groups as one server: a `redis+sentinel://` URL read into a group (`url`),
//! and the group's current master found each time we connect: every sentinel asked at once
//! (`discovery`), the master's own `ROLE` checked before anything is sent to it (`group`).

mod discovery;
mod group;
mod url;

pub(crate) use group::Group;
pub(crate) use url::{parse, SentinelCredentials};
