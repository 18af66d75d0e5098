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
//! [`inline_single_use_definitions`] then writes each `$defs` entry that one
//! `$ref` alone uses in place of that `$ref`: the same schema, read without a
//! jump, and shorter by the reference and the definition's name.
//!
//! The structure validator is compiled from the untrimmed schema, so nothing
//! removed here stops being enforced.

use std::collections::HashMap;
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

/// Writes every `$defs` entry that exactly one `$ref` uses, and that does not
/// refer to itself at any depth, in place of that `$ref`; removes `$defs`
/// once it is empty. An entry used twice or recursive stays a definition (a
/// copy would grow the schema, or never end), as does one whose `$ref`
/// carries a keyword the entry also has (a field's description beside a
/// type's): merging would drop one of them. A `$ref` of any other form than
/// `#/$defs/NAME` (or `#`) leaves every entry where it is.
///
/// ```text
/// {"properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
///  "$defs": {"Item": {"type": "object", "properties": {...}}}}
///   becomes
/// {"properties": {"items": {"type": "array", "items": {"type": "object", "properties": {...}}}}}
/// ```
pub(crate) fn inline_single_use_definitions(schema: &mut Value) {
    while let Some(name) = next_to_inline(schema) {
        let Some(defs) = schema.get_mut("$defs").and_then(Value::as_object_mut) else { return };
        let Some(Value::Object(definition)) = defs.get(&name).cloned() else { return };
        remove_keeping_order(defs, |key| key == name);
        replace_reference(schema, &reference_to(&name), &definition);
    }
    if let Some(root) = schema.as_object_mut()
        && root.get("$defs").and_then(Value::as_object).is_some_and(|defs| defs.is_empty())
    {
        remove_keeping_order(root, |key| key == "$defs");
    }
}

/// The `$ref` that names the definition `name`.
fn reference_to(name: &str) -> String {
    format!("#/$defs/{}", name.replace('~', "~0").replace('/', "~1"))
}

/// The definition the next round inlines, if any may be.
fn next_to_inline(schema: &Value) -> Option<String> {
    let defs = schema.get("$defs")?.as_object()?;
    // Every `$ref` in the schema, definitions included, by target.
    let mut referrers: HashMap<&str, Vec<&Map<String, Value>>> = HashMap::new();
    let mut other_forms = false;
    visit_nodes(schema, &mut |node| {
        if let Some(target) = node.get("$ref").and_then(Value::as_str) {
            match target
                .strip_prefix("#/$defs/")
                .map(|name| (name, defs.keys().any(|k| reference_to(k) == target)))
            {
                Some((_, true)) => referrers.entry(target).or_default().push(node),
                _ if target == "#" => {}
                _ => other_forms = true,
            }
        }
    });
    if other_forms {
        return None;
    }
    defs.iter().find_map(|(name, definition)| {
        let target = reference_to(name);
        let [referrer] = referrers.get(target.as_str())?.as_slice() else { return None };
        let clash = definition.as_object()?.keys().any(|key| key != "$ref" && referrer.contains_key(key));
        (!clash && !reaches(defs, definition, &target, &mut Vec::new())).then(|| name.clone())
    })
}

/// Whether `schema`, following `$ref`s through `defs`, refers to `target`.
fn reaches<'a>(
    defs: &'a Map<String, Value>,
    schema: &'a Value,
    target: &str,
    visited: &mut Vec<&'a str>,
) -> bool {
    let mut found = false;
    visit_nodes(schema, &mut |node| {
        let Some(reference) = node.get("$ref").and_then(Value::as_str) else { return };
        if found || reference == target {
            found = true;
            return;
        }
        let Some((name, definition)) = defs.iter().find(|(name, _)| reference_to(name) == reference) else {
            return;
        };
        if !visited.contains(&name.as_str()) {
            visited.push(name);
            found = reaches(defs, definition, target, visited);
        }
    });
    found
}

/// Calls `visit` on `schema` and every schema node inside it (definitions included).
fn visit_nodes<'a>(schema: &'a Value, visit: &mut dyn FnMut(&'a Map<String, Value>)) {
    let Some(node) = schema.as_object() else { return };
    visit(node);
    for sub in keywords::subschemas(schema) {
        visit_nodes(sub, visit);
    }
}

/// Replaces the node whose `$ref` is `target` by `definition`, keeping the
/// node's other keywords (before the definition's, where the `$ref` was).
fn replace_reference(schema: &mut Value, target: &str, definition: &Map<String, Value>) -> bool {
    if let Some(node) = schema.as_object_mut()
        && node.get("$ref").and_then(Value::as_str) == Some(target)
    {
        let mut merged = Map::new();
        for (key, value) in std::mem::take(node) {
            if key == "$ref" {
                merged.extend(definition.clone());
            } else {
                merged.insert(key, value);
            }
        }
        *node = merged;
        return true;
    }
    let mut done = false;
    let _ = keywords::for_each_subschema_mut(schema, |_, _, sub| {
        if !done {
            done = replace_reference(sub, target, definition);
        }
        Ok::<(), Infallible>(())
    });
    done
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

    fn inlined(mut schema: Value) -> Value {
        inline_single_use_definitions(&mut schema);
        schema
    }

    #[test]
    fn a_definition_used_once_is_written_where_it_is_used() {
        let schema = json!({
            "type": "object",
            "properties": {
                "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}},
                "party": {"description": "Who pays.", "$ref": "#/$defs/Party"}
            },
            "$defs": {
                "Line": {"type": "object", "properties": {"tax": {"$ref": "#/$defs/Tax"}}},
                "Tax": {"type": "number"},
                "Party": {"type": "object", "properties": {"name": {"type": "string"}}}
            }
        });
        assert_eq!(
            inlined(schema),
            json!({
                "type": "object",
                "properties": {
                    "lines": {
                        "type": "array",
                        "items": {"type": "object", "properties": {"tax": {"type": "number"}}}
                    },
                    "party": {
                        "description": "Who pays.",
                        "type": "object",
                        "properties": {"name": {"type": "string"}}
                    }
                }
            })
        );
    }

    #[test]
    fn shared_recursive_and_clashing_definitions_stay() {
        let schema = json!({
            "type": "object",
            "properties": {
                "from": {"$ref": "#/$defs/Address"},
                "to": {"$ref": "#/$defs/Address"},
                "tree": {"$ref": "#/$defs/Node"},
                "chain": {"$ref": "#/$defs/A"},
                "party": {"description": "The field's.", "$ref": "#/$defs/Party"}
            },
            "$defs": {
                "Address": {"type": "string"},
                "Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}},
                "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
                "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
                "Party": {"description": "The type's.", "type": "object"}
            }
        });
        // A and B are each used once, but each reaches itself through the other.
        assert_eq!(inlined(schema.clone()), schema);
    }

    #[test]
    fn a_reference_of_another_form_leaves_every_definition() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/$defs/A/properties/x"}},
            "$defs": {"A": {"type": "object", "properties": {"x": {"type": "string"}}}}
        });
        assert_eq!(inlined(schema.clone()), schema);
        let recursive_root = json!({
            "type": "object",
            "properties": {"parent": {"$ref": "#"}, "a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"type": "string"}}
        });
        assert_eq!(
            inlined(recursive_root),
            json!({"type": "object", "properties": {"parent": {"$ref": "#"}, "a": {"type": "string"}}})
        );
    }
}
