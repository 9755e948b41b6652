//! Sentinel-managed groups as one server: a `redis+sentinel://` URL read into a group (`url`),
//! every sentinel asked at once where the master is (`discovery`), the master a run keeps using
//! (`group`), and a connection to it whose first request carries the `ROLE` check (`master`).

mod discovery;
mod group;
mod master;
mod url;

pub(crate) use group::Group;
pub(crate) use master::Master;
pub(crate) use url::{parse, SentinelCredentials};
