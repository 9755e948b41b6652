//! The documents' tables as the binary lists them (`redlock generate schema`, made from the
//! structs that print the documents, as docs/json.md is), and documents checked against them:
//! each document's fields and each nested object's fields must be in its table, with a type the
//! table allows; every field a table lists must be in every document of that kind (but for those
//! it says are "only" sometimes there); and `assert_complete` says whether every table, and
//! every field it lists, showed up in some document checked.

use crate::support::{redlock_cmd, stderr_of, stdout_of};
use serde::Deserialize;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Output;

/// One field of a table.
#[derive(Deserialize)]
struct Field {
    name: String,
    /// The JSON types its value may have.
    types: BTreeSet<String>,
    /// The table its object, or each object of its array, follows (its anchor).
    nested: Option<String>,
    /// Whether documents may leave it out (the table says it is there "only" sometimes).
    optional: bool,
}

#[derive(Deserialize)]
struct Table {
    title: String,
    anchor: String,
    fields: Vec<Field>,
}

impl Table {
    fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|field| field.name == name)
    }
}

/// The tables, and which fields the documents checked so far had.
pub struct Schema {
    /// By anchor.
    tables: BTreeMap<String, Table>,
    seen: RefCell<BTreeMap<String, BTreeSet<String>>>,
}

fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl Schema {
    /// The tables `redlock generate schema` writes.
    pub fn from_binary() -> Schema {
        let dir = tempfile::tempdir().unwrap();
        redlock_cmd(["generate", "schema"])
            .arg(dir.path())
            .assert()
            .success();
        let text = std::fs::read_to_string(dir.path().join("schema.json")).unwrap();
        let tables: Vec<Table> = serde_json::from_str(&text).unwrap();
        let tables: BTreeMap<String, Table> =
            tables.into_iter().map(|t| (t.anchor.clone(), t)).collect();
        for table in tables.values() {
            for field in &table.fields {
                if let Some(nested) = &field.nested {
                    assert!(
                        tables.contains_key(nested),
                        "{:?} links {} to #{nested}, which is no table",
                        table.title,
                        field.name
                    );
                }
            }
        }
        Schema {
            tables,
            seen: RefCell::new(BTreeMap::new()),
        }
    }

    fn table(&self, title: &str) -> (&str, &Table) {
        let table = self
            .tables
            .values()
            .find(|table| table.title == title)
            .unwrap_or_else(|| panic!("docs/json.md has no table {title:?}"));
        (&table.anchor, table)
    }

    /// Checks one document of the kind docs/json.md's table `title` describes.
    pub fn check(&self, title: &str, document: &Value) {
        let (anchor, _) = self.table(title);
        self.check_object(&[anchor], document, title, true);
    }

    /// Checks one `--log-format json` line: the head every line has, then its event's fields.
    pub fn check_log_line(&self, line: &Value) {
        let event = line["event"]
            .as_str()
            .unwrap_or_else(|| panic!("a log line without an event: {line}"));
        let (head, _) = self.table("--log-format json lines");
        let (fields, _) = self.table(&format!("{event} event"));
        self.check_object(&[head, fields], line, &format!("the {event} line"), true);
    }

    /// `value` is an object whose every field is in one of `anchors`' tables, with its type,
    /// and which has every field they list (but the optional ones, and `version` below the
    /// top).
    fn check_object(&self, anchors: &[&str], value: &Value, path: &str, top: bool) {
        let object = value
            .as_object()
            .unwrap_or_else(|| panic!("{path} is not an object: {value}"));
        for (name, value) in object {
            let Some((anchor, field)) = anchors.iter().find_map(|anchor| {
                let field = self.tables[*anchor].field(name)?;
                Some((*anchor, field))
            }) else {
                let titles: Vec<&str> = anchors
                    .iter()
                    .map(|a| self.tables[*a].title.as_str())
                    .collect();
                panic!(
                    "{path} has the field `{name}`, which docs/json.md does not list (table {titles:?}): {value}"
                );
            };
            let path = format!("{path}.{name}");
            assert!(
                field.types.contains(type_of(value)),
                "{path} is {}, docs/json.md says {:?}: {value}",
                type_of(value),
                field.types
            );
            self.seen
                .borrow_mut()
                .entry(anchor.to_string())
                .or_default()
                .insert(name.clone());
            if let Some(nested) = &field.nested {
                match value {
                    Value::Object(_) => self.check_object(&[nested], value, &path, false),
                    Value::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            self.check_object(&[nested], item, &format!("{path}[{i}]"), false);
                        }
                    }
                    _ => {}
                }
            }
        }
        for anchor in anchors {
            for field in &self.tables[*anchor].fields {
                let name = &field.name;
                let needed = !field.optional && (top || name != "version");
                assert!(
                    !needed || object.contains_key(name),
                    "{path} lacks `{name}`, which docs/json.md's {:?} lists: {value}",
                    self.tables[*anchor].title
                );
            }
        }
    }

    /// Every table was used, and every field it lists was seen.
    pub fn assert_complete(&self) {
        let seen = self.seen.borrow();
        for (anchor, table) in &self.tables {
            let Some(fields) = seen.get(anchor) else {
                panic!(
                    "docs/json.md has a table {:?} that no document this test produced follows: make the test produce one",
                    table.title
                );
            };
            let unseen: Vec<&String> = table
                .fields
                .iter()
                .map(|field| &field.name)
                .filter(|name| !fields.contains(*name))
                .collect();
            assert!(
                unseen.is_empty(),
                "docs/json.md's {:?} lists {unseen:?}, which no document this test produced had",
                table.title
            );
        }
    }

    /// The document on `output`'s stdout, checked against `title`.
    pub fn stdout(&self, title: &str, output: &Output) -> Value {
        let text = stdout_of(output);
        let document: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{e}: stdout is not one JSON document: {text}"));
        self.check(title, &document);
        document
    }

    /// `status NAME --json`'s document, checked against the table its `kind` says.
    pub fn status(&self, output: &Output) -> Value {
        let title = match serde_json::from_str::<Value>(&stdout_of(output)) {
            Ok(document) if document["kind"] == "semaphore" => "status NAME --json of a semaphore",
            _ => "status NAME --json of a lock",
        };
        self.stdout(title, output)
    }

    /// Every stderr line of a `--log-format json` run, checked; returns them.
    pub fn log(&self, output: &Output) -> Vec<Value> {
        stderr_of(output)
            .lines()
            .map(|line| {
                let line: Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("{e}: a log line is not JSON: {line}"));
                self.check_log_line(&line);
                line
            })
            .collect()
    }
}
