//! What every JSON document redlock prints has in common (`acquire --json`, `extend --json`,
//! `status --json`, `history --json`, each `--log-format json` line): the schema's version,
//! first. The field lists themselves are docs/json.md's, which a test checks every
//! document against.

use serde_json::{Map, Value};

/// The version of docs/json.md's field lists that the documents follow. It goes up when a field
/// changes meaning or goes away; a new field does not change it.
pub(crate) const VERSION: u64 = 1;

/// The document made of `fields` (an object), led by `"version"`.
pub(crate) fn document(fields: Value) -> Value {
    let mut document = Map::new();
    document.insert("version".into(), VERSION.into());
    if let Value::Object(fields) = fields {
        for (name, value) in fields {
            debug_assert!(name != "version", "a field may not be named version");
            document.entry(name).or_insert(value);
        }
    }
    Value::Object(document)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_version_comes_first() {
        let document = document(json!({ "name": "job", "held": true }));
        let names: Vec<&String> = document.as_object().unwrap().keys().collect();
        assert_eq!(names, ["version", "name", "held"]);
        assert_eq!(document["version"], VERSION);
    }
}
