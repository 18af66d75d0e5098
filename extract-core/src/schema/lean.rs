//! The tool's copy of a schema, trimmed of what the model does not read.
//!
//! schemars writes a schema for validators and documentation; a model reads
//! every byte of it on every attempt. [`trim_for_model`] removes what tells a
//! model nothing it does not already read elsewhere:
//!
//! - the root `$schema`: the draft is 2020-12 either way, and it tells the
//!   model nothing about the data;
//! - `title` in every schema (the root's is the Rust type's name): a
//!   property or `$defs` entry that happens to be *named* `title` stays,
//!   because the walk follows the keyword table ([`super::keywords`]) and
//!   never mistakes a map of properties for a schema;
//! - the root `description` when the tool's description already carries it
//!   (it is the type's doc comment, which opens the tool's description); a
//!   `$defs` entry's description is shown nowhere else and stays;
//! - the numeric `format`s schemars writes (`int8`..`int128`, `uint8`..
//!   `uint128`, `int`, `uint`, `float`, `double`): the `type` and the bounds
//!   say what the model needs. Formats that say how to write a value
//!   (`date`, `date-time`, `email`, `uuid`, `ipv4`, a custom `iban`, ...)
//!   stay, as do `minimum`/`maximum`.
//!
//! The structure validator is compiled from the untrimmed schema, so nothing
//! removed here stops being enforced.

use std::convert::Infallible;

use serde_json::{Map, Value};

use super::keywords::{self, IntegerFormat};

/// Trims `schema` (a tool's input schema) of what a model does not read; see
/// the module documentation. `doc_comment` is the text the tool's
/// description opens with: a root `description` it already holds is removed.
///
/// ```text
/// {"$schema": "...", "title": "Invoice", "description": "Record one invoice.", "type": "object",
///  "properties": {"total": {"type": "number", "format": "double"}}}
///   becomes, for the doc comment "Record one invoice.",
/// {"type": "object", "properties": {"total": {"type": "number"}}}
/// ```
pub(crate) fn trim_for_model(schema: &mut Value, doc_comment: &str) {
    if let Some(root) = schema.as_object_mut() {
        let repeated =
            root.get("description").and_then(Value::as_str).is_some_and(|text| carries(doc_comment, text));
        remove_keeping_order(root, |key| key == "$schema" || (repeated && key == "description"));
    }
    trim_node(schema);
}

/// Removes the keys `drop` names; the others keep their order (a plain
/// `remove` would swap the last key into the gap).
fn remove_keeping_order(node: &mut Map<String, Value>, drop: impl Fn(&str) -> bool) {
    node.retain(|key, _| !drop(key));
}

/// Whether `doc_comment` already says `text`, whitespace aside.
fn carries(doc_comment: &str, text: &str) -> bool {
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let (doc_comment, text) = (words(doc_comment), words(text));
    !text.is_empty() && doc_comment.contains(&text)
}

/// Removes `title` and numeric formats from one schema node and every subschema in it.
fn trim_node(schema: &mut Value) {
    let Some(node) = schema.as_object_mut() else { return };
    let numeric = node.get("format").and_then(Value::as_str).is_some_and(is_numeric_format);
    remove_keeping_order(node, |key| key == "title" || (numeric && key == "format"));
    let _ = keywords::for_each_subschema_mut(schema, |_, _, sub| {
        trim_node(sub);
        Ok::<(), Infallible>(())
    });
}

/// A numeric `format` schemars writes: nothing a model reads beside `type`.
fn is_numeric_format(format: &str) -> bool {
    IntegerFormat::parse(format).is_some() || keywords::is_float_format(format)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn trimmed(mut schema: Value, doc_comment: &str) -> Value {
        trim_for_model(&mut schema, doc_comment);
        schema
    }

    #[test]
    fn the_root_loses_schema_title_and_the_repeated_doc_comment() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Invoice",
            "description": "Record one invoice.",
            "type": "object",
            "properties": {"total": {"type": "number", "format": "double"}},
            "required": ["total"]
        });
        assert_eq!(
            trimmed(schema, "Record one invoice."),
            json!({"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]})
        );
    }

    #[test]
    fn the_other_keys_keep_their_order() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "T",
            "type": "object",
            "properties": {"b": {"type": "integer", "format": "int32", "minimum": 0}, "a": {"type": "string"}},
            "$defs": {}
        });
        let trimmed = trimmed(schema, "");
        let keys: Vec<&str> = trimmed.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["type", "properties", "$defs"]);
        let keys: Vec<&str> = trimmed["properties"].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["b", "a"]);
        let keys: Vec<&str> =
            trimmed["properties"]["b"].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["type", "minimum"]);
    }

    #[test]
    fn a_root_description_the_tool_does_not_carry_stays() {
        let schema = json!({"description": "Written for the schema only.", "type": "object"});
        assert_eq!(trimmed(schema.clone(), "Record one invoice."), schema);
        assert_eq!(trimmed(schema.clone(), ""), schema);
        // Whitespace aside, the same text is the same text; a doc comment
        // whose heading schemars moved to `title` still carries the rest.
        let wrapped = json!({"description": "Record one\ninvoice.", "type": "object"});
        assert_eq!(trimmed(wrapped, "Record one invoice."), json!({"type": "object"}));
        let headed = json!({"title": "Invoices", "description": "Record one.", "type": "object"});
        assert_eq!(trimmed(headed, "# Invoices\nRecord one."), json!({"type": "object"}));
    }

    #[test]
    fn titles_go_everywhere_but_a_property_named_title_stays() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"title": "Title", "type": "string"},
                "book": {"$ref": "#/$defs/Book"},
                "tags": {"type": "array", "items": {"title": "Tag", "type": "string"}},
                "either": {"anyOf": [{"title": "A", "type": "string"}, {"type": "null"}]}
            },
            "required": ["title"],
            "$defs": {
                "Book": {
                    "title": "Book",
                    "description": "One book.",
                    "type": "object",
                    "properties": {"title": {"type": "string"}},
                    "required": ["title"]
                },
                "title": {"title": "A definition named title", "type": "string"}
            }
        });
        assert_eq!(
            trimmed(schema, ""),
            json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "book": {"$ref": "#/$defs/Book"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "either": {"anyOf": [{"type": "string"}, {"type": "null"}]}
                },
                "required": ["title"],
                "$defs": {
                    "Book": {
                        "description": "One book.",
                        "type": "object",
                        "properties": {"title": {"type": "string"}},
                        "required": ["title"]
                    },
                    "title": {"type": "string"}
                }
            })
        );
    }

    #[test]
    fn values_are_not_schemas() {
        // `enum`, `const`, `default` and `examples` hold data: a key `title`
        // or `format` there is the data's own.
        let schema = json!({
            "type": "object",
            "default": {"title": "Dune", "format": "int32"},
            "examples": [{"title": "Emma"}],
            "properties": {"kind": {"const": {"title": "x"}}, "pick": {"enum": [{"format": "double"}]}}
        });
        assert_eq!(trimmed(schema.clone(), ""), schema);
    }

    #[test]
    fn numeric_formats_go_and_bounds_and_other_formats_stay() {
        for format in
            ["int8", "int16", "int32", "int64", "int128", "int", "uint8", "uint32", "uint128", "uint"]
        {
            let schema = json!({"type": "integer", "format": format, "minimum": 0, "maximum": 255});
            assert_eq!(
                trimmed(schema, ""),
                json!({"type": "integer", "minimum": 0, "maximum": 255}),
                "{format}"
            );
        }
        for format in ["float", "double"] {
            assert_eq!(trimmed(json!({"type": "number", "format": format}), ""), json!({"type": "number"}));
        }
        for format in [
            "date",
            "date-time",
            "time",
            "duration",
            "email",
            "uuid",
            "uri",
            "ipv4",
            "ipv6",
            "ip",
            "hostname",
            "iban",
        ] {
            let schema = json!({"type": "string", "format": format});
            assert_eq!(trimmed(schema.clone(), ""), schema, "{format}");
        }
        // Not numeric formats, though they look alike.
        for format in ["int7", "integer", "uint256"] {
            let schema = json!({"type": "integer", "format": format});
            assert_eq!(trimmed(schema.clone(), ""), schema, "{format}");
        }
    }
}
