//! A connection to a Sentinel group's master, as a round's requests see it: the master this
//! run keeps (group.rs), or the first one a sentinel names. Its first request carries `ROLE`
//! (server/setup.rs) rather than waiting a round trip for it, and counts only if the server
//! says it is the master; if it does not (a stale sentinel's answer, a demoted master), the
//! request is sent again, within the same deadline, to the next master a sentinel named. Every
//! round after the one that found it asks the sentinels again as its first request goes out
//! (`Discovery::confirms`): unless a majority of the sentinels still name it, its answer does not
//! count, and the request is sent again to the master a majority names instead (the master
//! moved), or the group votes no (they disagree, or too few answer: discovery.rs says why).
//!
//! Sending it again is safe: a replica refuses a write (`READONLY`, the default), and what a
//! writable replica (`replica-read-only no`) or a master the sentinels left applied is never
//! counted (a release or an extension reaches the latter again: `Group::former`). Every
//! request of a round is one that does no harm when repeated (`SET NX` with our token, the
//! compare-and-delete and compare-and-expire scripts).

use super::super::blocking::Blocking;
use super::discovery::{Address, Discovery};
use super::group::Group;
use crate::clock::BootInstant;
use redis::{Connection, RedisResult, Value};
use std::sync::Arc;

/// One connection to a group's master.
pub(crate) struct Master {
    group: Arc<Group>,
    address: Address,
    connection: Blocking,
    /// The sentinels' answers this master came from, for the next one to try.
    discovery: Option<Discovery>,
    deadline: BootInstant,
    /// It answered a request as the master.
    confirmed: bool,
    /// Found by asking the sentinels in the round under way: the round need not ask again.
    fresh: bool,
    /// The round under way asks the sentinels whether they still name it.
    recheck: bool,
}

impl Master {
    /// Connects by `deadline` to the master this run keeps, or else to the first one a
    /// sentinel names by `asking` (trying the next named while one cannot be connected to).
    pub(crate) fn open(
        group: Arc<Group>,
        (asking, deadline): (BootInstant, BootInstant),
    ) -> RedisResult<Master> {
        if let Some(address) = group.master_in_use() {
            match group.dial(&address, deadline, true) {
                Ok(connection) => {
                    return Ok(Master {
                        group,
                        address,
                        connection,
                        discovery: None,
                        deadline,
                        confirmed: false,
                        fresh: false,
                        recheck: false,
                    })
                }
                // Gone: ask the sentinels, within the same deadline.
                Err(_) => group.suspect(),
            }
        }
        let mut discovery = group.discover(asking);
        let (address, connection) = next_master(&group, &mut discovery, (asking, deadline))?;
        Ok(Master {
            group,
            address,
            connection,
            discovery: Some(discovery),
            deadline,
            confirmed: false,
            fresh: true,
            recheck: false,
        })
    }

    /// The database it selects.
    pub(crate) fn db(&self) -> i64 {
        redis::ConnectionLike::get_db(&self.connection)
    }

    /// Starts a round: bounds every step of its requests by `deadline`, and has it ask the
    /// sentinels again unless they were just asked.
    pub(crate) fn bound(&mut self, deadline: BootInstant) -> RedisResult<()> {
        self.deadline = deadline;
        self.recheck = !std::mem::take(&mut self.fresh);
        self.connection.bound(deadline)
    }

    /// The connection as the crate uses it (a subscription), once the server said it is the
    /// master.
    pub(crate) fn into_connection(mut self) -> RedisResult<Connection> {
        self.request(&[], 0, 0)?;
        self.connection.into_connection(self.deadline)
    }

    /// Sends `packed` and returns its replies after the first `skip`, from a server that says
    /// it is the master, and that the sentinels still name (see the module comment).
    pub(crate) fn request(
        &mut self,
        packed: &[u8],
        skip: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        // Asked as the request goes out: their answers come while it is on its way.
        let mut recheck =
            std::mem::take(&mut self.recheck).then(|| self.group.discover(self.deadline));
        loop {
            let result = self.connection.request(packed, skip, count);
            let why = match (self.connection.not_master(), recheck.as_mut()) {
                (Some(why), _) => why.to_string(),
                (None, Some(asked)) if result.is_ok() => {
                    if asked.confirms(&self.address, self.deadline) {
                        return self.count(result);
                    }
                    "most of the sentinels do not name it".to_string()
                }
                (None, _) => return self.count(result),
            };
            self.group.suspect();
            let discovery = match recheck.take() {
                Some(asked) => self.discovery.insert(asked),
                None => self
                    .discovery
                    .get_or_insert_with(|| self.group.discover(self.deadline)),
            };
            discovery.failed(&self.address, &std::io::Error::other(why).into());
            let by = (self.deadline, self.deadline);
            let (address, connection) = next_master(&self.group, discovery, by)?;
            (self.address, self.connection, self.confirmed) = (address, connection, false);
            self.connection.bound(self.deadline)?;
        }
    }

    /// What a request's outcome says of the master: it answered as the master (kept for the
    /// rounds to come), or the next round must ask the sentinels again.
    fn count(&mut self, result: RedisResult<Vec<Value>>) -> RedisResult<Vec<Value>> {
        let demoted =
            |reply: &Value| matches!(reply, Value::ServerError(err) if err.code() == "READONLY");
        match &result {
            Ok(replies) if replies.iter().any(demoted) => self.group.suspect(),
            Ok(_) if !self.confirmed => {
                self.confirmed = true;
                self.group.use_master(&self.address);
            }
            Ok(_) => {}
            Err(_) => self.group.suspect(),
        }
        result
    }
}

/// The next master `discovery` names by `asking` that can be connected to by `deadline`, with
/// `ROLE` riding on its first request.
fn next_master(
    group: &Group,
    discovery: &mut Discovery,
    (asking, deadline): (BootInstant, BootInstant),
) -> RedisResult<(Address, Blocking)> {
    loop {
        let address = discovery.next(asking)?;
        match group.dial(&address, deadline, true) {
            Ok(connection) => return Ok((address, connection)),
            Err(err) => discovery.failed(&address, &err),
        }
    }
}
