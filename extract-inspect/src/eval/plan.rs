//! Which fields an evaluation scores, read off the type's tool schema: every
//! leaf by its JSON path ("total", "vendor.name"), what kind of value it
//! holds (which picks its default comparison), and whether the type
//! requires it. The same plan checks that a case's expected JSON fits the
//! type before any model is called.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Match;
use crate::vocabulary::text::kind_of;

/// What a leaf holds, as its schema says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Text,
    Number,
    Boolean,
    /// A string whose `format` is `date` or `date-time`.
    Date,
    /// Anything compared whole: an array not matched item by item, a map,
    /// a union.
    Whole,
}

/// One scored field.
#[derive(Debug, Clone)]
pub(super) struct Field {
    /// Its JSON path: `total`, `vendor.name`, `line_items[].amount`.
    pub path: String,
    /// Where to find it: object keys, with `Items` where an array's items
    /// are matched one by one.
    pub steps: Vec<Step>,
    pub kind: Kind,
    /// A `Sourced` value: `{value, quote}`, scored on `value` alone.
    pub sourced: bool,
    /// Required at every step from the root (a null truth for one makes an
    /// escalated document `escalated_absent`).
    pub required: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Step {
    Key(String),
    /// The items of an array, matched as the caller said.
    Items(Match),
}

/// The fields of a schema, in the order of its properties.
pub(super) fn fields(schema: &Value, matches: &BTreeMap<String, Match>) -> Vec<Field> {
    let mut out = Vec::new();
    let mut walk = Walk { root: schema, matches, out: &mut out, depth: 0 };
    walk.object(schema, "", &[], true);
    out
}

struct Walk<'a> {
    root: &'a Value,
    matches: &'a BTreeMap<String, Match>,
    out: &'a mut Vec<Field>,
    /// Guards against a recursive type: below this depth, an object is one
    /// field compared whole.
    depth: usize,
}

const MAX_DEPTH: usize = 8;

impl<'a> Walk<'a> {
    fn object(&mut self, schema: &'a Value, prefix: &str, steps: &[Step], required: bool) {
        let schema = resolve(schema, self.root);
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
        let needed: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, property) in properties {
            let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
            let mut here = steps.to_vec();
            here.push(Step::Key(name.clone()));
            self.property(property, path, here, required && needed.contains(&name.as_str()));
        }
    }

    fn property(&mut self, schema: &'a Value, path: String, steps: Vec<Step>, required: bool) {
        let schema = resolve(non_null(schema, self.root), self.root);
        if is_sourced(schema) {
            let value = resolve(non_null(&schema["properties"]["value"], self.root), self.root);
            let kind = leaf_kind(value);
            self.out.push(Field { path, steps, kind, sourced: true, required });
            return;
        }
        if schema.get("properties").is_some() && self.depth < MAX_DEPTH {
            self.depth += 1;
            self.object(schema, &path, &steps, required);
            self.depth -= 1;
            return;
        }
        if let (Some(how), Some(items)) = (self.matches.get(&path), schema.get("items"))
            && self.depth < MAX_DEPTH
        {
            // The array itself: are the expected items all there, and no more?
            self.out.push(Field {
                path: path.clone(),
                steps: steps.clone(),
                kind: Kind::Whole,
                sourced: false,
                required,
            });
            let mut inner = steps;
            inner.push(Step::Items(how.clone()));
            self.depth += 1;
            let item = resolve(non_null(items, self.root), self.root);
            if item.get("properties").is_some() {
                self.object(item, &format!("{path}[]"), &inner, false);
            } else {
                let kind = leaf_kind(item);
                self.out.push(Field {
                    path: format!("{path}[]"),
                    steps: inner,
                    kind,
                    sourced: false,
                    required: false,
                });
            }
            self.depth -= 1;
            return;
        }
        self.out.push(Field { path, steps, kind: leaf_kind(schema), sourced: false, required });
    }
}

/// The schema a `$ref` points at (in `$defs`), or `schema` itself.
fn resolve<'s>(schema: &'s Value, root: &'s Value) -> &'s Value {
    let mut schema = schema;
    for _ in 0..16 {
        let Some(pointer) = schema.get("$ref").and_then(Value::as_str) else { break };
        match pointer.strip_prefix('#').and_then(|p| root.pointer(p)) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// The non-null branch of an `anyOf`/`oneOf` with `{"type": "null"}` (an
/// `Option` of a type with a schema of its own), or `schema` itself.
fn non_null<'s>(schema: &'s Value, root: &'s Value) -> &'s Value {
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let others: Vec<&Value> = branches
                .iter()
                .filter(|b| resolve(b, root).get("type") != Some(&Value::from("null")))
                .collect();
            if others.len() == 1 {
                return others[0];
            }
        }
    }
    schema
}

/// `Sourced<T>`'s schema: an object of exactly `value` and `quote`.
fn is_sourced(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.len() == 2 && p.contains_key("value") && p.contains_key("quote"))
}

fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(ty)) => vec![ty.as_str()],
        Some(Value::Array(tys)) => tys.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect(),
        _ => Vec::new(),
    }
}

fn leaf_kind(schema: &Value) -> Kind {
    let format = schema.get("format").and_then(Value::as_str);
    match types(schema).as_slice() {
        ["string"] if matches!(format, Some("date" | "date-time")) => Kind::Date,
        ["string"] => Kind::Text,
        ["number"] | ["integer"] => Kind::Number,
        ["boolean"] => Kind::Boolean,
        _ => Kind::Whole,
    }
}

/// Why `expected` does not fit the plan's type, naming the field: a key the
/// type lacks, a field left out (a case says "absent" with `null`), or a
/// value of the wrong kind. `None` when it fits.
pub(super) fn misfit(expected: &Value, schema: &Value) -> Option<String> {
    let Some(object) = expected.as_object() else {
        return Some(format!("the expected JSON is {}, not an object", kind_of(expected)));
    };
    misfit_object(object, schema, schema, "", 0)
}

fn misfit_object(
    object: &Map<String, Value>,
    schema: &Value,
    root: &Value,
    prefix: &str,
    depth: usize,
) -> Option<String> {
    let schema = resolve(schema, root);
    let properties = schema.get("properties").and_then(Value::as_object)?;
    let at = |name: &str| if prefix.is_empty() { name.to_string() } else { format!("{prefix}.{name}") };
    for key in object.keys() {
        if !properties.contains_key(key) {
            let known: Vec<&str> = properties.keys().map(String::as_str).collect();
            return Some(format!(
                "`{}` is not a field of the type (its fields: {})",
                at(key),
                known.join(", ")
            ));
        }
    }
    for (name, property) in properties {
        let Some(value) = object.get(name) else {
            return Some(format!("`{}` is missing (write null where the source lacks the datum)", at(name)));
        };
        if let Some(why) = misfit_value(value, property, root, &at(name), depth) {
            return Some(why);
        }
    }
    None
}

fn misfit_value(value: &Value, schema: &Value, root: &Value, path: &str, depth: usize) -> Option<String> {
    if value.is_null() || depth > MAX_DEPTH {
        return None;
    }
    let schema = resolve(non_null(schema, root), root);
    if is_sourced(schema) {
        // The truth of a `Sourced` field is its value (a quote is optional).
        let inner = value.as_object().and_then(|o| o.get("value")).unwrap_or(value);
        return misfit_value(inner, &schema["properties"]["value"], root, path, depth + 1);
    }
    if schema.get("properties").is_some() {
        return match value.as_object() {
            Some(object) => misfit_object(object, schema, root, path, depth + 1),
            None => Some(format!("`{path}` is {}, and the type has an object there", kind_of(value))),
        };
    }
    let wrong =
        |wanted: &str| Some(format!("`{path}` is {}, and the type has {wanted} there", kind_of(value)));
    match (leaf_kind(schema), value) {
        (Kind::Text, Value::String(_))
        | (Kind::Number, Value::Number(_))
        | (Kind::Boolean, Value::Bool(_)) => None,
        (Kind::Date, Value::String(text)) => match super::score::parse_date(text) {
            Some(_) => None,
            None => Some(format!("`{path}` is \"{text}\", which is not a date (YYYY-MM-DD)")),
        },
        (Kind::Text, _) => wrong("a string"),
        (Kind::Number, _) => wrong("a number"),
        (Kind::Boolean, _) => wrong("a boolean"),
        (Kind::Date, _) => wrong("a date"),
        (Kind::Whole, _) => {
            if types(schema) == ["array"] {
                let Some(items) = value.as_array() else { return wrong("an array") };
                let item = schema.get("items").unwrap_or(&Value::Null);
                items
                    .iter()
                    .enumerate()
                    .find_map(|(i, v)| misfit_value(v, item, root, &format!("{path}[{i}]"), depth + 1))
            } else {
                None
            }
        }
    }
}
