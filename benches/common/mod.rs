//! The invoice both benchmarks measure: the check-language issue's invoice,
//! and the same with a `pattern` on each line item.
//!
//! Each bench crate uses part of it, so unused items are expected.
#![allow(dead_code)]

use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
pub struct Invoice {
    line_items: Vec<LineItem>,
    #[serde(rename = "total")]
    stated_total: f64,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
pub struct LineItem {
    description: String,
    amount: f64,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
pub struct PatternedInvoice {
    line_items: Vec<PatternedLineItem>,
    #[serde(rename = "total")]
    stated_total: f64,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
pub struct PatternedLineItem {
    #[schemars(regex(pattern = r"^[A-Za-z0-9 ]+$"))]
    description: String,
    amount: f64,
}

/// An invoice output with `items` line items; when `failing`, the stated
/// total is off by one, so exactly one check fails.
pub fn output(items: usize, failing: bool) -> Value {
    let line_items: Vec<Value> = (0..items)
        .map(|i| json!({"description": format!("Item {i}"), "amount": (i % 97) as f64 + 0.5}))
        .collect();
    let total: f64 = (0..items).map(|i| (i % 97) as f64 + 0.5).sum();
    json!({"line_items": line_items, "total": if failing { total + 1.0 } else { total }})
}
