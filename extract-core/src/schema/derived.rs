//! The tool of a derived type: its description lists the checks (nested
//! types' included, in JSON names), and its schema admits `null` for data
//! tagged `recoverable = false` and is trimmed of what the model does not
//! read ([`super::lean`]).

use serde_json::Value;

use super::lean::trim_for_model;
use crate::Tool;
use crate::schema::{Shape, TypeInfo};

/// The tool a model fills in for the type `info` describes, from the type's
/// schemars schema (the validator keeps its own, untouched copy).
pub fn tool_of(info: &'static TypeInfo, schema: Value) -> Tool {
    let mut schema = schema;
    admit_null_for_absent_data(&mut schema, info);
    let mut description = info.description.trim().to_string();
    // The description opens with the doc comment, so the schema need not repeat it.
    trim_for_model(&mut schema, &description);
    let mut checks = Vec::new();
    list_checks(info, None, &mut checks, &mut Vec::new());
    if !checks.is_empty() {
        if !description.is_empty() {
            description.push_str("\n\n");
        }
        description.push_str("Checks the input must pass:");
        for check in checks {
            description.push_str("\n- ");
            description.push_str(&check);
        }
    }
    Tool { name: info.tool_name.to_string(), description, input_schema: schema, strict: false }
}

/// The checks of `info` and of every type nested in it, each in the JSON
/// names the model sees. A nested type's checks say where they apply:
/// "in `vendor`: ..." or "in each `line_items`: ...". `at` is the JSON path
/// of `info` and whether it passes through a collection.
fn list_checks(
    info: &'static TypeInfo,
    at: Option<(&str, bool)>,
    out: &mut Vec<String>,
    seen: &mut Vec<&'static TypeInfo>,
) {
    // By identity, not name: two types may share a name in different modules.
    if seen.iter().any(|s| std::ptr::eq(*s, info)) {
        return;
    }
    seen.push(info);
    for check in info.checks() {
        let mut line = match check.with {
            Some(function) => format!("passes `{function}`"),
            None => info.render(check.rule),
        };
        if let Some(tolerance) = check.tolerance {
            line.push_str(&format!(" (tolerance {tolerance})"));
        }
        if let Some((path, many)) = at {
            line = format!("in {}`{path}`: {line}", if many { "each " } else { "" });
        }
        out.push(line);
    }
    for field in info.fields() {
        let mut nested = Vec::new();
        field.shape.nested(&mut |info, many| nested.push((info, many)));
        for (nested, through_collection) in nested {
            let (path, many) = match at {
                None => (field.json_name.to_string(), through_collection),
                Some((path, many)) => (format!("{path}.{}", field.json_name), many || through_collection),
            };
            list_checks(nested, Some((&path, many)), out, seen);
        }
    }
    seen.pop();
}

/// Makes every field tagged `recoverable = false` (at any depth) accept `null`
/// in the tool's schema, and says in its description what `null` means.
fn admit_null_for_absent_data(schema: &mut Value, info: &'static TypeInfo) {
    let mut defs = schema.get_mut("$defs").map(Value::take).unwrap_or(Value::Null);
    let mut seen = Vec::new();
    admit_null_in(schema, info, &mut defs, &mut seen);
    if !defs.is_null() {
        schema["$defs"] = defs;
    }
}

fn admit_null_in(object: &mut Value, info: &'static TypeInfo, defs: &mut Value, seen: &mut Vec<String>) {
    let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) else { return };
    for field in info.fields() {
        let Some(property) = properties.get_mut(field.json_name) else { continue };
        admit_null_inside(property, field.shape, defs, seen);
        if !field.recoverable {
            admit_null(property);
        }
    }
}

/// Follows `shape` through `schema` (the schema of a value of that shape)
/// down to every derived type inside, and admits null for their tagged
/// fields. The shape says where each value sits: a `Sourced` value under
/// `value`, a sequence's under `items`, a map's under `additionalProperties`,
/// a tuple's under `prefixItems`; an `Option` in any branch of a union.
fn admit_null_inside(schema: &mut Value, shape: &'static Shape, defs: &mut Value, seen: &mut Vec<String>) {
    if matches!(shape, Shape::Leaf) {
        return;
    }
    if let Some(name) = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        // A definition is shared by every value of its type: visit it once
        // (which also ends the walk of a recursive type).
        let name = name.to_string();
        if seen.contains(&name) {
            return;
        }
        let Some(mut def) = defs.get_mut(&name).map(Value::take) else { return };
        seen.push(name.clone());
        admit_null_inside(&mut def, shape, defs, seen);
        defs[&name] = def;
        return;
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get_mut(union) {
            branches.iter_mut().for_each(|branch| admit_null_inside(branch, shape, defs, seen));
        }
    }
    match shape {
        Shape::Leaf => {}
        Shape::Named(info) => admit_null_in(schema, info, defs, seen),
        Shape::Wrap(inner) => admit_null_inside(schema, inner, defs, seen),
        Shape::Sourced(inner) => {
            if let Some(value) = schema.pointer_mut("/properties/value") {
                admit_null_inside(value, inner, defs, seen);
            }
        }
        Shape::Seq(inner) => {
            if let Some(items) = schema.get_mut("items") {
                admit_null_inside(items, inner, defs, seen);
            }
        }
        Shape::Map(inner) => {
            if let Some(values) = schema.get_mut("additionalProperties") {
                admit_null_inside(values, inner, defs, seen);
            }
        }
        Shape::Tuple(elements) => {
            if let Some(Value::Array(items)) = schema.get_mut("prefixItems") {
                for (item, element) in items.iter_mut().zip(elements.iter()) {
                    admit_null_inside(item, element, defs, seen);
                }
            }
        }
    }
}

fn admit_null(property: &mut Value) {
    const NOTE: &str = "Null if not stated.";
    let Some(map) = property.as_object_mut() else { return };
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    let has_const = map.contains_key("const");
    let has_enum = map.contains_key("enum");
    match map.get_mut("type") {
        _ if has_const => wrap_with_null(map),
        None if has_enum => {}
        Some(Value::String(ty)) => {
            let ty = std::mem::take(ty);
            map.insert("type".into(), Value::from(vec![ty, "null".to_string()]));
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push("null".into());
            }
        }
        _ => wrap_with_null(map),
    }
    let description = match map.get("description").and_then(Value::as_str) {
        // The author already said what null means.
        Some(text) if text.to_lowercase().contains("null") => return,
        Some(text) => format!("{text} {NOTE}"),
        None => NOTE.to_string(),
    };
    map.insert("description".into(), Value::String(description));
}

/// `{..schema}` becomes `{"anyOf": [{..schema}, {"type": "null"}]}`, keeping the description outside.
fn wrap_with_null(map: &mut serde_json::Map<String, Value>) {
    let description = map.remove("description");
    let inner = Value::Object(std::mem::take(map));
    map.insert("anyOf".into(), serde_json::json!([inner, {"type": "null"}]));
    if let Some(description) = description {
        map.insert("description".into(), description);
    }
}
