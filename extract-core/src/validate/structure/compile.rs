//! What a schema can judge, worked out once when a type's validator is
//! compiled: whether serde alone enforces it, how deep it constrains an
//! output, and the `f32` bounds serde does not check.

use serde_json::Value;

use crate::FieldPath;
use crate::Segment;
use crate::schema::keywords::{Holds, IntegerFormat, holds, is_float_format, subschemas, subschemas_named};

/// How deep [`needs_schema_pass`] looks into a schema (guards pathological schemas).
pub(super) const MAX_SCHEMA_DEPTH: usize = 128;

/// How many levels of an instance `schema` constrains (`properties`, `items`
/// and the like add one; `$ref` and unions add none); `None` for a recursive
/// schema, whose depth has no bound.
pub(super) fn schema_depth(root: &Value, schema: &Value, refs: &mut Vec<String>) -> Option<usize> {
    let Some(node) = schema.as_object() else { return Some(0) };
    if refs.len() > MAX_SCHEMA_DEPTH {
        return None;
    }
    let mut depth = node.get("const").map_or(0, literal_depth);
    for literal in node.get("enum").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
        depth = depth.max(literal_depth(literal));
    }
    if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
        if refs.iter().any(|r| r == reference) {
            return None;
        }
        if let Some(target) = reference.strip_prefix('#').and_then(|p| root.pointer(p)) {
            refs.push(reference.to_string());
            let inner = schema_depth(root, target, refs);
            refs.pop();
            depth = depth.max(inner?);
        }
    }
    for (keyword, _, sub) in subschemas_named(schema) {
        let below = match holds(keyword) {
            // Definitions are reached through `$ref`, above.
            Some(Holds::Definitions) | None => continue,
            // Applied to the instance itself.
            Some(Holds::InPlace | Holds::Branches) => 0,
            Some(Holds::Properties) if keyword == "dependentSchemas" => 0,
            // Applied to its items, values or keys.
            Some(Holds::Inner | Holds::Positions | Holds::Properties) => 1,
        };
        depth = depth.max(below + schema_depth(root, sub, refs)?);
    }
    Some(depth)
}

/// The path of the first node of `value` deeper than `limit` (the root is
/// depth 0), if there is one. Iterative, linear in the size of `value`.
pub(super) fn too_deep(value: &Value, limit: usize) -> Option<FieldPath> {
    // Every visited node: its parent's index in `nodes` and its own segment.
    let mut nodes: Vec<(usize, Option<Segment>)> = vec![(0, None)];
    let mut stack = vec![(value, 0usize, 0usize)];
    while let Some((node, depth, index)) = stack.pop() {
        let children: Vec<(Segment, &Value)> = match node {
            Value::Array(items) => items.iter().enumerate().map(|(i, v)| (Segment::Index(i), v)).collect(),
            Value::Object(fields) => {
                fields.iter().map(|(k, v)| (Segment::Key(k.clone().into()), v)).collect()
            }
            _ => continue,
        };
        for (segment, child) in children {
            nodes.push((index, Some(segment)));
            let child_index = nodes.len() - 1;
            if depth + 1 > limit {
                let mut segments = Vec::new();
                let mut at = child_index;
                while let (parent, Some(segment)) = &nodes[at] {
                    segments.push(segment.clone());
                    at = *parent;
                }
                segments.reverse();
                return Some(FieldPath::from_segments(segments));
            }
            stack.push((child, depth + 1, child_index));
        }
    }
    None
}

/// Whether a schema uses `uniqueItems` anywhere.
pub(super) fn mentions_unique_items(schema: &Value, depth: usize) -> bool {
    depth > MAX_SCHEMA_DEPTH
        || schema.get("uniqueItems").is_some_and(|u| u != &Value::Bool(false))
        || subschemas(schema).any(|sub| mentions_unique_items(sub, depth + 1))
}

/// How deep a literal value (`const`, `enum` entry) nests. Iterative.
fn literal_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match node {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(fields) => stack.extend(fields.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    deepest
}

/// A copy of `value` with every node deeper than `limit` replaced by `null`
/// (containers at `limit` keep their keys and lengths). Recursion is bounded by `limit`.
pub(super) fn cut_below(value: &Value, limit: usize) -> Value {
    match value {
        _ if limit == 0 => match value {
            Value::Array(items) => Value::Array(vec![Value::Null; items.len()]),
            Value::Object(fields) => Value::Object(fields.keys().map(|k| (k.clone(), Value::Null)).collect()),
            scalar => scalar.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(|v| cut_below(v, limit - 1)).collect()),
        Value::Object(fields) => {
            Value::Object(fields.iter().map(|(k, v)| (k.clone(), cut_below(v, limit - 1))).collect())
        }
        scalar => scalar.clone(),
    }
}

/// Whether `schema` holds a keyword serde does not enforce by itself.
pub(super) fn needs_schema_pass(schema: &Value, depth: usize) -> bool {
    let Some(node) = schema.as_object() else { return false };
    if depth > MAX_SCHEMA_DEPTH {
        return true;
    }
    const SCHEMA_ONLY: &[&str] = &[
        "pattern",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "const",
        "contains",
        "minContains",
        "maxContains",
        "not",
        "if",
        "propertyNames",
        "patternProperties",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
        "unevaluatedItems",
    ];
    if SCHEMA_ONLY.iter().any(|k| node.contains_key(*k)) {
        return true;
    }
    let format = node.get("format").and_then(Value::as_str);
    let range = format.and_then(IntegerFormat::parse).map(IntegerFormat::range);
    if let Some(format) = format
        && range.is_none()
        && !is_float_format(format)
    {
        return true;
    }
    let bound_is_natural = |key: &str, natural: Option<f64>| {
        node.get(key).is_none_or(|b| b.as_f64().is_some_and(|b| natural.is_some_and(|n| b == n)))
    };
    if !bound_is_natural("minimum", range.map(|r| r.0))
        || !bound_is_natural("maximum", range.and_then(|r| r.1))
    {
        return true;
    }
    subschemas(schema).any(|sub| needs_schema_pass(sub, depth + 1))
}

/// Adds `f32`'s range to every `format: "float"` number schema that has no
/// bounds of its own; whether there was one.
pub(super) fn bound_f32(schema: &mut Value) -> bool {
    match schema {
        Value::Object(node) => {
            let mut found = false;
            if node.get("format").and_then(Value::as_str) == Some("float") {
                let max = f64::from(f32::MAX);
                node.entry("minimum").or_insert(Value::from(-max));
                node.entry("maximum").or_insert(Value::from(max));
                found = true;
            }
            // Every child is visited (no short circuit): each must be bounded.
            for child in node.values_mut() {
                found |= bound_f32(child);
            }
            found
        }
        Value::Array(items) => {
            let mut found = false;
            for child in items {
                found |= bound_f32(child);
            }
            found
        }
        _ => false,
    }
}

/// Whether any number in `value` lies beyond `f32`'s range (iteratively, so
/// deep values cannot overflow the stack).
pub(super) fn exceeds_f32(value: &Value) -> bool {
    let limit = f64::from(f32::MAX);
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Number(n) if n.as_f64().is_some_and(|x| x.abs() > limit) => return true,
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.values()),
            _ => {}
        }
    }
    false
}
