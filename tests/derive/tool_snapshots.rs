//! The exact tool JSON of a realistic invoice, plain and strict: snapshots
//! (under `tests/derive/snapshots/`, reviewed by hand) plus separate assertions of
//! the facts that matter, so a reviewed snapshot cannot hide a regression.
#![cfg(all(feature = "chrono", feature = "decimal"))]

use chrono::NaiveDate;
use extract::Extractable;
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Record one invoice.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
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
    /// Free-text remarks printed on the invoice.
    #[serde(default)]
    notes: Vec<String>,
}

/// Whether the invoice has been paid.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    Paid,
    Unpaid,
    PartiallyPaid,
}

/// One line of an invoice.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[allow(dead_code)]
struct LineItem {
    description: String,
    #[schemars(range(min = 1))]
    quantity: u32,
    unit_price: Option<Decimal>,
    amount: f64,
}

fn pretty(value: &impl Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap()
}

#[test]
fn plain_tool_snapshot() {
    insta::assert_snapshot!("invoice_tool_plain", pretty(&Invoice::tool()));
}

#[test]
fn strict_tool_snapshot() {
    insta::assert_snapshot!("invoice_tool_strict", pretty(&Invoice::tool().strict().unwrap()));
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().unwrap().keys().map(String::as_str).collect()
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect()
}

/// The schema an `items`/`$ref` points at, resolved against the root's `$defs`.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => root.pointer(reference.strip_prefix('#').unwrap()).unwrap(),
        None => schema,
    }
}

#[test]
fn name_and_description_carry_the_doc_comment_and_the_checks_in_json_names() {
    let tool = Invoice::tool();
    assert_eq!(tool.name, "record_invoice");
    assert_eq!(
        tool.description,
        "Record one invoice.\n\nChecks:\n\
         - sum(line_items.amount) == total (tolerance 0.01)\n\
         - due_date >= issue_date"
    );
    // The Rust name of the renamed field never reaches the model.
    assert!(!tool.description.contains("stated_total"));
    assert!(!tool.input_schema.to_string().contains("stated_total"));
}

#[test]
fn required_lists_exactly_the_required_fields_in_json_names() {
    let schema = Invoice::tool().input_schema;
    assert_eq!(
        strings(&schema["required"]),
        ["invoice_number", "issue_date", "status", "line_items", "total"],
        "Option and #[serde(default)] fields are optional; the renamed field is required by its JSON name"
    );
    let item = resolve(&schema, &schema["properties"]["line_items"]["items"]);
    assert_eq!(strings(&item["required"]), ["description", "quantity", "amount"]);
}

#[test]
fn properties_keep_declaration_order() {
    let schema = Invoice::tool().input_schema;
    assert_eq!(
        keys(&schema["properties"]),
        ["invoice_number", "issue_date", "due_date", "department", "status", "line_items", "total", "notes"]
    );
    let item = resolve(&schema, &schema["properties"]["line_items"]["items"]);
    assert_eq!(keys(&item["properties"]), ["description", "quantity", "unit_price", "amount"]);
}

#[test]
fn the_input_schema_is_a_2020_12_object_schema_with_the_fields_shapes() {
    let schema = Invoice::tool().input_schema;
    // Trimmed of what the model does not read: the draft (2020-12 all the
    // same), the root's title (the Rust type's name) and the doc comment the
    // tool's description already opens with.
    for key in ["$schema", "title", "description"] {
        assert!(schema.get(key).is_none(), "{key} in {schema}");
    }
    assert_eq!(schema["type"], "object");
    let props = &schema["properties"];
    // Tagged `recoverable = false`: the schema lets the model say "absent" with
    // null (the validator still escalates a null), instead of inventing a value.
    assert_eq!(
        props["invoice_number"]["description"],
        "Invoice number exactly as printed. Null if not stated."
    );
    assert_eq!(props["invoice_number"]["type"], json!(["string", "null"]));
    assert_eq!(props["invoice_number"]["pattern"], "^[A-Z0-9-]+$");
    assert_eq!(props["invoice_number"]["minLength"], 1);
    assert_eq!(props["invoice_number"]["maxLength"], 32);
    assert_eq!(props["issue_date"]["format"], "date");
    // An optional date accepts null as well as a date.
    assert_eq!(props["due_date"]["type"], json!(["string", "null"]));
    assert_eq!(props["due_date"]["format"], "date");
    assert_eq!(props["department"]["type"], json!(["string", "null"]));
    let status = resolve(&schema, &props["status"]);
    assert_eq!(status["enum"], json!(["paid", "unpaid", "partially_paid"]));
    assert_eq!(props["line_items"]["type"], "array");
    assert_eq!(props["total"]["type"], "number");
    assert_eq!(props["notes"]["type"], "array");
    let item = resolve(&schema, &props["line_items"]["items"]);
    assert_eq!(item["properties"]["quantity"]["minimum"], 1);
    // Numeric formats (`double`, `uint32`) tell a model nothing: gone, while
    // the bounds stay; a nested type's doc comment is said nowhere else: kept.
    assert!(props["total"].get("format").is_none(), "{}", props["total"]);
    assert!(item["properties"]["quantity"].get("format").is_none(), "{item}");
    assert_eq!(item["description"], "One line of an invoice.");
    assert_eq!(status["description"], "Whether the invoice has been paid.");
}

#[test]
fn the_validator_keeps_what_the_tool_trimmed() {
    // `quantity: u32` lost its `uint32` format in the tool; the validator,
    // compiled from the full schema, still rejects what does not fit.
    let output = json!({
        "invoice_number": "INV-1",
        "issue_date": "2024-01-01",
        "status": "paid",
        "line_items": [{"description": "a", "quantity": 5_000_000_000u64, "amount": 1.0}],
        "total": 1.0
    });
    let violations = extract::validate::<Invoice>(&output, "").unwrap_err();
    assert_eq!(violations.len(), 1, "{violations}");
    assert_eq!(violations[0].path, "line_items[0].quantity");
}

#[test]
fn the_tool_serializes_to_exactly_the_anthropic_keys() {
    let plain = serde_json::to_value(Invoice::tool()).unwrap();
    assert_eq!(keys(&plain), ["name", "description", "input_schema"]);
    let strict = serde_json::to_value(Invoice::tool().strict().unwrap()).unwrap();
    let mut strict_keys = keys(&strict);
    strict_keys.sort_unstable();
    assert_eq!(strict_keys, ["description", "input_schema", "name", "strict"]);
    assert_eq!(strict["strict"], json!(true));
    assert_eq!(strict["name"], plain["name"]);
    assert_eq!(strict["description"], plain["description"]);
}

/// Every object schema in `schema`, with a JSON pointer to it.
fn object_schemas<'a>(schema: &'a Value, at: String, out: &mut Vec<(String, &'a Value)>) {
    match schema {
        Value::Object(node) => {
            let typed_object = match node.get("type") {
                Some(Value::String(t)) => t == "object",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
                _ => false,
            };
            if typed_object || node.contains_key("properties") {
                out.push((at.clone(), schema));
            }
            for (key, sub) in node {
                // `enum`, `const`, `default` and `examples` hold values, not schemas.
                if !matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                    object_schemas(sub, format!("{at}/{key}"), out);
                }
            }
        }
        Value::Array(items) => {
            for (i, sub) in items.iter().enumerate() {
                object_schemas(sub, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_object_in_the_strict_schema_denies_additional_properties() {
    let strict = Invoice::tool().strict().unwrap();
    let mut objects = Vec::new();
    object_schemas(&strict.input_schema, String::new(), &mut objects);
    let places: Vec<&str> = objects.iter().map(|(at, _)| at.as_str()).collect();
    assert!(places.contains(&""), "{places:?}");
    assert!(places.contains(&"/properties/line_items/items"), "{places:?}");
    for (at, object) in objects {
        assert_eq!(object["additionalProperties"], json!(false), "object at {at:?}");
    }
    // The plain schema is left as schemars made it.
    assert!(Invoice::tool().input_schema.get("additionalProperties").is_none());
}

#[test]
fn strict_removes_unsupported_keywords_and_restates_them_in_the_description() {
    let plain = Invoice::tool().input_schema;
    let strict = Invoice::tool().strict().unwrap().input_schema;
    let number = &strict["properties"]["invoice_number"];
    assert!(number.get("minLength").is_none() && number.get("maxLength").is_none(), "{number}");
    // A plain regex is supported by strict tool use: it stays.
    assert_eq!(number["pattern"], plain["properties"]["invoice_number"]["pattern"]);
    assert_eq!(
        number["description"],
        "Invoice number exactly as printed. Null if not stated. Must be at least 1 character long. Must be at most 32 characters long."
    );
    let quantity = &resolve(&strict, &strict["properties"]["line_items"]["items"])["properties"]["quantity"];
    assert!(quantity.get("minimum").is_none(), "{quantity}");
    assert!(quantity.get("format").is_none(), "uint32 is not a strict format: {quantity}");
    assert_eq!(quantity["description"], "Must be at least 1.");
    // Supported formats stay.
    assert_eq!(strict["properties"]["issue_date"]["format"], "date");
    // Optional stays optional: strict adds nothing to `required`.
    assert_eq!(strict["required"], plain["required"]);
}

#[test]
fn strict_still_validates_with_the_original_keywords() {
    // The validator is compiled from the plain schema, so what strict removed is enforced.
    let output = json!({
        "invoice_number": "X".repeat(33),
        "issue_date": "2024-01-01",
        "status": "paid",
        "line_items": [],
        "total": 0.0
    });
    let violations = extract::validate::<Invoice>(&output, "").unwrap_err();
    assert_eq!(violations.len(), 1, "{violations}");
    assert_eq!(violations[0].path, "invoice_number");
    assert_eq!(violations[0].code, "invalid_value");
}

/// A purchase order whose vendor is read with its quote.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[allow(dead_code)]
struct Quoted {
    vendor: extract::Sourced<String>,
}

/// Every `description` anywhere in a schema.
fn descriptions<'a>(schema: &'a Value, out: &mut Vec<&'a str>) {
    match schema {
        Value::Object(node) => {
            if let Some(Value::String(text)) = node.get("description") {
                out.push(text);
            }
            node.values().for_each(|sub| descriptions(sub, out));
        }
        Value::Array(items) => items.iter().for_each(|sub| descriptions(sub, out)),
        _ => {}
    }
}

#[test]
fn library_types_do_not_send_their_rustdoc_examples_to_the_model() {
    // The model reads every description in the tool; a library type's doc
    // comment (a Rust code example, notes for Rust users) is noise there.
    let tool = Quoted::tool();
    let mut texts = Vec::new();
    descriptions(&tool.input_schema, &mut texts);
    for text in texts {
        for noise in ["```", "assert_eq!", "use extract::", "serde_json::"] {
            assert!(!text.contains(noise), "{noise:?} in a description the model reads:\n{text}");
        }
    }
}
