//! What a new connection says before its first request, whichever carries it (a wire, or a
//! blocking connection): `AUTH` with the user and password, `SELECT` of the database, and for a
//! Sentinel group's master the `ROLE` check. Both write it in the same burst as the first
//! request rather than a round trip ahead of it: the server runs a connection's commands in
//! order, so the request runs only after them, and their replies come first. This file owns
//! which commands those are and what their replies mean.

use redis::{RedisConnectionInfo, Value};

/// The commands a new connection with `settings` sends first, packed: `AUTH` when there is a
/// password, `SELECT` when the database is not 0.
pub(crate) fn commands(settings: &RedisConnectionInfo) -> Vec<Vec<u8>> {
    let mut commands = Vec::new();
    if let Some(password) = settings.password() {
        let mut auth = redis::cmd("AUTH");
        if let Some(username) = settings.username() {
            auth.arg(username);
        }
        commands.push(auth.arg(password).get_packed_command());
    }
    if settings.db() != 0 {
        commands.push(redis::cmd("SELECT").arg(settings.db()).get_packed_command());
    }
    commands
}

/// The `ROLE` a Sentinel group's master is asked, behind its set-up: nothing is counted from
/// a server that does not say it is the master (`not_the_master`).
pub(crate) fn role() -> Vec<u8> {
    redis::cmd("ROLE").get_packed_command()
}

/// Why a set-up command's reply refuses the connection, if it does: a password or user the
/// server refused, or a database it does not have.
pub(crate) fn refused(reply: &Value) -> Option<String> {
    let Value::ServerError(err) = reply else {
        return None;
    };
    Some(if err.code() == "WRONGPASS" || err.code() == "NOAUTH" {
        "password authentication failed".to_string()
    } else {
        format!("{} {}", err.code(), err.details().unwrap_or_default())
    })
}

/// Why a server's reply to `ROLE` says it is not the master to write to, if it does.
pub(crate) fn not_the_master(reply: &Value) -> Option<String> {
    match reply {
        Value::Array(role) => match role.first() {
            Some(Value::BulkString(role)) if role.as_slice() == b"master" => None,
            Some(Value::BulkString(role)) => Some(format!(
                "is a {}, not the master",
                String::from_utf8_lossy(role)
            )),
            _ => Some("did not say its role".into()),
        },
        Value::ServerError(err) => Some(format!(
            "did not say its role: {} {}",
            err.code(),
            err.details().unwrap_or_default()
        )),
        _ => Some("did not say its role".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_set_up_names_the_user_password_and_database_given() {
        let none = RedisConnectionInfo::default();
        assert!(commands(&none).is_empty());
        let all = none.set_username("app").set_password("pw").set_db(3);
        assert_eq!(
            commands(&all),
            [
                redis::cmd("AUTH").arg("app").arg("pw").get_packed_command(),
                redis::cmd("SELECT").arg(3).get_packed_command(),
            ]
        );
    }

    #[test]
    fn only_a_master_passes_the_role_check() {
        let role = |name: &str| Value::Array(vec![Value::BulkString(name.as_bytes().to_vec())]);
        assert_eq!(not_the_master(&role("master")), None);
        assert_eq!(
            not_the_master(&role("slave")).as_deref(),
            Some("is a slave, not the master")
        );
        assert!(not_the_master(&Value::Nil).is_some());
    }
}
