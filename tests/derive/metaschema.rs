//! The `input_schema` of derived types, plain and strict, is a valid JSON
//! Schema 2020-12 document: it passes the 2020-12 metaschema (the
//! `jsonschema` crate's meta validation), and compiles as a 2020-12 validator
//! (so every `pattern` is a regex that compiles). It does not declare the
//! draft in `$schema`: the tool's copy is trimmed of what the model does not
//! read, and 2020-12 is what a schema without `$schema` is read as.
#![cfg(all(feature = "chrono", feature = "decimal"))]

use std::collections::BTreeMap;

use chrono::{NaiveDate, NaiveDateTime};
use extract::{Extractable, Sourced, Tool};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Record one invoice.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
#[check(due_date >= issue_date)]
#[allow(dead_code)]
struct Invoice {
    /// Invoice number exactly as printed.
    #[extract(recoverable = false)]
    #[schemars(regex(pattern = r"^[A-Z0-9-]+$"), length(min = 1, max = 32))]
    invoice_number: String,
    issue_date: NaiveDate,
    due_date: Option<NaiveDate>,
    department: Option<String>,
    status: Status,
    line_items: Vec<LineItem>,
    #[serde(rename = "total")]
    stated_total: f64,
    #[serde(default)]
    notes: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    Paid,
    Unpaid,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[allow(dead_code)]
struct LineItem {
    description: String,
    #[schemars(range(min = 1, max = 10_000))]
    quantity: u32,
    unit_price: Option<Decimal>,
    amount: f64,
}

/// A shipment notice with every kind of field schemars has a shape for.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct Shipment {
    tracking_id: Sourced<String>,
    shipped_at: NaiveDateTime,
    weight_grams: u64,
    temperature: i8,
    #[schemars(range(min = 0.0, max = 1.0))]
    damage_ratio: f32,
    carrier: Carrier,
    parcels: Vec<Parcel>,
    /// Where it goes, when printed.
    destination: Option<Box<Address>>,
    #[schemars(length(min = 2, max = 2))]
    country_codes: Vec<String>,
    flag: char,
    dimensions: (u16, u16, u16),
    #[serde(skip)]
    internal: u32,
}

/// Who carries the shipment.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Carrier {
    /// A national postal service.
    Post,
    /// A courier, by name.
    Courier(String),
    /// Collected by the customer.
    Pickup { store: String, on: Option<NaiveDate> },
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Parcel {
    #[schemars(regex(pattern = r"^P[0-9]{4}$"))]
    label: String,
    fragile: bool,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[allow(dead_code)]
struct Address {
    street: String,
    #[schemars(email)]
    contact: Option<String>,
}

/// A type strict tool use cannot take (recursive, and a free-form map); its
/// plain schema is still valid 2020-12.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[allow(dead_code)]
struct Category {
    name: String,
    children: Vec<Category>,
    attributes: BTreeMap<String, f64>,
}

/// Enums of each representation inside a struct, and an internally tagged
/// enum as the top-level type.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[allow(dead_code)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Party {
    #[check(len(name) > 0)]
    Person {
        name: String,
    },
    Company {
        name: String,
        payment: Payment,
        route: Route,
    },
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[allow(dead_code)]
enum Payment {
    Card { last4: String },
    Transfer(String, f64),
    Cash,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[allow(dead_code)]
#[serde(tag = "t", content = "c")]
enum Route {
    Parcel(Parcel),
    Pickup,
}

fn tools() -> Vec<Tool> {
    vec![
        Party::tool(),
        Invoice::tool(),
        LineItem::tool(),
        Shipment::tool(),
        Parcel::tool(),
        Address::tool(),
        Category::tool(),
    ]
}

/// Every metaschema error of `schema`, as `location: message` lines.
fn meta_errors(schema: &Value) -> Vec<String> {
    let meta = jsonschema::draft202012::meta::validator();
    meta.iter_errors(schema).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

fn assert_valid_2020_12(name: &str, schema: &Value) {
    assert!(schema.get("$schema").is_none(), "{name}: the tool's schema is trimmed of `$schema`");
    let errors = meta_errors(schema);
    assert!(errors.is_empty(), "{name} fails the 2020-12 metaschema:\n{}", errors.join("\n"));
    // The general entry point, which reads a schema without `$schema` as
    // 2020-12, agrees; and so it does with the draft declared.
    jsonschema::meta::validate(schema).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut declared = schema.clone();
    declared["$schema"] = json!(DRAFT_2020_12);
    jsonschema::meta::validate(&declared).unwrap_or_else(|e| panic!("{name} (declared 2020-12): {e}"));
    // And it compiles as a 2020-12 validator (every regex compiles, every $ref resolves).
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap_or_else(|e| panic!("{name} does not compile: {e}"));
}

#[test]
fn every_plain_input_schema_is_valid_2020_12() {
    for tool in tools() {
        assert_valid_2020_12(&tool.name, &tool.input_schema);
        assert_eq!(tool.input_schema["type"], "object", "{}: an object schema", tool.name);
    }
}

#[test]
fn every_strict_input_schema_is_valid_2020_12() {
    let mut strict = 0;
    for tool in tools() {
        match tool.strict() {
            Ok(made) => {
                assert_valid_2020_12(&format!("{} (strict)", tool.name), &made.input_schema);
                strict += 1;
            }
            Err(error) => {
                assert_eq!(tool.name, "category", "only the recursive map cannot be strict: {error}")
            }
        }
    }
    assert_eq!(strict, 6);
}

#[test]
fn the_schemas_use_2020_12_vocabulary_not_draft_7() {
    for tool in tools() {
        let text = tool.input_schema.to_string();
        assert!(!text.contains("\"definitions\""), "{}: draft-7 `definitions` instead of `$defs`", tool.name);
        assert!(!text.contains("#/definitions/"), "{}", tool.name);
    }
    // The nested struct the tool uses once is written in place; the
    // validator's schema keeps schemars' `$defs`.
    assert!(Invoice::tool().input_schema["properties"]["line_items"]["items"]["properties"].is_object());
    assert!(Invoice::tool().input_schema.get("$defs").is_none());
}

#[test]
fn the_meta_validation_can_fail() {
    // Controls: the checks above are not vacuous.
    assert!(!meta_errors(&json!({"type": "object", "minLength": "three"})).is_empty());
    assert!(!meta_errors(&json!({"type": "object", "properties": {"a": {"type": "strnig"}}})).is_empty());
    assert!(!meta_errors(&json!({"type": "object", "required": "a"})).is_empty());
    assert!(
        jsonschema::draft202012::options().build(&json!({"type": "string", "pattern": "(unclosed"})).is_err()
    );
}

/// Every schema node in `schema` (not the values under `enum`, `const`,
/// `default`, `examples`; not the maps of `properties` and `$defs`
/// themselves), with a JSON pointer to it.
fn schema_nodes<'a>(schema: &'a Value, at: String, out: &mut Vec<(String, &'a Value)>) {
    let Some(node) = schema.as_object() else { return };
    out.push((at.clone(), schema));
    for (key, sub) in node {
        match (key.as_str(), sub) {
            ("enum" | "const" | "default" | "examples", _) => {}
            ("properties" | "$defs" | "patternProperties" | "dependentSchemas", Value::Object(map)) => {
                for (name, sub) in map {
                    schema_nodes(sub, format!("{at}/{key}/{name}"), out);
                }
            }
            (_, Value::Array(items)) => {
                for (i, sub) in items.iter().enumerate() {
                    schema_nodes(sub, format!("{at}/{key}/{i}"), out);
                }
            }
            (_, sub) => schema_nodes(sub, format!("{at}/{key}"), out),
        }
    }
}

#[test]
fn the_tools_carry_no_title_and_no_numeric_format() {
    let numeric = |f: &str| {
        matches!(f, "float" | "double" | "int" | "uint")
            || ["int", "uint"].iter().any(|p| f.strip_prefix(p).is_some_and(|b| b.parse::<u32>().is_ok()))
    };
    let mut formats = Vec::new();
    for tool in tools() {
        let mut nodes = Vec::new();
        schema_nodes(&tool.input_schema, String::new(), &mut nodes);
        for (at, node) in nodes {
            assert!(node.get("title").is_none(), "{}: title at {at:?}", tool.name);
            if let Some(format) = node.get("format").and_then(Value::as_str) {
                assert!(!numeric(format), "{}: format {format} at {at:?}", tool.name);
                formats.push(format.to_string());
            }
        }
    }
    // The formats that say how to write a value stay.
    assert!(
        formats.iter().any(|f| f == "date") && formats.iter().any(|f| f == "partial-date-time"),
        "{formats:?}"
    );
    assert!(formats.iter().any(|f| f == "email"), "{formats:?}");
    // And the bounds of `temperature: i8` too, though its `int8` went.
    let temperature = &Shipment::tool().input_schema["properties"]["temperature"];
    assert_eq!(temperature, &json!({"type": "integer", "minimum": -128, "maximum": 127}));
}
