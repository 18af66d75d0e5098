//! The check language's semantics: absence, numbers, aggregates, options,
//! enum variants, `with` functions and panics.

use extract::{Extractable, Layer, Violations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

fn violations<T: Extractable>(output: Value) -> Violations {
    match extract::validate::<T>(&output, "") {
        Ok(_) => panic!("expected violations for {output}"),
        Err(v) => v,
    }
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(due_days >= 0)]
#[check(max(items.price) <= budget)]
#[check(min(items.price) >= 1)]
struct Absent {
    due_days: Option<i32>,
    items: Vec<Priced>,
    budget: f64,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Priced {
    price: f64,
}

#[test]
fn none_operands_and_empty_min_max_hold_vacuously() {
    assert!(extract::validate::<Absent>(&json!({"due_days": null, "items": [], "budget": 0}), "").is_ok());
    let v =
        violations::<Absent>(json!({"due_days": -1, "items": [{"price": 5}, {"price": 0.5}], "budget": 4}));
    let rules: Vec<_> = v.iter().map(|v| v.check.clone().unwrap()).collect();
    assert_eq!(rules, ["due_days >= 0", "max(items.price) <= budget", "min(items.price) >= 1"]);
    assert_eq!(
        v[1].message,
        "check failed: max(items.price) <= budget: max(items.price) = 5.00, budget = 4.00"
    );
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(parts.units) == total_units)]
struct Narrow {
    parts: Vec<Units>,
    total_units: u16,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Units {
    units: u8,
}

#[test]
fn integer_sums_accumulate_wide_and_never_wrap() {
    // 200 + 100 overflows a u8 but not the wide accumulator: the sum is 300.
    let ok = json!({"parts": [{"units": 200}, {"units": 100}], "total_units": 300});
    assert!(extract::validate::<Narrow>(&ok, "").is_ok());
    // A wrapping u8 sum would give 44 and accept this.
    let wrapped = json!({"parts": [{"units": 200}, {"units": 100}], "total_units": 44});
    let v = violations::<Narrow>(wrapped);
    assert!(v[0].message.contains("sum(parts.units) = 300"), "{}", v[0].message);
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(a * b * c >= 0)]
struct Huge {
    a: i64,
    b: i64,
    c: i64,
}

#[test]
fn integer_overflow_is_a_violation_not_a_panic_or_a_wrap() {
    // i64::MAX cubed leaves even the i128 the check computes in.
    let v = violations::<Huge>(json!({"a": i64::MAX, "b": i64::MAX, "c": i64::MAX}));
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].layer, Layer::Semantic);
    assert!(
        v[0].message.starts_with("check could not be evaluated: a * b * c >= 0: arithmetic overflow"),
        "{}",
        v[0].message
    );
    assert!(extract::validate::<Huge>(&json!({"a": i64::MAX, "b": i64::MAX, "c": 1}), "").is_ok());
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(total / count_items > 0)]
struct Ratio {
    total: f64,
    count_items: u32,
}

#[test]
fn division_by_zero_is_a_violation() {
    let v = violations::<Ratio>(json!({"total": 5.0, "count_items": 0}));
    assert_eq!(v.len(), 1);
    assert!(v[0].message.contains("division by zero"), "{}", v[0].message);
    assert!(extract::validate::<Ratio>(&json!({"total": 5.0, "count_items": 2}), "").is_ok());
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(unique(rows.sku))]
#[check(unique(rows.weight), code = "duplicate_weight", recoverable = false)]
#[check(count(rows) == 3, message = "expected three rows, got {lhs}")]
struct Rows {
    rows: Vec<Row>,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Row {
    sku: String,
    weight: f64,
}

#[test]
fn unique_count_and_the_options() {
    let ok = json!({"rows": [
        {"sku": "a", "weight": 1.0}, {"sku": "b", "weight": -0.0}, {"sku": "c", "weight": f64::MAX}
    ]});
    assert!(extract::validate::<Rows>(&ok, "").is_ok());
    let bad = json!({"rows": [{"sku": "a", "weight": 0.0}, {"sku": "a", "weight": -0.0}]});
    let v = violations::<Rows>(bad);
    assert_eq!(v.len(), 3, "{v}");
    assert_eq!(v[0].code, "check_failed");
    assert_eq!(
        v[0].message,
        "check failed: unique(rows.sku): unique(rows.sku) = false (\"a\" occurs more than once)"
    );
    assert_eq!(v[1].code, "duplicate_weight");
    assert!(
        v[1].message.ends_with("unique(rows.weight) = false (0.00 occurs more than once)"),
        "{}",
        v[1].message
    );
    assert!(!v[1].recoverable);
    assert!(v[0].recoverable);
    assert_eq!(v[2].message, "expected three rows, got 2");
    assert_eq!(v[2].path.to_string(), "rows");
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    Paid,
    Unpaid,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(status != Status::Paid || balance == 0)]
#[check(len(reference) <= 8 && len(notes) <= 2)]
struct Account {
    status: Status,
    balance: i64,
    reference: String,
    notes: Vec<String>,
}

#[test]
fn enum_variants_and_len() {
    let ok = json!({"status": "paid", "balance": 0, "reference": "ÄÖÜ-1234", "notes": ["a", "b"]});
    assert!(extract::validate::<Account>(&ok, "").is_ok(), "len counts characters, not bytes");
    let v = violations::<Account>(json!({"status": "paid", "balance": 10, "reference": "x", "notes": []}));
    assert_eq!(v.len(), 1);
    assert!(v[0].message.contains("status = Paid"), "{}", v[0].message);
    assert!(
        extract::validate::<Account>(
            &json!({"status": "unpaid", "balance": 10, "reference": "x", "notes": []}),
            ""
        )
        .is_ok()
    );
    let v = violations::<Account>(
        json!({"status": "unpaid", "balance": 0, "reference": "123456789", "notes": ["a","b","c"]}),
    );
    assert!(v[0].message.contains("len(reference) = 9"), "{}", v[0].message);
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(with = starts_uppercase)]
#[check(with = always_panics)]
struct Named {
    name: String,
}

fn starts_uppercase(n: &Named) -> Result<(), String> {
    if n.name.chars().next().is_some_and(char::is_uppercase) {
        Ok(())
    } else {
        Err(format!("name {:?} must start with a capital letter", n.name))
    }
}

fn always_panics(n: &Named) -> Result<(), String> {
    if n.name == "boom" {
        panic!("the validator exploded");
    }
    Ok(())
}

#[test]
fn with_functions_and_panics() {
    assert!(extract::validate::<Named>(&json!({"name": "Ada"}), "").is_ok());
    let v = violations::<Named>(json!({"name": "ada"}));
    assert_eq!(
        v[0].message,
        "check `starts_uppercase` failed: name \"ada\" must start with a capital letter"
    );
    assert!(v[0].recoverable);
    let v = violations::<Named>(json!({"name": "boom"}));
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].code, "validator_panicked");
    assert!(!v[0].recoverable);
    assert!(v[0].message.contains("the validator exploded"));
    // The process carries on.
    assert!(extract::validate::<Named>(&json!({"name": "Bob"}), "").is_ok());
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(vendor.address.zip != "00000")]
#[check(is_some(vendor) || is_none(vendor))]
struct Order {
    vendor: Option<Box<Vendor>>,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Vendor {
    #[serde(rename = "vendorAddress")]
    address: Address,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Address {
    zip: String,
}

#[test]
fn paths_through_option_and_box_use_json_names() {
    assert!(extract::validate::<Order>(&json!({"vendor": null}), "").is_ok());
    let v = violations::<Order>(json!({"vendor": {"vendorAddress": {"zip": "00000"}}}));
    assert_eq!(
        v[0].message,
        "check failed: vendor.vendorAddress.zip != \"00000\": vendor.vendorAddress.zip = \"00000\""
    );
    assert_eq!(v[0].path.to_string(), "vendor.vendorAddress.zip");
}

#[test]
fn the_tool_lists_the_checks_in_json_names() {
    let tool = Order::tool();
    assert!(tool.description.contains("- vendor.vendorAddress.zip != \"00000\""), "{}", tool.description);
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(unique(codes) == true || allow_duplicates)]
struct Codes {
    codes: Vec<String>,
    allow_duplicates: bool,
}

#[test]
fn unique_composes_with_comparisons_and_logic() {
    assert!(extract::validate::<Codes>(&json!({"codes": ["a", "a"], "allow_duplicates": true}), "").is_ok());
    let v = violations::<Codes>(json!({"codes": ["b", "a", "b"], "allow_duplicates": false}));
    assert!(v[0].message.contains("unique(codes) = false (\"b\" occurs more than once)"), "{}", v[0].message);
    assert!(extract::validate::<Codes>(&json!({"codes": ["a", "b"], "allow_duplicates": false}), "").is_ok());
}
