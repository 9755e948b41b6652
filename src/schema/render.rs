//! docs/json.md made from its layout (`reference`) and the structs' fields (`redlock generate
//! json docs`), and the same tables as data (`redlock generate schema DIR`), which the tests
//! check real documents against.

use super::reference::{sections, tables, Section, INTRO};
use super::{Field, Table, Type};
use serde::Serialize;
use std::collections::BTreeMap;

/// GitHub's anchor for a heading: lowercase, punctuation but `-` and `_` dropped, spaces to `-`.
fn anchor(heading: &str) -> String {
    let kept = heading
        .chars()
        .filter(|c| c.is_alphanumeric() || "-_ ".contains(*c));
    kept.map(|c| if c == ' ' { '-' } else { c })
        .collect::<String>()
        .to_lowercase()
}

/// The page's width.
const WIDTH: usize = 100;

/// A paragraph, or a list of bullets (`- `, continued two spaces in), wrapped at `WIDTH`.
fn wrap(block: &str) -> String {
    let mut items: Vec<String> = Vec::new();
    for line in block.lines() {
        match items.last_mut() {
            Some(item) if !line.starts_with("- ") => {
                item.push(' ');
                item.push_str(line.trim());
            }
            _ => items.push(line.trim_end().to_string()),
        }
    }
    let mut lines: Vec<String> = Vec::new();
    for item in items {
        let indent = if item.starts_with("- ") { "  " } else { "" };
        let mut line = String::new();
        for word in item.split_whitespace() {
            if !line.trim().is_empty() && line.chars().count() + 1 + word.chars().count() > WIDTH {
                lines.push(std::mem::replace(&mut line, indent.to_string()));
            } else if !line.trim().is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines.join("\n") + if block.ends_with('\n') { "\n" } else { "" }
}

/// A field's type as the page says it; `links` gives each nested struct's word and anchor.
fn words(ty: &Type, links: &BTreeMap<&str, (&str, String)>) -> String {
    match ty {
        Type::Number | Type::Decimal => "number".into(),
        Type::String => "string".into(),
        Type::Boolean => "boolean".into(),
        Type::Nullable(ty) => format!("{} or null", words(ty, links)),
        Type::Array(ty) => format!("array of {}", words(ty, links)),
        Type::Object(table) => {
            let name = table().name;
            let (word, anchor) = links
                .get(name)
                .unwrap_or_else(|| panic!("docs/json.md has no heading for {name}"));
            format!("[{word}](#{anchor})")
        }
    }
}

/// A field's rows, with `version` first in a document printed alone.
fn rows(section: &Section, table: &Table) -> Vec<Field> {
    let mut fields = table.flat();
    if section.versioned {
        let version = Field::new("version", "`1`", Type::Number, "");
        fields.insert(0, version);
    }
    fields
}

/// What a field's type is printed as, where the field is there at all: an "only" field is
/// never `null`.
fn shown_type(field: &Field) -> &Type {
    match &field.ty {
        Type::Nullable(ty) if field.optional => ty,
        ty => ty,
    }
}

/// docs/json.md.
pub(crate) fn markdown() -> String {
    let sections = sections();
    let tables = tables(&sections);
    let links: BTreeMap<&str, (&str, String)> = sections
        .iter()
        .map(|s| (s.table, (s.word, anchor(&s.heading))))
        .collect();
    let mut decimals: Vec<String> = Vec::new();
    for table in tables.values() {
        for field in table.flat() {
            let name = format!("`{}`", field.name);
            let decimal = matches!(shown_type(&field), Type::Decimal)
                || matches!(&field.ty, Type::Nullable(ty) if matches!(**ty, Type::Decimal));
            if decimal && field.name.ends_with("_ms") && !decimals.contains(&name) {
                decimals.push(name);
            }
        }
    }
    let decimals = match decimals.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "none".into(),
    };
    let intro = INTRO.replace("{decimals}", &decimals);
    let mut page = intro
        .split("\n\n")
        .map(wrap)
        .collect::<Vec<_>>()
        .join("\n\n");
    for section in &sections {
        let table = &tables[section.table];
        page.push_str(&format!(
            "\n{} {}\n\n",
            "#".repeat(section.level),
            section.heading
        ));
        if !section.prose.is_empty() {
            page.push_str(&format!("{}\n\n", wrap(&section.prose)));
        }
        page.push_str("| field | type | meaning |\n| --- | --- | --- |\n");
        for field in rows(section, table) {
            let ty = words(shown_type(&field), &links);
            page.push_str(&format!(
                "| `{}` | {ty} | {} |\n",
                field.name,
                field.doc.replace('|', "\\|")
            ));
        }
    }
    page
}

/// One table as data, for the tests that check real documents against it.
#[derive(Serialize)]
struct TableData {
    /// The heading, without its backticks.
    title: String,
    anchor: String,
    fields: Vec<FieldData>,
}

#[derive(Serialize)]
struct FieldData {
    name: &'static str,
    /// The JSON types its value may have.
    types: Vec<&'static str>,
    /// The anchor of the table its object, or each object of its array, follows.
    nested: Option<String>,
    /// Left out where it does not apply.
    optional: bool,
}

fn field_data(field: &Field, links: &BTreeMap<&str, String>) -> FieldData {
    let mut types = Vec::new();
    let mut nested = None;
    let mut ty = shown_type(field);
    loop {
        match ty {
            Type::Nullable(inner) => {
                types.push("null");
                ty = inner;
            }
            Type::Array(items) => {
                types.push("array");
                if let Type::Object(table) = **items {
                    nested = links.get(table().name).cloned();
                }
                break;
            }
            Type::Object(table) => {
                types.push("object");
                nested = links.get(table().name).cloned();
                break;
            }
            Type::Number | Type::Decimal => break types.push("number"),
            Type::String => break types.push("string"),
            Type::Boolean => break types.push("boolean"),
        }
    }
    FieldData {
        name: field.name,
        types,
        nested,
        optional: field.optional,
    }
}

/// Every table of docs/json.md as data, in its order.
pub(crate) fn data() -> anyhow::Result<String> {
    let sections = sections();
    let tables = tables(&sections);
    let links: BTreeMap<&str, String> = sections
        .iter()
        .map(|s| (s.table, anchor(&s.heading)))
        .collect();
    let data: Vec<TableData> = sections
        .iter()
        .map(|section| TableData {
            title: section.heading.replace('`', ""),
            anchor: anchor(&section.heading),
            fields: rows(section, &tables[section.table])
                .iter()
                .map(|field| field_data(field, &links))
                .collect(),
        })
        .collect();
    Ok(serde_json::to_string_pretty(&data)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_githubs() {
        assert_eq!(
            anchor("`--log-format json` lines"),
            "--log-format-json-lines"
        );
        assert_eq!(
            anchor("`latch set --json`, `latch done --json`"),
            "latch-set---json-latch-done---json"
        );
        assert_eq!(
            anchor("`status NAME --json` of a lock"),
            "status-name---json-of-a-lock"
        );
    }
}
