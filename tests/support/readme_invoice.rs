//! The README's invoice types, exactly as its section "A derived struct and
//! its tool" shows them, for the tests that check what the README claims.
#![allow(dead_code)]

use extract::Extractable;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Record one invoice exactly as printed.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
#[check(due_date >= issue_date)]
pub struct Invoice {
    /// Invoice number exactly as printed.
    #[extract(recoverable = false)]
    invoice_number: String,
    issue_date: chrono::NaiveDate,
    due_date: Option<chrono::NaiveDate>,
    line_items: Vec<LineItem>,
    #[serde(rename = "total")]
    stated_total: f64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
pub struct LineItem {
    description: String,
    amount: f64,
}
