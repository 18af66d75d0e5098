#![warn(missing_docs)]
//! Trustworthy LLM extraction: derive a tool definition, semantic checks and
//! recoverability rules from a Rust struct, then let a small runtime retry
//! with exact feedback or escalate to a human.
//!
//! `use extract::Extractable;` names both the trait and the derive. The
//! README has the tour; ARCHITECTURE.md the layout.
//!
//! # Validate an output
//!
//! ```
//! use extract::Extractable;
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! /// Record one invoice.
//! #[derive(Debug, Deserialize, JsonSchema, Extractable)]
//! #[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
//! struct Invoice {
//!     #[extract(recoverable = false)]
//!     invoice_number: String,
//!     line_items: Vec<LineItem>,
//!     #[serde(rename = "total")]
//!     stated_total: f64,
//! }
//!
//! #[derive(Debug, Deserialize, JsonSchema, Extractable)]
//! #[check(amount >= 0)]
//! struct LineItem {
//!     description: String,
//!     amount: f64,
//! }
//!
//! assert_eq!(Invoice::tool().name, "invoice");
//!
//! let output = serde_json::json!({
//!     "invoice_number": "INV-7",
//!     "line_items": [{"description": "Design", "amount": 150.0}, {"description": "Build", "amount": 300.0}],
//!     "total": 500.0
//! });
//! let violations = extract::validate::<Invoice>(&output, "").unwrap_err();
//! assert_eq!(violations[0].code, "check_failed");
//! assert_eq!(
//!     violations.to_string(),
//!     "- line_items: check failed: sum(line_items.amount) == total (tolerance 0.01): \
//!      sum(line_items.amount) = 450.00, total = 500.00"
//! );
//! ```
//!
//! # Run the retry loop
//!
//! ```
//! # use extract::Extractable;
//! # use schemars::JsonSchema;
//! # use serde::Deserialize;
//! # #[derive(Debug, Deserialize, JsonSchema, Extractable)]
//! # #[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
//! # struct Invoice { line_items: Vec<LineItem>, #[serde(rename = "total")] stated_total: f64 }
//! # #[derive(Debug, Deserialize, JsonSchema, Extractable)]
//! # struct LineItem { amount: f64 }
//! use extract::{Extractor, Outcome, Retries, testing::Scripted};
//! use serde_json::json;
//!
//! // A scripted model: the first answer does not add up, the second does.
//! let model = Scripted::new([
//!     json!({"line_items": [{"amount": 150.0}, {"amount": 300.0}], "total": 500.0}),
//!     json!({"line_items": [{"amount": 200.0}, {"amount": 300.0}], "total": 500.0}),
//! ]);
//! let extractor = Extractor::new(model.clone()).retries(Retries::new(2).unwrap());
//! let outcome = extractor.extract_blocking::<Invoice>("Design 200.00\nBuild 300.00\nTotal 500.00").unwrap();
//! match outcome {
//!     Outcome::Valid(invoice) => assert_eq!(invoice.attempts(), 2),
//!     Outcome::Escalated(escalation) => panic!("escalated: {escalation:?}"),
//! }
//! // The second prompt carried the exact error back to the model.
//! assert!(model.prompts()[1].to_string().contains("sum(line_items.amount) = 450.00, total = 500.00"));
//! ```

pub use extract_core::*;
pub use extract_derive::Extractable;
