//! A message published on a channel a wire subscribed to (`["message", channel, payload]`),
//! told apart from the replies around it and opened.

use redis::Value;

/// Whether a value that came on a subscribed connection is a message (`["message", channel,
/// payload]`) rather than the reply to a request.
pub(super) fn is_message(value: &Value) -> bool {
    matches!(value, Value::Array(parts)
        if matches!(parts.first(), Some(Value::BulkString(kind)) if kind == b"message"))
}

/// The payload of a message that came as `Sink::Pushed` (`["message", channel, payload]`).
pub(crate) fn payload(mut values: Vec<Value>) -> Option<Vec<u8>> {
    let message = values.pop().filter(is_message)?;
    let Value::Array(mut parts) = message else {
        return None;
    };
    match parts.pop() {
        Some(Value::BulkString(payload)) => Some(payload),
        _ => None,
    }
}
