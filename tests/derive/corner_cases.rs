//! Corner cases where the derive and the check runtime meet the data: the
//! values a failed `abs` check shows, quotes of any value type, a `null`
//! quote under a tag, checks and tags inside deques, maps and arrays,
//! aggregates over optional collections and map values, exact orderings and
//! division, decimals and `f32`s out of range, schema and serde findings in
//! one round, the tool schema of tagged inline enums and of same-named types,
//! and instants compared in UTC.
#![cfg(all(feature = "chrono", feature = "decimal"))]

use std::collections::{BTreeMap, VecDeque};

use extract::{Extractable, Sourced};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

fn messages<T: Extractable>(output: Value, document: &str) -> Vec<String> {
    match extract::validate::<T>(&output, document) {
        Ok(_) => Vec::new(),
        Err(v) => v.iter().map(|v| format!("{}: {}", v.path, v.message)).collect(),
    }
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(total_discrepancy == (abs(calculated_total - stated_total) > 0.01))]
struct Totals {
    calculated_total: f64,
    stated_total: f64,
    total_discrepancy: bool,
}

#[test]
fn an_abs_check_shows_the_values_it_saw_against_their_names() {
    let got = messages::<Totals>(
        json!({"calculated_total": 450.0, "stated_total": 500.0, "total_discrepancy": false}),
        "",
    );
    assert_eq!(
        got,
        [
            "total_discrepancy: check failed: total_discrepancy == (abs(calculated_total - stated_total) > 0.01): \
          total_discrepancy = false, calculated_total = 450.00, stated_total = 500.00, \
          abs(calculated_total - stated_total) = 50.00"
        ]
    );
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
enum Currency {
    Eur,
    Usd,
}
// Plain data inside a `Sourced`: the walk must be told it holds no checks.
extract::leaf!(Currency);

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Provenance {
    currency: Sourced<Currency>,
    #[extract(recoverable = false)]
    signed_at: Sourced<chrono::DateTime<chrono::Utc>>,
}

#[test]
fn quotes_of_any_value_type_are_checked() {
    let document = "Currency: EUR. Signed 2024-05-01T10:00:00Z.";
    let ok = json!({
        "currency": {"value": "Eur", "quote": "Currency: EUR"},
        "signed_at": {"value": "2024-05-01T10:00:00Z", "quote": "Signed 2024-05-01T10:00:00Z"}
    });
    assert!(extract::validate::<Provenance>(&ok, document).is_ok());
    let invented = json!({
        "currency": {"value": "Usd", "quote": "INVENTED"},
        "signed_at": {"value": "2024-05-01T10:00:00Z", "quote": "INVENTED"}
    });
    let v = extract::validate::<Provenance>(&invented, document).unwrap_err();
    let got: Vec<(String, bool)> = v.iter().map(|v| (v.path.to_string(), v.recoverable)).collect();
    assert_eq!(got, [("currency.quote".to_string(), true), ("signed_at.quote".to_string(), false)]);
}

#[test]
fn a_null_quote_inside_a_tagged_sourced_field_is_absence_not_a_retry() {
    let output = json!({
        "currency": {"value": "Eur", "quote": "Currency: EUR"},
        "signed_at": {"value": "2024-05-01T10:00:00Z", "quote": null}
    });
    let v = extract::validate::<Provenance>(&output, "Currency: EUR").unwrap_err();
    assert_eq!(v[0].path.to_string(), "signed_at.quote");
    assert_eq!(v[0].code, "missing_field");
    assert!(!v[0].recoverable);
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(queue.amount) >= 0)]
struct Collections {
    queue: VecDeque<Item>,
    by_sku: BTreeMap<String, Item>,
    pair: [Item; 2],
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
struct Item {
    amount: f64,
}

#[test]
fn checks_inside_deques_maps_and_arrays_run_with_their_paths() {
    let output = json!({
        "queue": [{"amount": 1.0}, {"amount": -1.0}],
        "by_sku": {"A-1": {"amount": -2.0}},
        "pair": [{"amount": 1.0}, {"amount": -3.0}]
    });
    let paths: Vec<String> = extract::validate::<Collections>(&output, "")
        .unwrap_err()
        .iter()
        .map(|v| v.path.to_string())
        .collect();
    assert_eq!(paths, ["queue[1].amount", "by_sku.A-1.amount", "pair[1].amount"]);
    // The bound is stated once, in the shared definition, as the number's
    // keyword: every place the type appears reads it there.
    let tool = Collections::tool();
    assert!(!tool.description.contains("amount >= 0"), "{}", tool.description);
    assert_eq!(tool.input_schema["$defs"]["Item"]["properties"]["amount"]["minimum"], json!(0));
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(items.amount) == total)]
#[check(count(tags) <= 3)]
#[check(sum(partials) <= total)]
struct Optional {
    items: Option<Vec<Item>>,
    tags: Option<Vec<String>>,
    partials: Vec<Option<f64>>,
    total: f64,
}

#[test]
fn aggregates_over_optional_collections_and_collections_of_options() {
    // An absent collection makes the aggregate absent: the checks hold vacuously
    // instead of pushing the model to invent items.
    assert!(
        extract::validate::<Optional>(&json!({"items": null, "tags": null, "partials": [], "total": 7}), "")
            .is_ok()
    );
    // A present but empty collection sums to zero.
    let got = messages::<Optional>(json!({"items": [], "tags": [], "partials": [], "total": 7}), "");
    assert_eq!(got, ["items: check failed: sum(items.amount) == total: sum(items.amount) = 0, total = 7.00"]);
    // `None` elements are skipped.
    let got = messages::<Optional>(
        json!({"items": [{"amount": 7}], "tags": ["a", "b", "c", "d"], "partials": [5.0, null, 4.0], "total": 7}),
        "",
    );
    assert_eq!(
        got,
        [
            "tags: check failed: count(tags) <= 3: count(tags) = 4",
            "partials: check failed: sum(partials) <= total: sum(partials) = 9.00, total = 7.00"
        ]
    );
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
#[check(share > 0)]
struct Signs {
    amount: f64,
    share: f64,
}

#[test]
fn orderings_compare_exactly_only_equality_has_a_default_tolerance() {
    let got = messages::<Signs>(json!({"amount": -5e-10, "share": 1e-12}), "");
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with("amount: check failed: amount >= 0"), "{got:?}");
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(a == b, tolerance = 0.01)]
struct Wide {
    a: Decimal,
    b: Decimal,
}

#[test]
fn a_decimal_difference_beyond_range_is_not_a_panic() {
    let max = "79228162514264337593543950335";
    let v = extract::validate::<Wide>(&json!({"a": max, "b": format!("-{max}")}), "").unwrap_err();
    assert_eq!(v[0].code, "check_failed");
    assert!(v[0].recoverable);
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Mixed {
    #[schemars(regex(pattern = r"^[A-Z]+$"))]
    code: String,
    big: i64,
    ratio: f32,
}

#[test]
fn schema_and_serde_findings_come_in_one_round() {
    let got =
        messages::<Mixed>(json!({"code": "abc", "big": 10_000_000_000_000_000_000u64, "ratio": 0.5}), "");
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].starts_with("code: "), "{got:?}");
    assert!(got[1].starts_with("big: "), "{got:?}");
}

#[test]
fn an_f32_out_of_range_is_a_violation_not_infinity() {
    let got = messages::<Mixed>(json!({"code": "ABC", "big": 1, "ratio": 1e300}), "");
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with("ratio: "), "{got:?}");
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(total / parts == 2.5)]
struct Ratio {
    total: u32,
    parts: u32,
}

#[test]
fn integer_division_is_exact() {
    assert!(extract::validate::<Ratio>(&json!({"total": 5, "parts": 2}), "").is_ok());
    assert!(extract::validate::<Ratio>(&json!({"total": 4, "parts": 2}), "").is_err());
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Line {
    #[extract(recoverable = false)]
    sku: String,
    amount: f64,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(lines.amount) >= 0)]
#[check(sum(weights) <= 100)]
struct ByKey {
    lines: BTreeMap<String, Line>,
    groups: Vec<BTreeMap<String, Line>>,
    weights: BTreeMap<String, f64>,
}

#[test]
fn a_tag_inside_map_values_is_honoured_whatever_the_keys_are() {
    for key in ["k1", "sku", "amount"] {
        let output = json!({"lines": {key: {"sku": null, "amount": 1.0}}, "groups": [], "weights": {}});
        let v = extract::validate::<ByKey>(&output, "").unwrap_err();
        assert_eq!(v.len(), 1, "{v}");
        assert_eq!(v[0].path.to_string(), format!("lines.{key}.sku"));
        assert!(!v[0].recoverable, "key {key}: a tagged field's absence escalates");
    }
    let output = json!({"lines": {}, "groups": [{"g": {"amount": 1.0}}], "weights": {}});
    let v = extract::validate::<ByKey>(&output, "").unwrap_err();
    assert_eq!(v[0].path.to_string(), "groups[0].g.sku");
    assert!(!v[0].recoverable);
}

#[test]
fn aggregates_over_map_values() {
    let output = json!({"lines": {}, "groups": [], "weights": {"a": 60.0, "b": 50.0}});
    let v = extract::validate::<ByKey>(&output, "").unwrap_err();
    assert_eq!(v[0].message, "check failed: sum(weights) <= 100: sum(weights) = 110.00");
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(inline)]
enum Stage {
    Draft,
    Final,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Staged {
    /// The stage; null when the document has none.
    #[extract(recoverable = false)]
    stage: Stage,
}

#[test]
fn an_inline_enum_that_is_tagged_admits_null_in_the_tool_schema() {
    let tool = Staged::tool();
    let property = &tool.input_schema["properties"]["stage"];
    let validator = jsonschema::validator_for(&tool.input_schema).unwrap();
    assert!(validator.is_valid(&json!({"stage": null})), "{property}");
    assert!(validator.is_valid(&json!({"stage": "Draft"})), "{property}");
    assert_eq!(
        property["description"], "The stage; null when the document has none.",
        "a description that already says what null means gets no second note"
    );
    let v = extract::validate::<Staged>(&json!({"stage": null}), "").unwrap_err();
    assert!(!v[0].recoverable);
}

mod first {
    #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
    #[check(x != 0)]
    pub struct Item {
        pub x: f64,
    }
}

mod second {
    #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
    pub struct Item {
        pub y: String,
        pub inner: super::first::Item,
    }
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct TwoItems {
    first: first::Item,
    second: second::Item,
    many: Vec<first::Item>,
}

#[test]
fn the_tool_lists_the_checks_of_same_named_types_where_each_applies() {
    let description = TwoItems::tool().description;
    assert!(description.contains("- in `first`: x != 0"), "{description}");
    assert!(description.contains("- in `second.inner`: x != 0"), "{description}");
    assert!(description.contains("- in each `many`: x != 0"), "{description}");
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(unique(events.at))]
struct Events {
    events: Vec<Event>,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Event {
    at: chrono::DateTime<chrono::FixedOffset>,
}

#[test]
fn unique_over_instants_compares_them_in_utc() {
    let same_instant =
        json!({"events": [{"at": "2024-05-01T10:00:00Z"}, {"at": "2024-05-01T12:00:00+02:00"}]});
    let v = extract::validate::<Events>(&same_instant, "").unwrap_err();
    assert!(v[0].message.contains("occurs more than once"), "{}", v[0].message);
    let distinct = json!({"events": [{"at": "2024-05-01T10:00:00Z"}, {"at": "2024-05-01T10:00:00+02:00"}]});
    assert!(extract::validate::<Events>(&distinct, "").is_ok());
}

#[test]
fn an_f32_type_does_not_pay_for_the_schema_pass_on_ordinary_outputs() {
    let schema = serde_json::to_value(schemars::schema_for!(Mixed)).unwrap();
    let structure = extract_core::structure::StructureValidator::new(&schema);
    // Mixed has a `pattern`, so it always checks; a plain f32 type only for huge numbers.
    assert!(structure.must_check(&json!({"code": "A", "big": 1, "ratio": 0.5})));
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Plain {
        ratio: f32,
    }
    let schema = serde_json::to_value(schemars::schema_for!(Plain)).unwrap();
    let structure = extract_core::structure::StructureValidator::new(&schema);
    assert!(!structure.needs_schema_pass());
    assert!(!structure.must_check(&json!({"ratio": 0.5})));
    assert!(structure.must_check(&json!({"ratio": 1e300})));
}
