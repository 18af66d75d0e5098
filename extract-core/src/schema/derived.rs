//! The tool of a derived type: its description lists the checks (nested
//! types' included, in JSON names), and its schema admits `null` for data
//! tagged `recoverable = false` and is trimmed of what the model does not
//! read ([`super::lean`]).

use serde_json::Value;

use super::lean::trim_for_model;
use crate::Tool;
use crate::schema::TypeInfo;

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
        description.push_str("The input must satisfy these checks:");
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
        // The derived types inside the field, paired with the `$defs` its
        // schema refers to, in the order both appear (a tuple's elements,
        // say); when the counts differ, the first with the first.
        let mut nested = Vec::new();
        field.shape.nested(&mut |info, _| nested.push(info));
        let mut refs = Vec::new();
        collect_refs(property, &mut refs);
        let pairs: Vec<_> = if nested.len() == refs.len() {
            nested.into_iter().zip(refs).collect()
        } else {
            // Refs of plain data (an enum, a `Sourced`) are in the list too:
            // pair each derived type with the definition named after it.
            nested
                .into_iter()
                .filter_map(|info| Some((info, refs.iter().find(|r| *r == info.rust_name)?.clone())))
                .collect()
        };
        for (nested, name) in pairs {
            if seen.contains(&name) {
                continue;
            }
            let Some(mut def) = defs.get_mut(&name).map(Value::take) else { continue };
            seen.push(name.clone());
            admit_null_in(&mut def, nested, defs, seen);
            defs[&name] = def;
        }
        if !field.recoverable {
            admit_null(property);
        }
    }
}

/// The names of the `$defs` entries a property schema refers to, in order.
fn collect_refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(name) =
                map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/"))
            {
                out.push(name.to_string());
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

fn admit_null(property: &mut Value) {
    const NOTE: &str = "Null when the document does not state it; never invent a value.";
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
