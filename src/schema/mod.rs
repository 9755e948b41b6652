//! What every JSON document redlock prints is made of (`acquire --json`, `extend --json`,
//! `status --json`, `history --json`, the latch verbs', `doctor --json`, each `--log-format json`
//! line): one struct per document, declared with `documented!`, whose fields, in order, are the
//! document's and whose doc comments are docs/json.md's "meaning" column; and the schema's
//! version, first in every document. `reference` lays the structs out as docs/json.md, and
//! `render` writes it.
//!
//! Adding a field to a document is one field, with its doc comment, in its struct: it is printed
//! by serde, listed by `redlock generate json docs` (a test fails while docs/json.md is stale),
//! and a test that runs the binary fails until some document it makes carries the field.

pub(crate) mod reference;
pub(crate) mod render;

use serde::Serialize;
use std::time::Duration;

/// The version of docs/json.md's field lists that the documents follow. It goes up when a field
/// changes meaning or goes away; a new field does not change it.
pub(crate) const VERSION: u64 = 1;

/// A duration in an `_ms` field: whole milliseconds.
pub(crate) fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

/// A latency in an `_ms` field: milliseconds with microsecond decimals.
pub(crate) fn ms_micros(d: Duration) -> f64 {
    (d.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// A document as printed: `"version"` first, then the document's own fields.
#[derive(Serialize)]
struct Versioned<'a, T> {
    version: u64,
    #[serde(flatten)]
    document: &'a T,
}

/// `document` as one line of JSON, led by `"version"`.
pub(crate) fn to_json<T: Serialize>(document: &T) -> anyhow::Result<String> {
    let versioned = Versioned {
        version: VERSION,
        document,
    };
    Ok(serde_json::to_string(&versioned)?)
}

/// The JSON types docs/json.md names.
#[derive(Debug, Clone)]
pub(crate) enum Type {
    Number,
    /// A number with decimals (an `f64`): milliseconds to the microsecond.
    Decimal,
    String,
    Boolean,
    /// The type, or `null` when it does not apply.
    Nullable(Box<Type>),
    Array(Box<Type>),
    /// An object with a table of its own: the struct's.
    Object(fn() -> Table),
}

/// One field of a document, as docs/json.md lists it.
pub(crate) struct Field {
    pub(crate) name: &'static str,
    /// Its doc comment, on one line.
    pub(crate) doc: String,
    pub(crate) ty: Type,
    /// Left out, rather than `null`, where it does not apply (`skip_serializing_if`).
    pub(crate) optional: bool,
    /// Its struct's fields stand in its place (`flatten`).
    pub(crate) flatten: bool,
}

impl Field {
    /// A field as `documented!` sees it: `serde` is its `#[serde(…)]` attributes, as text.
    pub(crate) fn new(name: &'static str, doc: &str, ty: Type, serde: &str) -> Field {
        let doc: Vec<&str> = doc.lines().map(str::trim).collect();
        Field {
            name,
            doc: doc.join(" ").trim().to_string(),
            ty,
            optional: serde.contains("skip_serializing_if"),
            flatten: serde.contains("flatten"),
        }
    }
}

/// A struct's fields, in the order they are printed.
pub(crate) struct Table {
    /// The struct's name, by which `reference` finds its heading.
    pub(crate) name: &'static str,
    pub(crate) fields: Vec<Field>,
}

impl Table {
    /// The fields a document of this table has, `flatten`ed ones replaced by theirs.
    pub(crate) fn flat(&self) -> Vec<Field> {
        let mut flat = Vec::new();
        for field in &self.fields {
            match &field.ty {
                Type::Object(table) if field.flatten => flat.extend(table().flat()),
                ty => flat.push(Field {
                    name: field.name,
                    doc: field.doc.clone(),
                    ty: ty.clone(),
                    optional: field.optional,
                    flatten: false,
                }),
            }
        }
        flat
    }
}

/// A struct declared with `documented!`: a document, an event or an object in one.
pub(crate) trait Documented {
    fn table() -> Table;
}

/// The JSON type a Rust type is printed as.
pub(crate) trait JsonType {
    fn json_type() -> Type;
}

macro_rules! json_types {
    ($type:expr => $($rust:ty),*) => {
        $(impl JsonType for $rust {
            fn json_type() -> Type {
                $type
            }
        })*
    };
}
json_types!(Type::Number => u8, u16, u32, u64, usize, i32, i64);
json_types!(Type::Decimal => f64);
json_types!(Type::String => str, String);
json_types!(Type::Boolean => bool);

impl<T: JsonType + ?Sized> JsonType for &T {
    fn json_type() -> Type {
        T::json_type()
    }
}

impl<T: JsonType> JsonType for Option<T> {
    fn json_type() -> Type {
        Type::Nullable(Box::new(T::json_type()))
    }
}

impl<T: JsonType> JsonType for Vec<T> {
    fn json_type() -> Type {
        Type::Array(Box::new(T::json_type()))
    }
}

/// A struct whose fields are a document's: derives `Serialize`, and lists each field's name,
/// JSON type and doc comment for docs/json.md (`Documented`). A field's `#[serde(…)]`
/// attributes follow its doc comment; its Rust name is its JSON name (no `rename`), so that the
/// struct reads as the document does.
macro_rules! documented {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident $(<$lt:lifetime>)? {
            $(
                $(#[doc = $doc:literal])*
                $(#[serde($($serde:tt)*)])*
                $field_vis:vis $field:ident : $ty:ty
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(serde::Serialize)]
        $vis struct $name $(<$lt>)? {
            $(
                $(#[doc = $doc])*
                $(#[serde($($serde)*)])*
                $field_vis $field: $ty,
            )*
        }

        impl $(<$lt>)? $crate::schema::Documented for $name $(<$lt>)? {
            fn table() -> $crate::schema::Table {
                $crate::schema::Table {
                    name: stringify!($name),
                    fields: vec![$(
                        $crate::schema::Field::new(
                            stringify!($field),
                            concat!($($doc, "\n"),*),
                            <$ty as $crate::schema::JsonType>::json_type(),
                            stringify!($($($serde)*)*),
                        ),
                    )*],
                }
            }
        }

        impl $(<$lt>)? $crate::schema::JsonType for $name $(<$lt>)? {
            fn json_type() -> $crate::schema::Type {
                $crate::schema::Type::Object(<Self as $crate::schema::Documented>::table)
            }
        }
    };
}
pub(crate) use documented;

#[cfg(test)]
mod tests {
    use super::*;

    documented! {
        struct Inner {
            /// the inner one
            deep: u64,
        }
    }

    documented! {
        struct Sample<'a> {
            /// the name,
            /// on two lines
            name: &'a str,
            /// only sometimes
            #[serde(skip_serializing_if = "Option::is_none")]
            fence: Option<u64>,
            /// each of them
            list: Vec<Option<String>>,
            #[serde(flatten)]
            inner: Inner,
        }
    }

    #[test]
    fn the_version_comes_first_then_the_fields_in_order() {
        let sample = Sample {
            name: "job",
            fence: None,
            list: vec![None],
            inner: Inner { deep: 2 },
        };
        assert_eq!(
            to_json(&sample).unwrap(),
            r#"{"version":1,"name":"job","list":[null],"deep":2}"#
        );
    }

    #[test]
    fn a_table_lists_each_field_with_its_type_and_doc() {
        let table = Sample::table();
        assert_eq!(table.name, "Sample");
        let fields = table.flat();
        let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
        assert_eq!(names, ["name", "fence", "list", "deep"]);
        assert_eq!(fields[0].doc, "the name, on two lines");
        assert!(matches!(fields[0].ty, Type::String));
        assert!(fields[1].optional && !fields[0].optional);
        assert!(
            matches!(&fields[1].ty, Type::Nullable(number) if matches!(**number, Type::Number))
        );
        let Type::Array(items) = &fields[2].ty else {
            panic!("{:?}", fields[2].ty)
        };
        assert!(matches!(&**items, Type::Nullable(string) if matches!(**string, Type::String)));
        assert_eq!(fields[3].doc, "the inner one");
    }
}
