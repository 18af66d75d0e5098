//! The schema walk behind [`Tool::strict`](crate::Tool::strict): a copy of a
//! tool's input schema fit for Claude's strict tool use (`strict: true`).
//!
//! What the Anthropic structured-outputs documentation states for strict
//! schemas, and what this module does about each point:
//!
//! - every object needs `additionalProperties: false`: added where absent or
//!   `true`; an object whose keys are free (`additionalProperties` holding a
//!   schema, a `HashMap`; or `patternProperties`) cannot be strict: an error.
//! - `required` may list a subset of the properties, so optional fields stay
//!   optional and `Option` fields stay nullable; nothing is added to `required`.
//! - unsupported keywords (`minimum`, `maximum`, `exclusiveMinimum`,
//!   `exclusiveMaximum`, `multipleOf`, `minLength`, `maxLength`, `minItems`
//!   other than 0 or 1, `maxItems`, `uniqueItems`, `minProperties`,
//!   `maxProperties`, a `format` outside [`SUPPORTED_FORMATS`], a `pattern`
//!   with backreferences, lookaround or word boundaries) are removed and
//!   restated in that schema's `description`, so the model still reads them;
//!   the structure validator is compiled from the original schema and still
//!   enforces them.
//! - `oneOf` is not in the supported subset: it becomes `anyOf` (schemars uses
//!   `oneOf` for enums whose variants are disjoint, so this accepts the same
//!   values; the validator keeps the original `oneOf`).
//! - recursive schemas, `enum` values that are objects or arrays, more than
//!   [`MAX_OPTIONAL_PROPERTIES`] optional properties or more than
//!   [`MAX_UNION_PROPERTIES`] union-typed properties (type arrays or `anyOf`)
//!   in one tool cannot be made strict: an error naming the reason and the
//!   property. Each `$defs` entry is counted once, however often it is used.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::keywords::{self, Holds, IntegerFormat};
use crate::vocabulary::text::count;

/// Optional properties (not in `required`) strict tool use allows, counted
/// over the whole tool.
pub(crate) const MAX_OPTIONAL_PROPERTIES: usize = 24;
/// Properties with a union type (a `type` array such as `["string", "null"]`,
/// or `anyOf`) strict tool use allows, counted over the whole tool.
pub(crate) const MAX_UNION_PROPERTIES: usize = 16;
/// The string formats strict tool use supports.
pub(crate) const SUPPORTED_FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"];

/// How many properties an error message names before eliding the rest.
const MAX_NAMED: usize = 8;

/// The strict copy of `schema`, or why there cannot be one. Messages name
/// the root schema by its `title` or, where it has none (a derived tool's
/// schema is trimmed of titles), by `root_name`.
pub(crate) fn strict_schema(schema: &Value, root_name: &str) -> Result<Value, String> {
    let root_name = schema.get("title").and_then(Value::as_str).unwrap_or(root_name);
    if let Some(cycle) = find_cycle(schema, root_name) {
        return Err(cycle);
    }
    let mut copy = schema.clone();
    let mut tally = Tally::default();
    transform(&mut copy, &Place::root(root_name.to_string()), &mut tally)?;
    if tally.optional.len() > MAX_OPTIONAL_PROPERTIES {
        return Err(format!(
            "it has {} optional properties (Option and #[serde(default)] fields), more than the {MAX_OPTIONAL_PROPERTIES} \
             strict tool use allows in one tool; the first one over the limit is `{}` (all: {})",
            tally.optional.len(),
            tally.optional[MAX_OPTIONAL_PROPERTIES],
            names(&tally.optional)
        ));
    }
    if tally.union.len() > MAX_UNION_PROPERTIES {
        return Err(format!(
            "it has {} properties with union types (Option fields, type arrays, anyOf/oneOf), more than the \
             {MAX_UNION_PROPERTIES} strict tool use allows in one tool; the first one over the limit is `{}` (all: {})",
            tally.union.len(),
            tally.union[MAX_UNION_PROPERTIES],
            names(&tally.union)
        ));
    }
    Ok(copy)
}

/// Properties counted against the tool-wide limits, by their place.
#[derive(Default)]
struct Tally {
    optional: Vec<String>,
    union: Vec<String>,
}

/// Where a schema sits, for messages: `Invoice.line_items[]`, `LineItem.amount`.
#[derive(Clone)]
struct Place(String);

impl Place {
    fn root(name: String) -> Place {
        Place(name)
    }
    fn property(&self, name: &str) -> Place {
        Place(format!("{}.{name}", self.0))
    }
    fn items(&self) -> Place {
        Place(format!("{}[]", self.0))
    }
}

fn names(list: &[String]) -> String {
    let mut text = list.iter().take(MAX_NAMED).map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    if list.len() > MAX_NAMED {
        let _ = write!(text, " and {} more", list.len() - MAX_NAMED);
    }
    text
}

/// Makes one schema node strict, then its subschemas.
fn transform(schema: &mut Value, place: &Place, tally: &mut Tally) -> Result<(), String> {
    let Some(node) = schema.as_object_mut() else { return Ok(()) };

    if let Some(values) = node.get("enum").and_then(Value::as_array)
        && values.iter().any(|v| v.is_object() || v.is_array())
    {
        return Err(format!(
            "`{}` has an enum with object or array values, which strict tool use does not support",
            place.0
        ));
    }
    if !node.contains_key("anyOf")
        && let Some(one_of) = node.remove("oneOf")
    {
        node.insert("anyOf".into(), one_of);
    }
    if is_object_schema(node) {
        strict_object(node, place, tally)?;
    }
    let notes = remove_unsupported(node);
    append_to_description(node, notes);

    keywords::for_each_subschema_mut(schema, |keyword, name, sub| {
        let place = match (keywords::holds(keyword), name) {
            (Some(Holds::Properties), Some(name)) => place.property(name),
            (Some(Holds::Definitions), Some(name)) => Place(name.to_string()),
            (Some(Holds::Inner | Holds::Positions), _) => place.items(),
            _ => place.clone(),
        };
        transform(sub, &place, tally)
    })
}

fn is_object_schema(node: &Map<String, Value>) -> bool {
    let typed_object = match node.get("type") {
        Some(Value::String(ty)) => ty == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => false,
    };
    typed_object || node.contains_key("properties")
}

/// `additionalProperties: false`, and the tally of optional and union properties.
fn strict_object(node: &mut Map<String, Value>, place: &Place, tally: &mut Tally) -> Result<(), String> {
    if node.contains_key("patternProperties") {
        return Err(format!(
            "`{}` is a map whose keys follow a pattern (patternProperties); strict tool use needs every key listed",
            place.0
        ));
    }
    match node.get("additionalProperties") {
        None | Some(Value::Bool(_)) => {}
        Some(_) => {
            return Err(format!(
                "`{}` is a map with free-form keys (additionalProperties holds a schema); strict tool use needs \
                 every key listed",
                place.0
            ));
        }
    }
    node.insert("additionalProperties".into(), Value::Bool(false));

    let required: Vec<&str> = node
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if let Some(properties) = node.get("properties").and_then(Value::as_object) {
        for (name, sub) in properties {
            let here = place.property(name).0;
            if !required.contains(&name.as_str()) {
                tally.optional.push(here.clone());
            }
            if is_union(sub) {
                tally.union.push(here);
            }
        }
    }
    Ok(())
}

/// A `type` array of more than one type, or `anyOf`/`oneOf`.
fn is_union(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_array).is_some_and(|types| types.len() > 1)
        || schema.get("anyOf").is_some()
        || schema.get("oneOf").is_some()
}

/// Restates every numeric bound in `schema` (`minimum`, `maximum` and their
/// exclusive forms, at any depth) in words, in the description of the
/// schema that held it, as the strict copy does.
///
/// For a server that may decode under the schema's grammar (llama.cpp,
/// vLLM): there a bound a check stated (in `derived.rs`) would be
/// enforced while the model writes, so a value of the document outside it
/// could not be written at all and an in-range one would be invented in its
/// place, where the check exists to catch it. In words, the model still
/// reads the bound, and the validator enforces it.
pub fn bounds_in_words(schema: &mut Value) {
    if let Some(node) = schema.as_object_mut() {
        let notes = take_bounds(node);
        append_to_description(node, notes);
    }
    let _ = keywords::for_each_subschema_mut(schema, |_, _, sub| {
        bounds_in_words(sub);
        Ok::<(), std::convert::Infallible>(())
    });
}

/// Appends `notes` to the node's description (made if absent).
fn append_to_description(node: &mut Map<String, Value>, notes: Vec<String>) {
    if notes.is_empty() {
        return;
    }
    let mut description =
        node.get("description").and_then(Value::as_str).unwrap_or_default().trim_end().to_string();
    for note in notes {
        if !description.is_empty() {
            description.push(' ');
        }
        description.push_str(&note);
    }
    node.insert("description".into(), Value::String(description));
}

/// Removes the numeric bounds of one schema node; returns them as sentences.
fn take_bounds(node: &mut Map<String, Value>) -> Vec<String> {
    [
        ("minimum", "Must be at least"),
        ("exclusiveMinimum", "Must be greater than"),
        ("maximum", "Must be at most"),
        ("exclusiveMaximum", "Must be less than"),
    ]
    .into_iter()
    .filter_map(|(key, say)| node.remove(key).map(|value| format!("{say} {value}.")))
    .collect()
}

/// Removes the keywords strict tool use rejects; returns them restated as sentences.
fn remove_unsupported(node: &mut Map<String, Value>) -> Vec<String> {
    let has_bounds = node.contains_key("minimum") || node.contains_key("maximum");
    let mut notes = take_bounds(node);
    let mut take = |key: &str, say: &dyn Fn(&Value) -> Option<String>| {
        if let Some(value) = node.get(key) {
            let note = say(value);
            node.remove(key);
            notes.extend(note);
        }
    };
    take("multipleOf", &|v| Some(format!("Must be a multiple of {v}.")));
    take("minLength", &|v| Some(format!("Must be at least {} long.", count(v, "character"))));
    take("maxLength", &|v| Some(format!("Must be at most {} long.", count(v, "character"))));
    if let Some(min_items) = node.get("minItems")
        && !(min_items == 0 || min_items == 1)
    {
        let note = format!("Must have at least {}.", count(min_items, "item"));
        node.remove("minItems");
        notes.push(note);
    }
    let mut take = |key: &str, say: &dyn Fn(&Value) -> Option<String>| {
        if let Some(value) = node.get(key) {
            let note = say(value);
            node.remove(key);
            notes.extend(note);
        }
    };
    take("maxItems", &|v| Some(format!("Must have at most {}.", count(v, "item"))));
    take("uniqueItems", &|v| (v == &Value::Bool(true)).then(|| "Items must be unique.".to_string()));
    take("minProperties", &|v| Some(format!("Must have at least {}.", count(v, "field"))));
    take("maxProperties", &|v| Some(format!("Must have at most {}.", count(v, "field"))));

    if let Some(format) = node.get("format").and_then(Value::as_str).map(str::to_string)
        && !SUPPORTED_FORMATS.contains(&format.as_str())
    {
        node.remove("format");
        if let Some(note) = restate_format(&format, has_bounds) {
            notes.push(note);
        }
    }
    if let Some(pattern) = node.get("pattern").and_then(Value::as_str).map(str::to_string)
        && !pattern_is_supported(&pattern)
    {
        node.remove("pattern");
        notes.push(format!("Must match the regular expression {pattern}."));
    }
    notes
}

/// The sentence that restates a removed `format`. The numeric formats
/// schemars emits (`uint8`, `double`) say nothing the bounds and the type do
/// not already say, so they are restated only where no bound stands in.
fn restate_format(format: &str, has_bounds: bool) -> Option<String> {
    let integer = IntegerFormat::parse(format).map(|int| {
        format!("a{} {}-bit integer", if int.signed { " signed" } else { "n unsigned" }, int.bits)
    });
    if keywords::is_float_format(format) {
        return None;
    }
    match integer {
        Some(_) if has_bounds => None,
        Some(kind) => Some(format!("Must fit in {kind}.")),
        None => Some(format!("Must be in the {format:?} format.")),
    }
}

/// Whether strict tool use accepts a `pattern`: no backreferences (`\1`,
/// `\k<name>`), no lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`), no word
/// boundaries (`\b`, `\B`) outside a character class.
pub(crate) fn pattern_is_supported(pattern: &str) -> bool {
    let chars: Vec<char> = pattern.chars().collect();
    let mut in_class = false;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                match chars.get(i + 1) {
                    Some('1'..='9') | Some('k') => return false,
                    Some('b') | Some('B') if !in_class => return false,
                    _ => {}
                }
                i += 2;
                continue;
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class => {
                let rest: String = chars[i + 1..].iter().take(3).collect();
                if rest.starts_with("?=")
                    || rest.starts_with("?!")
                    || rest.starts_with("?<=")
                    || rest.starts_with("?<!")
                {
                    return false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    true
}

/// A `$ref` cycle, described: the property where it closes and the chain.
fn find_cycle(schema: &Value, root_name: &str) -> Option<String> {
    let mut path: Vec<(String, String)> = Vec::new(); // (node pointer, property that leads on)
    let mut done: Vec<String> = Vec::new();
    visit("#".to_string(), schema, &Root { schema, name: root_name }, &mut path, &mut done)
}

/// The root schema, and the name messages give it.
struct Root<'a> {
    schema: &'a Value,
    name: &'a str,
}

fn visit(
    pointer: String,
    node: &Value,
    root: &Root<'_>,
    path: &mut Vec<(String, String)>,
    done: &mut Vec<String>,
) -> Option<String> {
    let mut refs = Vec::new();
    collect_refs(node, "", &mut refs, 0);
    for (reference, property) in refs {
        if let Some(start) =
            path.iter().position(|(p, _)| *p == reference).or((reference == pointer).then_some(path.len()))
        {
            let mut chain: Vec<String> = path[start..].iter().map(|(p, _)| type_name(root, p)).collect();
            chain.push(type_name(root, &pointer));
            chain.push(type_name(root, &reference));
            let owner = type_name(root, &pointer);
            return Some(format!(
                "it is recursive: property `{owner}.{property}` refers back to `{}` ({}); strict tool use does not \
                 support recursive schemas",
                type_name(root, &reference),
                chain.join(" -> ")
            ));
        }
        if done.contains(&reference) {
            continue;
        }
        let Some(target) = reference.strip_prefix('#').and_then(|p| root.schema.pointer(p)) else { continue };
        path.push((pointer.clone(), property));
        let found = visit(reference.clone(), target, root, path, done);
        path.pop();
        if found.is_some() {
            return found;
        }
        done.push(reference);
    }
    None
}

/// The type name a schema pointer stands for: its `$defs` key, or the root's name.
fn type_name(root: &Root<'_>, pointer: &str) -> String {
    match pointer.rsplit_once('/') {
        Some((_, name)) if pointer != "#" => name.to_string(),
        _ => root.name.to_string(),
    }
}

/// Every `$ref` inside one schema (not inside its `$defs`), with the property it sits under.
fn collect_refs(node: &Value, property: &str, out: &mut Vec<(String, String)>, depth: usize) {
    let Some(map) = node.as_object() else { return };
    if depth > 128 {
        return;
    }
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        out.push((reference.to_string(), property.to_string()));
    }
    for (keyword, name, sub) in keywords::subschemas_named(node) {
        match (keywords::holds(keyword), name) {
            // A definition is walked where it is referred to, not where it stands.
            (Some(Holds::Definitions), _) => {}
            (Some(Holds::Properties), Some(name)) => {
                let label = if property.is_empty() { name.to_string() } else { format!("{property}.{name}") };
                collect_refs(sub, &label, out, depth + 1);
            }
            _ => collect_refs(sub, property, out, depth + 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patterns_with_backreferences_lookaround_or_word_boundaries_are_unsupported() {
        for ok in [r"^INV-[0-9]+$", r"^[a-z]{2,3}\d+$", r"[\b]", r"\(?=x", r"(?:a|b)+", r"\\1"] {
            assert!(pattern_is_supported(ok), "{ok}");
        }
        for bad in
            [r"(a)\1", r"(?<x>a)\k<x>", r"^(?=.*\d)", r"a(?!b)", r"(?<=a)b", r"(?<!a)b", r"\bword\b", r"\B"]
        {
            assert!(!pattern_is_supported(bad), "{bad}");
        }
    }

    #[test]
    fn numeric_formats_are_restated_only_without_bounds() {
        assert_eq!(restate_format("uint8", true), None);
        assert_eq!(restate_format("int64", false).as_deref(), Some("Must fit in a signed 64-bit integer."));
        assert_eq!(restate_format("uint", false).as_deref(), Some("Must fit in an unsigned 64-bit integer."));
        assert_eq!(restate_format("double", false), None);
        assert_eq!(restate_format("iban", false).as_deref(), Some(r#"Must be in the "iban" format."#));
    }

    #[test]
    fn a_self_reference_through_the_root_is_a_cycle() {
        let schema = json!({
            "title": "Node",
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}
        });
        let error = strict_schema(&schema, "the input").unwrap_err();
        assert!(error.contains("property `Node.children` refers back to `Node`"), "{error}");
    }

    #[test]
    fn a_root_without_a_title_is_named_by_the_caller() {
        // A derived tool's schema is trimmed of titles: the tool's name stands in.
        let schema = json!({
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#"}}, "n": {"type": "object", "additionalProperties": {"type": "number"}}}
        });
        let error = strict_schema(&schema, "record_node").unwrap_err();
        assert!(error.contains("property `record_node.children` refers back to `record_node`"), "{error}");
        let mut flat = schema;
        flat["properties"]["children"] = json!({"type": "string"});
        let error = strict_schema(&flat, "record_node").unwrap_err();
        assert!(error.contains("`record_node.n` is a map with free-form keys"), "{error}");
    }

    #[test]
    fn a_shared_definition_is_not_a_cycle() {
        let schema = json!({
            "title": "Pair",
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/Leaf"}, "b": {"$ref": "#/$defs/Leaf"}},
            "required": ["a", "b"],
            "$defs": {"Leaf": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}
        });
        let strict = strict_schema(&schema, "the input").unwrap();
        assert_eq!(strict["$defs"]["Leaf"]["additionalProperties"], json!(false));
    }

    #[test]
    fn maps_cannot_be_strict() {
        let schema = json!({
            "title": "Scores",
            "type": "object",
            "properties": {"by_name": {"type": "object", "additionalProperties": {"type": "number"}}},
            "required": ["by_name"]
        });
        let error = strict_schema(&schema, "the input").unwrap_err();
        assert!(error.contains("`Scores.by_name` is a map with free-form keys"), "{error}");
    }

    #[test]
    fn one_of_becomes_any_of_and_min_items_one_stays() {
        let schema = json!({
            "type": "object",
            "properties": {
                "kind": {"oneOf": [{"const": "A"}, {"const": "B"}]},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1}
            },
            "required": ["kind", "tags"]
        });
        let strict = strict_schema(&schema, "the input").unwrap();
        assert!(strict["properties"]["kind"].get("oneOf").is_none());
        assert_eq!(strict["properties"]["kind"]["anyOf"].as_array().unwrap().len(), 2);
        assert_eq!(strict["properties"]["tags"]["minItems"], json!(1));
        assert!(strict["properties"]["tags"].get("description").is_none());
    }
}
