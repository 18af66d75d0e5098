//! Dates (`chrono` feature), exact decimals (`decimal` feature) and provenance quotes.
#![cfg(all(feature = "chrono", feature = "decimal"))]

use chrono::NaiveDate;
use extract::{Extractable, Sourced};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(due_date >= issue_date)]
struct Dated {
    issue_date: NaiveDate,
    due_date: Option<NaiveDate>,
}

#[test]
fn dates_compare_as_dates_and_absent_dates_hold() {
    let ok = json!({"issue_date": "2024-02-01", "due_date": "2024-10-01"});
    assert!(extract::validate::<Dated>(&ok, "").is_ok());
    // As strings "2024-10-01" < "2024-9-30" would hold; as dates it does not matter, the
    // format is fixed, but order across months must be by date:
    let bad = json!({"issue_date": "2024-10-01", "due_date": "2024-02-01"});
    let v = extract::validate::<Dated>(&bad, "").unwrap_err();
    assert_eq!(
        v[0].message,
        "check failed: due_date >= issue_date: due_date = 2024-02-01, issue_date = 2024-10-01"
    );
    assert!(extract::validate::<Dated>(&json!({"issue_date": "2024-10-01", "due_date": null}), "").is_ok());
    assert!(extract::validate::<Dated>(&json!({"issue_date": "2024-10-01"}), "").is_ok());
}

#[test]
fn date_fields_get_schemars_date_format() {
    let schema = Dated::tool().input_schema;
    assert_eq!(schema["properties"]["issue_date"]["format"], "date");
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(parts.amount) == total)]
#[check(total >= 0.3)]
struct Exact {
    parts: Vec<Part>,
    total: Decimal,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Part {
    amount: Decimal,
}

#[test]
fn decimal_sums_are_exact_where_floats_are_not() {
    // 0.1 + 0.2 != 0.3 in f64 without a tolerance; exactly equal as decimals.
    assert_ne!(0.1f64 + 0.2f64, 0.3f64);
    let output = json!({"parts": [{"amount": "0.1"}, {"amount": "0.2"}], "total": "0.3"});
    assert!(extract::validate::<Exact>(&output, "").is_ok());
    let off = json!({"parts": [{"amount": "0.1"}, {"amount": "0.2"}], "total": "0.30000000000000004"});
    let v = extract::validate::<Exact>(&off, "").unwrap_err();
    assert_eq!(v.len(), 1, "{v}");
    assert_eq!(
        v[0].message,
        "check failed: sum(parts.amount) == total: sum(parts.amount) = 0.3, total = 0.30000000000000004"
    );
    // The literal 0.3 is parsed exactly from its text: 0.29 fails, 0.3 holds.
    let low = json!({"parts": [{"amount": "0.29"}], "total": "0.29"});
    assert!(extract::validate::<Exact>(&low, "").unwrap_err()[0].message.contains("total >= 0.3"));
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Quoted {
    #[extract(recoverable = false)]
    vendor: Sourced<String>,
    total: Sourced<f64>,
    notes: Vec<Sourced<String>>,
}

const DOCUMENT: &str = "INVOICE\nBill from:   ACME   Corp\nTotal due: 1,250.00 EUR\nNote: deliver\nto dock 4";

#[test]
fn quotes_present_whitespace_insensitive_and_value_in_quote() {
    let output = json!({
        "vendor": {"value": "acme corp", "quote": "Bill from: ACME Corp"},
        "total": {"value": 1250.0, "quote": "Total due: 1,250.00 EUR"},
        "notes": [{"value": "deliver to dock 4", "quote": "deliver to dock 4"}]
    });
    let quoted = extract::validate::<Quoted>(&output, DOCUMENT).unwrap();
    assert_eq!(quoted.vendor.quote, "Bill from: ACME Corp", "the quote stays for a reviewer");
}

#[test]
fn an_absent_quote_takes_the_fields_tag() {
    let output = json!({
        "vendor": {"value": "Globex", "quote": "Bill from: Globex"},
        "total": {"value": 1250.0, "quote": "Total: 999"},
        "notes": [{"value": "x", "quote": "Note: deliver"}]
    });
    let v = extract::validate::<Quoted>(&output, DOCUMENT).unwrap_err();
    let summary: Vec<(String, bool)> = v.iter().map(|v| (v.path.to_string(), v.recoverable)).collect();
    assert_eq!(
        summary,
        [
            ("vendor.quote".to_string(), false),
            ("total.quote".to_string(), true),
            ("notes[0].quote".to_string(), true)
        ]
    );
    assert!(v.iter().all(|v| v.code == "quote_not_found"));
    assert!(v[2].message.starts_with("value \"x\" does not occur in its quote"), "{}", v[2].message);
}

#[test]
fn a_real_quote_around_an_invented_value_is_caught() {
    let output = json!({
        "vendor": {"value": "Initech", "quote": "Bill from: ACME Corp"},
        "total": {"value": 1250.0, "quote": "Total due: 1,250.00 EUR"},
        "notes": []
    });
    let v = extract::validate::<Quoted>(&output, DOCUMENT).unwrap_err();
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].path.to_string(), "vendor.quote");
    assert!(!v[0].recoverable);
}

#[test]
fn sourced_schema_has_value_and_quote() {
    let schema = Quoted::tool().input_schema;
    let text = schema.to_string();
    assert!(text.contains("\"quote\""), "{text}");
    assert!(text.contains("\"value\""), "{text}");
}
