//! The fix form: a type's schema read once into [`Field`]s whose inputs
//! follow it (number, date, a choice for an enum, text, `null` where the
//! type allows it, arrays of objects as rows), and a submitted form read
//! back into a JSON merge patch over the last output.
//!
//! Inputs are named by path: a top-level field by its JSON name
//! (`purchase_order`), a member of an object `total.amount`, a row's
//! cell `line_items[0].amount`, a `Sourced` value by its own path and its
//! quote by `<path>.quote`; `<path>~null` is the checkbox that makes a
//! field `null`, `<path>~remove` the one that removes a row. What cannot be
//! read as the schema says (a number that is not one) is sent as text, so
//! the structure layer names it beside its field, as it would a model's.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The blank rows a table of rows offers for new ones (no script needed).
pub(crate) const BLANK_ROWS: usize = 2;

/// One field of the form: its JSON name and what its input is.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub name: String,
    pub input: Input,
    /// Whether the field may be `null` or absent (an `Option`, a field not required).
    pub nullable: bool,
}

/// What input a value gets, read from its schema.
#[derive(Debug, Clone)]
pub(crate) enum Input {
    Text,
    Number {
        integer: bool,
    },
    Date,
    Boolean,
    /// An enum: one of these values (as JSON).
    Choice(Vec<Value>),
    /// A `Sourced` value: the value's input and its quote.
    Sourced(Box<Input>),
    /// An object: its members.
    Object(Vec<Field>),
    /// An array of objects, one row each, one column per member.
    Rows(Vec<Field>),
    /// An array of plain values, one row each.
    List(Box<Input>),
    /// Anything else (maps, tuples, unions): edited as JSON.
    Json,
}

/// The fields of the type whose input schema is `schema`, in its order.
pub(crate) fn fields_of(schema: &Value) -> Vec<Field> {
    members(schema, schema)
}

fn members(schema: &Value, root: &Value) -> Vec<Field> {
    let node = resolve(schema, root);
    let required: Vec<&str> =
        node["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let Some(properties) = node["properties"].as_object() else { return Vec::new() };
    properties
        .iter()
        .map(|(name, property)| {
            let (input, null) = input_of(property, root, 0);
            Field { name: name.clone(), input, nullable: null || !required.contains(&name.as_str()) }
        })
        .collect()
}

/// `schema` with a local `$ref` followed (`#/$defs/X`, `#/definitions/X`).
fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut node = schema;
    for _ in 0..16 {
        let Some(reference) = node["$ref"].as_str() else { break };
        let Some(pointer) = reference.strip_prefix('#') else { break };
        match root.pointer(pointer) {
            Some(target) => node = target,
            None => break,
        }
    }
    node
}

/// The input of a value of `schema`, and whether the schema admits `null`.
fn input_of(schema: &Value, root: &Value, depth: usize) -> (Input, bool) {
    if depth > 8 {
        return (Input::Json, false);
    }
    let node = resolve(schema, root);
    // `anyOf`/`oneOf` with a `null` member: an `Option` of the other.
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = node[key].as_array() {
            let null = options.iter().any(|o| resolve(o, root)["type"] == "null");
            let others: Vec<&Value> = options.iter().filter(|o| resolve(o, root)["type"] != "null").collect();
            if let Some(choices) = constants(&others, root) {
                return (Input::Choice(choices), null);
            }
            if others.len() == 1 {
                let (input, inner_null) = input_of(others[0], root, depth + 1);
                return (input, null || inner_null);
            }
            return (Input::Json, null);
        }
    }
    if let Some(choices) = node["enum"].as_array() {
        let null = choices.iter().any(Value::is_null);
        return (Input::Choice(choices.iter().filter(|c| !c.is_null()).cloned().collect()), null);
    }
    let (kind, null) = match &node["type"] {
        Value::String(kind) => (kind.as_str(), false),
        Value::Array(kinds) => {
            let null = kinds.iter().any(|k| k == "null");
            let others: Vec<&str> = kinds.iter().filter_map(Value::as_str).filter(|k| *k != "null").collect();
            (if others.len() == 1 { others[0] } else { "" }, null)
        }
        _ => ("", false),
    };
    let input = match kind {
        "string" if matches!(node["format"].as_str(), Some("date")) => Input::Date,
        "string" => Input::Text,
        "integer" => Input::Number { integer: true },
        "number" => Input::Number { integer: false },
        "boolean" => Input::Boolean,
        "object" => {
            let fields = members(node, root);
            let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            match (names.as_slice(), fields.first()) {
                (["value", "quote"] | ["quote", "value"], _) => {
                    let value = fields.iter().find(|f| f.name == "value").expect("named above");
                    Input::Sourced(Box::new(value.input.clone()))
                }
                (_, Some(_))
                    if node["additionalProperties"].is_null() || node["additionalProperties"] == false =>
                {
                    Input::Object(fields)
                }
                _ => Input::Json,
            }
        }
        "array" => match input_of(&node["items"], root, depth + 1).0 {
            Input::Object(columns) => Input::Rows(columns),
            item @ (Input::Text | Input::Number { .. } | Input::Date | Input::Boolean | Input::Choice(_)) => {
                Input::List(Box::new(item))
            }
            _ => Input::Json,
        },
        _ => Input::Json,
    };
    (input, null)
}

/// The values of an enum written as `oneOf` of constants, if it is one.
fn constants(options: &[&Value], root: &Value) -> Option<Vec<Value>> {
    let mut values = Vec::new();
    for option in options {
        let option = resolve(option, root);
        if let Some(value) = option.get("const") {
            values.push(value.clone());
        } else if let Some(listed) = option["enum"].as_array() {
            values.extend(listed.iter().cloned());
        } else {
            return None;
        }
    }
    (!values.is_empty()).then_some(values)
}

/// A value as its input shows it: text as is, anything else as JSON.
pub(crate) fn shown(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A submitted form: each input's last value by name.
pub(crate) struct Submitted {
    values: BTreeMap<String, String>,
}

/// Rows a reviewer may add beyond those the form offered (its blank rows
/// included): a generous margin, so a form the page's script extends is
/// read, and a fixed one, so one input cannot make the reader loop.
pub(crate) const EXTRA_ROWS: usize = 200;

impl Submitted {
    pub fn new(pairs: Vec<(String, String)>) -> Submitted {
        Submitted { values: pairs.into_iter().collect() }
    }

    /// `Err` naming the first input whose row index (`items[12].amount`)
    /// is not a number below `limit`: the reader's work is bounded by the
    /// rows the output has, not by what an input claims.
    pub fn rows_within(&self, limit: usize) -> Result<(), String> {
        for name in self.values.keys() {
            let mut rest = name.as_str();
            while let Some(open) = rest.find('[') {
                let after = &rest[open + 1..];
                let Some(close) = after.find(']') else { break };
                match after[..close].parse::<usize>() {
                    Ok(index) if index < limit => {}
                    _ => return Err(name.clone()),
                }
                rest = &after[close + 1..];
            }
        }
        Ok(())
    }

    /// The value of the input `name`, if the form had one.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Whether every input whose name starts with `prefix` was left empty
    /// (a blank row offered for a new one).
    fn blank(&self, prefix: &str) -> bool {
        self.values
            .range(prefix.to_string()..)
            .take_while(|(name, _)| name.starts_with(prefix))
            .all(|(_, value)| value.trim().is_empty())
    }

    fn checked(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The rows the form has under `path` (`path[0]`, `path[1]`, ...).
    fn rows(&self, path: &str) -> usize {
        let prefix = format!("{path}[");
        self.values
            .range(prefix.clone()..)
            .take_while(|(name, _)| name.starts_with(&prefix))
            .filter_map(|(name, _)| name[prefix.len()..].split(']').next()?.parse::<usize>().ok())
            .map(|i| i.saturating_add(1))
            .max()
            .unwrap_or(0)
    }
}

/// The value the form gives field `field` at `path`: `None` when the form
/// has no input for it (left as it was), `Some(Null)` when it is emptied.
pub(crate) fn read(field: &Field, path: &str, form: &Submitted) -> Option<Value> {
    if form.checked(&format!("{path}~null")) {
        return Some(Value::Null);
    }
    read_input(&field.input, field.nullable, path, form)
}

fn read_input(input: &Input, nullable: bool, path: &str, form: &Submitted) -> Option<Value> {
    match input {
        Input::Object(fields) => {
            let mut object = Map::new();
            let mut seen = false;
            for field in fields {
                if let Some(value) = read(field, &format!("{path}.{}", field.name), form) {
                    seen = true;
                    if !value.is_null() {
                        object.insert(field.name.clone(), value);
                    }
                }
            }
            seen.then_some(if object.is_empty() && nullable { Value::Null } else { Value::Object(object) })
        }
        Input::Sourced(value) => {
            let given = read_input(value, true, path, form);
            let quote = form.get(&format!("{path}.quote"));
            if given.is_none() && quote.is_none() {
                return None;
            }
            let given = given.unwrap_or(Value::Null);
            let quote = quote.unwrap_or_default();
            if given.is_null() && quote.trim().is_empty() {
                return Some(Value::Null);
            }
            Some(serde_json::json!({"value": given, "quote": quote}))
        }
        Input::Rows(columns) => {
            let rows = (0..form.rows(path))
                .filter(|i| !form.checked(&format!("{path}[{i}]~remove")))
                // A blank row (one offered for a new row, left empty) is no row.
                .filter(|i| !form.blank(&format!("{path}[{i}].")))
                .filter_map(|i| {
                    let mut row = Map::new();
                    for column in columns {
                        if let Some(value) = read(column, &format!("{path}[{i}].{}", column.name), form)
                            && !value.is_null()
                        {
                            row.insert(column.name.clone(), value);
                        }
                    }
                    (!row.is_empty()).then_some(Value::Object(row))
                })
                .collect();
            form.get(&format!("{path}~rows")).map(|_| Value::Array(rows))
        }
        Input::List(item) => {
            let items = (0..form.rows(path))
                .filter(|i| !form.checked(&format!("{path}[{i}]~remove")))
                .filter_map(|i| read_input(item, true, &format!("{path}[{i}]"), form))
                .filter(|v| !v.is_null())
                .collect();
            form.get(&format!("{path}~rows")).map(|_| Value::Array(items))
        }
        scalar => {
            let text = form.get(path)?;
            Some(read_scalar(scalar, nullable, text))
        }
    }
}

/// One input's text as the value its schema asks for; what does not read
/// as that stays text, for the structure layer to name.
fn read_scalar(input: &Input, nullable: bool, text: &str) -> Value {
    let trimmed = text.trim();
    match input {
        Input::Text if text.is_empty() && nullable => Value::Null,
        Input::Text => Value::String(text.to_string()),
        _ if trimmed.is_empty() => Value::Null,
        Input::Number { integer: true } => trimmed
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| trimmed.parse::<u64>().map(Value::from))
            .unwrap_or_else(|_| number_or_text(trimmed)),
        Input::Number { integer: false } => number_or_text(trimmed),
        Input::Boolean => match trimmed {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            other => Value::String(other.to_string()),
        },
        Input::Choice(_) | Input::Json => {
            serde_json::from_str(trimmed).unwrap_or_else(|_| Value::String(text.to_string()))
        }
        _ => Value::String(trimmed.to_string()),
    }
}

fn number_or_text(text: &str) -> Value {
    text.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or_else(|| Value::String(text.to_string()), Value::Number)
}

/// The merge patch (RFC 7396) that turns `old` into `new`, or `None` when
/// they are the same; numbers that are equal (`140` and `140.0`) are the same.
pub(crate) fn merge_diff(old: Option<&Value>, new: &Value) -> Option<Value> {
    match (old, new) {
        (Some(Value::Object(old)), Value::Object(new)) => {
            let mut patch = Map::new();
            for (key, value) in new {
                if let Some(changed) = merge_diff(old.get(key), value) {
                    patch.insert(key.clone(), changed);
                }
            }
            for key in old.keys().filter(|k| !new.contains_key(*k)) {
                patch.insert(key.clone(), Value::Null);
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        (None | Some(Value::Null), Value::Null) => None,
        (Some(old), new) if same(old, new) => None,
        (_, new) => Some(new.clone()),
    }
}

/// Equal JSON, with numbers compared by value.
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// The merge patch a submitted form makes over `last` (the last output, an
/// object): for each field of the form, its new value against its old one;
/// fields the form has no input for are left as they were. `None`: nothing changed.
pub(crate) fn patch_of(fields: &[Field], last: &Map<String, Value>, form: &Submitted) -> Option<Value> {
    let mut patch = Map::new();
    for field in fields {
        let Some(new) = read(field, &field.name, form) else { continue };
        if let Some(changed) = merge_diff(last.get(&field.name), &new) {
            patch.insert(field.name.clone(), changed);
        }
    }
    (!patch.is_empty()).then_some(Value::Object(patch))
}

/// The fields of `fields` followed by every key of `last` the schema does
/// not know (a model's invention), each edited as JSON so a reviewer can
/// empty it.
pub(crate) fn with_extra_keys(fields: &[Field], last: &Map<String, Value>) -> Vec<Field> {
    let mut all = fields.to_vec();
    for key in last.keys() {
        if !fields.iter().any(|f| &f.name == key) {
            all.push(Field { name: key.clone(), input: Input::Json, nullable: true });
        }
    }
    all
}

/// The most rows any array of `output` has (nested ones included): with
/// [`BLANK_ROWS`] and [`EXTRA_ROWS`], the bound of a submitted row index.
pub(crate) fn most_rows(output: &Value) -> usize {
    match output {
        Value::Array(items) => items.iter().map(most_rows).max().unwrap_or(0).max(items.len()),
        Value::Object(object) => object.values().map(most_rows).max().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "required": ["number", "issued", "items", "total", "currency"],
            "properties": {
                "number": {"type": "string"},
                "order": {"type": ["string", "null"]},
                "issued": {"type": "string", "format": "date"},
                "currency": {"$ref": "#/$defs/Currency"},
                "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                "total": {"type": "number"},
                "seller": {"anyOf": [{"$ref": "#/$defs/Quoted"}, {"type": "null"}]},
            },
            "$defs": {
                "Currency": {"type": "string", "enum": ["EUR", "USD"]},
                "Item": {"type": "object", "required": ["amount"],
                         "properties": {"amount": {"type": "number"}, "count": {"type": "integer"}}},
                "Quoted": {"type": "object", "required": ["value", "quote"],
                           "properties": {"value": {"type": "string"}, "quote": {"type": "string"}}},
            }
        })
    }

    #[test]
    fn the_schema_decides_each_input() {
        let fields = fields_of(&schema());
        let kinds: Vec<(String, String, bool)> =
            fields.iter().map(|f| (f.name.clone(), format!("{:?}", f.input), f.nullable)).collect();
        let find = |name: &str| kinds.iter().find(|k| k.0 == name).unwrap().clone();
        assert_eq!(find("number").1, "Text");
        assert!(!find("number").2);
        assert!(find("order").2, "an Option may be null");
        assert_eq!(find("issued").1, "Date");
        assert_eq!(find("currency").1, "Choice([String(\"EUR\"), String(\"USD\")])");
        assert!(find("items").1.starts_with("Rows("), "{:?}", find("items"));
        assert_eq!(find("total").1, "Number { integer: false }");
        assert_eq!(find("seller").1, "Sourced(Text)");
        assert!(find("seller").2);
    }

    #[test]
    fn a_form_becomes_the_merge_patch_of_what_changed_only() {
        let fields = fields_of(&schema());
        let last = json!({"number": "A-1", "order": "PO 7", "issued": "2026-03-01", "currency": "EUR",
                          "items": [{"amount": 1.0}, {"amount": 2.0, "count": 1}], "total": 3,
                          "seller": {"value": "ACME", "quote": "ACME GmbH"}});
        let last = last.as_object().unwrap();
        let form = |pairs: &[(&str, &str)]| {
            Submitted::new(pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect())
        };
        let unchanged = [
            ("number", "A-1"),
            ("order", "PO 7"),
            ("issued", "2026-03-01"),
            ("currency", "\"EUR\""),
            ("items~rows", ""),
            ("items[0].amount", "1.0"),
            ("items[0].count", ""),
            ("items[1].amount", "2"),
            ("items[1].count", "1"),
            ("items[2].amount", ""),
            ("items[2].count", ""),
            ("items[3].amount", " "),
            ("items[3].description", ""),
            ("total", "3.0"),
            ("seller", "ACME"),
            ("seller.quote", "ACME GmbH"),
        ];
        assert_eq!(patch_of(&fields, last, &form(&unchanged)), None, "the same values, as inputs show them");
        let mut changed = unchanged.to_vec();
        changed.retain(|(k, _)| !["total", "order", "currency"].contains(k));
        changed.extend([
            ("total", "twelve"),
            ("order~null", "on"),
            ("currency", "\"USD\""),
            ("items[0]~remove", "on"),
            ("items[2].amount", "5"),
        ]);
        assert_eq!(
            patch_of(&fields, last, &form(&changed)),
            Some(json!({"total": "twelve", "order": null, "currency": "USD",
                        "items": [{"amount": 2.0, "count": 1}, {"amount": 5.0}]})),
        );
    }
}
