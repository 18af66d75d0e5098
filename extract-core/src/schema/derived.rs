//! The tool of a derived type: its schema admits `null` for data tagged
//! `recoverable = false`, states a check that bounds one number as the
//! number's keyword (`amount >= 0` as `"minimum": 0`), and is trimmed of what
//! the model does not read ([`super::lean`]); its description lists the other
//! checks (nested types' included, in JSON names).

use extract_contract::Piece;
use serde_json::{Number, Value};

use super::lean::{inline_single_use_definitions, trim_for_model};
use crate::Tool;
use crate::schema::{CheckMeta, FieldInfo, Shape, Tagging, TypeInfo, VariantContent};

/// The tool a model fills in for the type `info` describes, from the type's
/// schemars schema (the validator keeps its own, untouched copy).
pub fn tool_of(info: &'static TypeInfo, schema: Value) -> Tool {
    let mut schema = schema;
    let stated = fit_to_type(&mut schema, info);
    // An internally or adjacently tagged enum is a union of objects: say
    // the root is an object, as a tool's input schema must.
    if let Some(root) = schema.as_object_mut()
        && !root.contains_key("type")
        && (root.contains_key("oneOf") || root.contains_key("anyOf"))
    {
        root.insert("type".into(), Value::from("object"));
    }
    let mut description = info.description.trim().to_string();
    // The description opens with the doc comment, so the schema need not repeat it.
    trim_for_model(&mut schema, &description);
    inline_single_use_definitions(&mut schema);
    let mut checks = Vec::new();
    list_checks(
        info,
        &Place::default(),
        &mut Listing { lines: &mut checks, seen: Vec::new(), stated: &stated },
    );
    if !checks.is_empty() {
        if !description.is_empty() {
            description.push_str("\n\n");
        }
        description.push_str("Checks:");
        for check in checks {
            description.push_str("\n- ");
            description.push_str(&check);
        }
    }
    Tool { name: info.tool_name.to_string(), description, input_schema: schema, strict: false }
}

/// Where a nested type's checks apply, as the tool's description says it:
/// the JSON path of its value, whether that passes through a collection,
/// and, inside an enum, which variant the checks belong to.
#[derive(Clone, Default)]
struct Place {
    path: String,
    many: bool,
    when: Option<String>,
}

impl Place {
    /// One key deeper (a field, an externally tagged variant, a content key).
    fn key(&self, key: &str) -> Place {
        let path = if self.path.is_empty() { key.to_string() } else { format!("{}.{key}", self.path) };
        Place { path, ..self.clone() }
    }

    /// The line for a rule that applies here.
    fn line(&self, rule: String) -> String {
        let when = self.when.as_ref().map(|w| format!(" {w}")).unwrap_or_default();
        match (self.path.is_empty(), &self.when) {
            (true, None) => rule,
            (true, Some(when)) => format!("{when}: {rule}"),
            (false, _) => format!("in {}`{}`{when}: {rule}", if self.many { "each " } else { "" }, self.path),
        }
    }
}

/// The checks of `info` and of every type nested in it, each in the JSON
/// names the model sees. A nested type's checks say where they apply:
/// "in `vendor`: ...", "in each `line_items`: ...", and a variant's
/// `in `payment.card`: ...` (externally tagged) or "in `payment` when
/// `kind` is "card": ..." (internally tagged).
fn list_checks(info: &'static TypeInfo, at: &Place, listing: &mut Listing<'_>) {
    // By identity, not name: two types may share a name in different modules.
    if listing.seen.iter().any(|s| std::ptr::eq(*s, info)) {
        return;
    }
    listing.seen.push(info);
    for (index, check) in info.checks().iter().enumerate() {
        if listing.stated.iter().any(|(ty, i)| std::ptr::eq(*ty, info) && *i == index) {
            continue;
        }
        let mut line = match check.with {
            Some(function) => format!("passes `{function}`"),
            None => info.render(check.rule),
        };
        if let Some(tolerance) = check.tolerance {
            line.push_str(&format!(" (tolerance {tolerance})"));
        }
        listing.lines.push(at.line(line));
    }
    for field in info.fields() {
        list_nested(field.shape, &at.key(field.json_name), listing);
    }
    if let Some(elements) = info.elements() {
        list_elements(elements, at, listing);
    }
    if let Some((tagging, variants)) = info.variants() {
        for variant in variants {
            let (place, when) = match tagging {
                Tagging::External => (at.key(variant.json_name), None),
                Tagging::Internal { tag } => (at.clone(), Some(tag)),
                Tagging::Adjacent { tag, content } => (at.key(content), Some(tag)),
            };
            let when = when.map(|tag| format!("when `{tag}` is {:?}", variant.json_name));
            let place = Place { when: when.or(place.when.clone()), ..place };
            match variant.content {
                VariantContent::Unit => {}
                VariantContent::Fields(fields) => list_checks(fields, &place, listing),
                VariantContent::Tuple(elements) => list_elements(elements, &place, listing),
            }
        }
    }
    listing.seen.pop();
}

/// The checks of the derived types inside a value of `shape` at `at`.
fn list_nested(shape: &'static Shape, at: &Place, listing: &mut Listing<'_>) {
    let mut nested = Vec::new();
    shape.nested(&mut |info, many| nested.push((info, many)));
    for (nested, through_collection) in nested {
        list_checks(nested, &Place { many: at.many || through_collection, ..at.clone() }, listing);
    }
}

/// The checks inside a newtype's value (at its own path) or a tuple's
/// elements (each listed at the tuple's path).
fn list_elements(elements: &'static [&'static Shape], at: &Place, listing: &mut Listing<'_>) {
    for element in elements {
        list_nested(element, at, listing);
    }
}

/// The checks a walk over the types lists, and where it has been.
struct Listing<'a> {
    lines: &'a mut Vec<String>,
    /// The types being listed, outermost first (a recursive type ends the walk).
    seen: Vec<&'static TypeInfo>,
    /// The checks the schema states, which the list leaves out.
    stated: &'a [Stated],
}

/// A check the schema states as a keyword: its type and its index there.
type Stated = (&'static TypeInfo, usize);

/// What a walk of the schema along the types carries.
struct Fitting {
    /// The schema's `$defs`, taken out while the walk edits the rest.
    defs: Value,
    /// The definitions visited (each is visited once).
    seen: Vec<String>,
    stated: Vec<Stated>,
}

/// Fits the tool's schema to what the derive knows of the types in it:
/// every field tagged `recoverable = false` (at any depth) accepts `null`,
/// and its description says what `null` means; a check that bounds one
/// number of its type by a literal becomes that number's keyword. Returns
/// the checks so stated, which the description need not list.
fn fit_to_type(schema: &mut Value, info: &'static TypeInfo) -> Vec<Stated> {
    let defs = schema.get_mut("$defs").map(Value::take).unwrap_or(Value::Null);
    let mut walk = Fitting { defs, seen: Vec::new(), stated: Vec::new() };
    admit_null_in(schema, info, &mut walk);
    if !walk.defs.is_null() {
        schema["$defs"] = walk.defs;
    }
    walk.stated
}

/// A check that bounds one number, as JSON Schema says it.
struct Bound {
    /// `minimum`, `exclusiveMinimum`, `maximum` or `exclusiveMaximum`.
    keyword: &'static str,
    /// Whether it bounds from below (a higher value is tighter).
    lower: bool,
    value: Number,
}

/// The bound `check` sets on `field` of its type: the check compares the
/// field alone with a number literal (`amount >= 0`, `rate < 1.5`), with no
/// tolerance. A check of another form stays listed, as does one tagged
/// `recoverable = false`: a value outside it goes to a person, and the
/// model should write what the document says, not be steered inside it.
fn bound_of(check: &CheckMeta, field: &FieldInfo) -> Option<Bound> {
    if check.with.is_some() || check.tolerance.is_some() || !check.recoverable {
        return None;
    }
    let pieces: Vec<Piece<'_>> = check.rule.pieces().collect();
    let [Piece::Path(path), Piece::Text(rest)] = pieces.as_slice() else { return None };
    if *path != field.rust_name {
        return None;
    }
    let (operator, literal) = rest.trim().split_once(' ')?;
    let (keyword, lower) = match operator {
        ">=" => ("minimum", true),
        ">" => ("exclusiveMinimum", true),
        "<=" => ("maximum", false),
        "<" => ("exclusiveMaximum", false),
        _ => return None,
    };
    Some(Bound { keyword, lower, value: serde_json::from_str(literal.trim()).ok()? })
}

/// States the checks of `info` that bound `field` as keywords of its
/// `property`, where the property is a number (`null` not admitted). A bound
/// the schema already holds (`minimum: 0` for a `u32`) is kept where it is
/// the tighter of the two: the value must pass both.
fn state_bounds(info: &'static TypeInfo, field: &FieldInfo, property: &mut Value, stated: &mut Vec<Stated>) {
    let Some(node) = property.as_object_mut() else { return };
    if !matches!(node.get("type").and_then(Value::as_str), Some("number" | "integer")) {
        return;
    }
    for (index, check) in info.checks().iter().enumerate() {
        let Some(bound) = bound_of(check, field) else { continue };
        let Some(value) = bound.value.as_f64() else { continue };
        let tighter = match node.get(bound.keyword).map(Value::as_f64) {
            None => true,
            Some(Some(held)) => {
                if bound.lower {
                    value > held
                } else {
                    value < held
                }
            }
            // A keyword that holds no number: leave it, and the check listed.
            Some(None) => continue,
        };
        if tighter {
            node.insert(bound.keyword.into(), Value::Number(bound.value));
        }
        stated.push((info, index));
    }
}

fn admit_null_in(object: &mut Value, info: &'static TypeInfo, walk: &mut Fitting) {
    if let Some(elements) = info.elements() {
        return admit_null_in_elements(object, elements, walk);
    }
    if let Some((tagging, variants)) = info.variants() {
        // `object` is one branch of the enum's union (`admit_null_inside`
        // visits each): the variant it describes is the one its tag names.
        let props = object.get("properties");
        let named = |key: &str| {
            let tag = props.and_then(|p| p.get(key));
            let value = tag.and_then(|t| t.get("const").or_else(|| t.get("enum").and_then(|e| e.get(0))));
            variants.iter().find(|v| value.and_then(Value::as_str) == Some(v.json_name))
        };
        let (variant, pointer) = match tagging {
            Tagging::External => {
                let only =
                    props.and_then(Value::as_object).filter(|p| p.len() == 1).and_then(|p| p.keys().next());
                let variant = only.and_then(|key| variants.iter().find(|v| v.json_name == key));
                (variant, variant.map(|v| format!("/properties/{}", escape_pointer(v.json_name))))
            }
            Tagging::Internal { tag } => (named(tag), Some(String::new())),
            Tagging::Adjacent { tag, content } => {
                (named(tag), Some(format!("/properties/{}", escape_pointer(content))))
            }
        };
        let (Some(variant), Some(pointer)) = (variant, pointer) else { return };
        let Some(content) = object.pointer_mut(&pointer) else { return };
        match variant.content {
            VariantContent::Unit => {}
            // schemars writes a struct variant's fields inline.
            VariantContent::Fields(fields) => admit_null_in(content, fields, walk),
            VariantContent::Tuple(elements) => admit_null_in_elements(content, elements, walk),
        }
        return;
    }
    let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) else { return };
    for field in info.fields() {
        let Some(property) = properties.get_mut(field.json_name) else { continue };
        admit_null_inside(property, field.shape, walk);
        state_bounds(info, field, property, &mut walk.stated);
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
fn admit_null_inside(schema: &mut Value, shape: &'static Shape, walk: &mut Fitting) {
    if matches!(shape, Shape::Leaf) {
        return;
    }
    if let Some(name) = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        // A definition is shared by every value of its type: visit it once
        // (which also ends the walk of a recursive type).
        let name = name.to_string();
        if walk.seen.contains(&name) {
            return;
        }
        let Some(mut def) = walk.defs.get_mut(&name).map(Value::take) else { return };
        walk.seen.push(name.clone());
        admit_null_inside(&mut def, shape, walk);
        walk.defs[&name] = def;
        return;
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get_mut(union) {
            branches.iter_mut().for_each(|branch| admit_null_inside(branch, shape, walk));
        }
    }
    match shape {
        Shape::Leaf => {}
        Shape::Named(info) => admit_null_in(schema, info, walk),
        Shape::Generic(info) => admit_null_in(schema, info(), walk),
        Shape::Wrap(inner) => admit_null_inside(schema, inner, walk),
        Shape::Sourced(inner) => {
            if let Some(value) = schema.pointer_mut("/properties/value") {
                admit_null_inside(value, inner, walk);
            }
        }
        Shape::Seq(inner) => {
            if let Some(items) = schema.get_mut("items") {
                admit_null_inside(items, inner, walk);
            }
        }
        Shape::Map(inner) => {
            if let Some(values) = schema.get_mut("additionalProperties") {
                admit_null_inside(values, inner, walk);
            }
        }
        Shape::Tuple(elements) => {
            if let Some(Value::Array(items)) = schema.get_mut("prefixItems") {
                for (item, element) in items.iter_mut().zip(elements.iter()) {
                    admit_null_inside(item, element, walk);
                }
            }
        }
    }
}

/// A newtype's value (its schema is the value's) or a tuple's elements
/// (under `prefixItems`).
fn admit_null_in_elements(schema: &mut Value, elements: &'static [&'static Shape], walk: &mut Fitting) {
    match elements {
        [one] => admit_null_inside(schema, one, walk),
        _ => {
            if let Some(Value::Array(items)) = schema.get_mut("prefixItems") {
                for (item, element) in items.iter_mut().zip(elements.iter()) {
                    admit_null_inside(item, element, walk);
                }
            }
        }
    }
}

/// `key` as one JSON Pointer token.
fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
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
