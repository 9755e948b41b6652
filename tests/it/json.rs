//! Every JSON document the binary prints, checked against README's "JSON output", which is
//! parsed here: each document's fields and each nested object's fields must be in its table,
//! with a type the table allows; every field a table lists must be in every document of that
//! kind (but for those it says are "only" sometimes there); and every table, and every field it
//! lists, must show up in some document this test produces. So a field added without
//! documentation fails, and so does documentation nothing prints.
//!
//! A new kind of document gets a table in README and a few lines in
//! `every_json_document_has_the_fields_readme_lists` that make the binary print it.

use crate::support::*;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Output;
use std::time::Duration;

/// The JSON types a table's type column can name.
const TYPES: [&str; 6] = ["number", "string", "boolean", "null", "array", "object"];

/// One field of a README table.
struct Field {
    /// The JSON types its value may have.
    types: BTreeSet<&'static str>,
    /// The table its object, or each object of its array, follows (its anchor).
    nested: Option<String>,
    /// Whether documents may leave it out (the table says it is there "only" sometimes).
    optional: bool,
}

struct Table {
    title: String,
    fields: BTreeMap<String, Field>,
}

/// README's "JSON output", and which fields the documents checked so far had.
pub struct Schema {
    /// By anchor (GitHub's slug of the heading).
    tables: BTreeMap<String, Table>,
    seen: RefCell<BTreeMap<String, BTreeSet<String>>>,
}

/// GitHub's anchor for a heading: lowercase, punctuation but `-` and `_` dropped, spaces to `-`.
fn slug(title: &str) -> String {
    title
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
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
    pub fn from_readme() -> Schema {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
            .expect("README.md");
        Schema::parse(&readme)
    }

    fn parse(readme: &str) -> Schema {
        let start = readme
            .find("\n## JSON output\n")
            .expect("README has a section \"JSON output\"");
        let section = &readme[start + 1..];
        let end = section[3..]
            .find("\n## ")
            .map_or(section.len(), |at| at + 3);
        let mut tables = BTreeMap::new();
        let mut current: Option<String> = None;
        for line in section[..end].lines().skip(1) {
            if line.starts_with('#') {
                let title = line.trim_start_matches('#').trim().to_string();
                let anchor = slug(&title);
                tables.insert(
                    anchor.clone(),
                    Table {
                        title: title.replace('`', ""),
                        fields: BTreeMap::new(),
                    },
                );
                current = Some(anchor);
                continue;
            }
            if !line.starts_with("| `") {
                continue;
            }
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let [_, name, kind, meaning, ..] = cells.as_slice() else {
                panic!("README's JSON table row {line:?} has not three columns");
            };
            let anchor = current.as_ref().expect("a table under a heading");
            let words: BTreeSet<&str> = kind
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect();
            let mut types: BTreeSet<&'static str> =
                TYPES.into_iter().filter(|t| words.contains(t)).collect();
            let nested = kind
                .split_once("](#")
                .map(|(_, rest)| rest.split(')').next().unwrap_or_default().to_string());
            if nested.is_some() && !types.contains("array") {
                types.insert("object");
            }
            assert!(!types.is_empty(), "README's {line:?} names no JSON type");
            let field = Field {
                types,
                nested,
                optional: meaning.starts_with("only "),
            };
            let name = name.trim_matches('`').to_string();
            let table = tables.get_mut(anchor).expect("the current table");
            assert!(
                table.fields.insert(name.clone(), field).is_none(),
                "README's table {:?} lists {name} twice",
                table.title
            );
        }
        for table in tables.values() {
            for (name, field) in &table.fields {
                if let Some(nested) = &field.nested {
                    assert!(
                        tables.contains_key(nested),
                        "README's {:?} links {name} to #{nested}, which is no table",
                        table.title
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
        let anchor = slug(title);
        let (anchor, table) = self
            .tables
            .get_key_value(&anchor)
            .unwrap_or_else(|| panic!("README's JSON output has no table {title:?}"));
        (anchor, table)
    }

    /// Checks one document of the kind README's table `title` describes.
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
                let field = self.tables[*anchor].fields.get(name)?;
                Some((*anchor, field))
            }) else {
                let titles: Vec<&str> = anchors
                    .iter()
                    .map(|a| self.tables[*a].title.as_str())
                    .collect();
                panic!(
                    "{path} has the field `{name}`, which README's JSON output does not list (table {titles:?}): {value}"
                );
            };
            let path = format!("{path}.{name}");
            assert!(
                field.types.contains(type_of(value)),
                "{path} is {}, README says {:?}: {value}",
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
            for (name, field) in &self.tables[*anchor].fields {
                let needed = !field.optional && (top || name != "version");
                assert!(
                    !needed || object.contains_key(name),
                    "{path} lacks `{name}`, which README's {:?} lists: {value}",
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
                    "README's JSON output has a table {:?} that no document this test produced follows: make the test produce one",
                    table.title
                );
            };
            let unseen: Vec<&String> = table
                .fields
                .keys()
                .filter(|name| !fields.contains(*name))
                .collect();
            assert!(
                unseen.is_empty(),
                "README's {:?} lists {unseen:?}, which no document this test produced had",
                table.title
            );
        }
    }

    /// The document on `output`'s stdout, checked against `title`.
    fn stdout(&self, title: &str, output: &Output) -> Value {
        let text = stdout_of(output);
        let document: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{e}: stdout is not one JSON document: {text}"));
        self.check(title, &document);
        document
    }

    /// `status NAME --json`'s document, checked against the table its `kind` says.
    fn status(&self, output: &Output) -> Value {
        let title = match serde_json::from_str::<Value>(&stdout_of(output)) {
            Ok(document) if document["kind"] == "semaphore" => "status NAME --json of a semaphore",
            _ => "status NAME --json of a lock",
        };
        self.stdout(title, output)
    }

    /// Every stderr line of a `--log-format json` run, checked; returns them.
    fn log(&self, output: &Output) -> Vec<Value> {
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

/// The events of `lines`, in order.
fn events(lines: &[Value]) -> Vec<&str> {
    lines.iter().filter_map(|l| l["event"].as_str()).collect()
}

fn run(cluster: &Cluster, args: &[&str]) -> Output {
    cluster.redlock().args(args).output().unwrap()
}

fn ok(output: Output) -> Output {
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    output
}

#[test]
fn every_json_document_has_the_fields_readme_lists() {
    let schema = Schema::from_readme();
    let cluster = Cluster::start(3);
    let json = ["--log-format", "json"];

    // A renewal that fails, then a lost lock: a lone server stopped under a running exec.
    let lone = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let losing = lone
        .redlock()
        .args(json)
        .args([
            "exec",
            "lone",
            "--ttl",
            "1500ms",
            "--timeout",
            "100ms",
            "--",
            "sh",
            "-c",
            &format!("touch '{}'; sleep 30", ready.display()),
        ])
        .spawn();
    wait_for("the command to start", Duration::from_secs(10), || {
        ready.exists()
    });
    lone.servers[0].stop();

    // acquire, with -v's rounds, a fence and a slot; extend; busy.
    let acquired = ok(run(
        &cluster,
        &[&json[..], &["-v", "acquire", "job", "--fence", "--json"]].concat(),
    ));
    let token = schema.stdout("acquire --json", &acquired)["token"]
        .as_str()
        .unwrap()
        .to_string();
    let lines = schema.log(&acquired);
    assert!(events(&lines).contains(&"round"), "{lines:?}");
    let slot = ok(run(
        &cluster,
        &[
            &json[..],
            &["acquire", "pool", "--limit", "2", "--fence", "--json"],
        ]
        .concat(),
    ));
    let taken = schema.stdout("acquire --json", &slot)["slot"].clone();
    assert!(taken.is_u64(), "{taken}");
    assert_eq!(schema.log(&slot)[0]["slot"], taken);
    let extended = ok(run(
        &cluster,
        &[&json[..], &["extend", "job", "--token", &token, "--json"]].concat(),
    ));
    schema.stdout("extend --json", &extended);
    assert_eq!(events(&schema.log(&extended)), ["renewed"]);
    let busy = run(&cluster, &[&json[..], &["acquire", "job"]].concat());
    assert_eq!(busy.status.code(), Some(75));
    assert_eq!(events(&schema.log(&busy)), ["busy"]);

    // A lock with a fence and a waiter, seen through a fourth server that does not answer
    // (an even number: a warning).
    let waiter = cluster.spawn(&["acquire", "job", "--wait", "60s"]);
    wait_for("the waiter to queue", Duration::from_secs(20), || {
        let status = run(&cluster, &["status", "job", "--json"]);
        serde_json::from_str::<Value>(&stdout_of(&status))
            .is_ok_and(|s| s["waiters"].as_array().is_some_and(|w| !w.is_empty()))
    });
    let four = format!("{},redis://127.0.0.1:{}", cluster.urls(), free_port());
    let status = ok(cluster
        .redlock()
        .env("REDLOCK_SERVERS", &four)
        .args(json)
        .args(["status", "job", "--json"])
        .output()
        .unwrap());
    let document = schema.status(&status);
    assert!(document["fence"].is_number() && document["per_server"][3]["error"].is_string());
    assert_eq!(events(&schema.log(&status)), ["warning"]);

    // Shared holders; another client's hash; a lock kept after its run; a run stopped by
    // --max-runtime.
    for _ in 0..2 {
        cluster.acquire_token("shared", &["--shared"]);
    }
    let shared = schema.status(&ok(run(&cluster, &["status", "shared", "--json"])));
    assert_eq!(shared["readers"].as_array().unwrap().len(), 2);
    for server in &cluster.servers {
        let _: () = redis::cmd("HSET")
            .arg("redlock:foreign")
            .arg("owner")
            .arg("redisson")
            .query(&mut server.connection())
            .unwrap();
    }
    let foreign = schema.status(&ok(run(&cluster, &["status", "foreign", "--json"])));
    assert_eq!(foreign["foreign_type"], "hash");
    let kept = ok(run(
        &cluster,
        &[
            &json[..],
            &["exec", "kept", "--hold-at-least", "60s", "--", "true"],
        ]
        .concat(),
    ));
    assert!(events(&schema.log(&kept)).ends_with(&["child_exited", "kept"]));
    let kept = schema.status(&ok(run(&cluster, &["status", "kept", "--json"])));
    assert!(kept["kept"].is_object());
    let slow = run(
        &cluster,
        &[
            &json[..],
            &[
                "exec",
                "slow",
                "--max-runtime",
                "100ms",
                "--",
                "sleep",
                "30",
            ],
        ]
        .concat(),
    );
    assert_eq!(slow.status.code(), Some(124));
    assert!(events(&schema.log(&slow)).contains(&"timed_out"));

    // The semaphore alone, then beside the mutex of its name (a warning), and the list.
    let semaphore = schema.status(&ok(run(&cluster, &["status", "pool", "--json"])));
    assert_eq!(semaphore["kind"], "semaphore");
    cluster.acquire_token("pool", &[]);
    let both = ok(run(
        &cluster,
        &[&json[..], &["status", "pool", "--json"]].concat(),
    ));
    assert_eq!(schema.status(&both)["semaphore"]["slots_held"], 1);
    assert_eq!(events(&schema.log(&both)), ["warning"]);
    schema.stdout(
        "status --json: the list",
        &ok(run(&cluster, &["status", "--json"])),
    );

    // Releases, by token and forced, and an error.
    let released = ok(run(
        &cluster,
        &[&json[..], &["release", "job", "--token", &token]].concat(),
    ));
    assert_eq!(events(&schema.log(&released)), ["released"]);
    let forced = ok(run(
        &cluster,
        &[&json[..], &["release", "foreign", "--force"]].concat(),
    ));
    assert_eq!(events(&schema.log(&forced)), ["released"]);
    let refused = run(
        &cluster,
        &[&json[..], &["acquire", "pool", "--limit", "3"]].concat(),
    );
    assert_eq!(refused.status.code(), Some(64));
    assert_eq!(events(&schema.log(&refused)), ["error"]);

    let lost = losing.wait();
    lone.servers[0].resume();
    assert_eq!(lost.status.code(), Some(125), "{}", stderr_of(&lost));
    let lines = schema.log(&lost);
    for event in ["renewal_failed", "lost"] {
        assert!(events(&lines).contains(&event), "{lines:?}");
    }
    let waiter = waiter.wait();
    assert_eq!(waiter.status.code(), Some(0), "{}", stderr_of(&waiter));

    // The latch: every verb's document (each with its own fields), each server's copy, and the
    // lists, `latch status` and `status`, which hold the same documents.
    const LATCH: &str =
        "latch set --json, latch done --json, latch wait --json, latch status NAME --json";
    let latch = |args: &[&str]| ok(run(&cluster, &[&["latch"][..], args].concat()));
    schema.stdout(LATCH, &latch(&["set", "etl", "--count", "2", "--json"]));
    schema.stdout(LATCH, &latch(&["done", "etl", "--id", "a", "--json"]));
    latch(&["done", "etl", "--id", "b"]);
    schema.stdout(LATCH, &latch(&["wait", "etl", "--wait", "5s", "--json"]));
    schema.stdout(LATCH, &latch(&["status", "etl", "--json"]));
    let list = latch(&["status", "--json"]);
    let list = schema.stdout("latch status --json: the list", &list);
    assert_eq!(list["latches"][0]["name"], "etl");
    let list = schema.stdout(
        "status --json: the list",
        &ok(run(&cluster, &["status", "--json"])),
    );
    assert_eq!(list["latches"][0]["state"], "open");
    schema.assert_complete();
}

#[test]
fn a_field_the_readme_does_not_list_fails_the_check() {
    let schema = Schema::from_readme();
    let document = serde_json::json!({
        "version": 1, "name": "job", "key": "redlock:job", "token": "t", "ttl_ms": 1,
        "validity_ms": 1, "servers": 3, "votes": 2, "undocumented": true,
    });
    let check = |document: &Value| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            schema.check("acquire --json", document)
        }))
    };
    let failure = check(&document).expect_err("an undocumented field must fail");
    let message = failure
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("`undocumented`"), "{message}");
    // And a documented type that does not match.
    let mut document = document;
    document.as_object_mut().unwrap().remove("undocumented");
    document["servers"] = serde_json::json!(["redis://a"]);
    assert!(check(&document).is_err());
}
