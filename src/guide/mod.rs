//! The guide: this page is the reference of `#[derive(Extractable)]` (every
//! attribute, the check language with its operators, functions and
//! options, the tags, and how optional, required and sourced fields
//! behave); its pages take one topic each:
//!
//! - [`retries`]: the retry loop, the packets an outcome becomes, a
//!   reviewer's fix, statistics, costs, a ladder of models, patch
//!   corrections;
//! - [`documents`]: text, PDFs, and where each value came from;
//! - [`bulk`]: many documents, journals, PostgreSQL workers, pacing,
//!   Message Batches;
//! - [`evaluation`]: how good it is, against labelled documents;
//! - [`desk`]: reviewing escalations in a browser;
//! - [`telemetry`]: spans and metrics in a tracing backend;
//! - [`clients`]: the two clients, and testing with the scripted model.
//!
//! Every example runs as a test, offline where it can: [`validate`](crate::validate)
//! on an output, or an [`Extractor`](crate::Extractor) over the scripted
//! model. One that needs a network or a server is compiled but not run;
//! one that needs a feature is compiled with that feature.
//!
//! # Attributes of the type
//!
//! | Attribute | Effect |
//! |---|---|
//! | `#[extract(name = "record_invoice")]` | the tool's name (default: the type's name in snake case) |
//! | `#[extract(description = "...")]` | the tool's description (default: the type's doc comment) |
//! | `#[check(EXPR, options...)]` | a rule over the fields, on a struct or a struct variant |
//! | `#[check(with = function)]` | a rule written in Rust: `fn(&T) -> Result<(), impl Display>` |
//!
//! Field doc comments become the schema's descriptions: they are what the
//! model reads about each field.
//!
//! ```
//! use extract::Extractable;
//!
//! /// Record one invoice exactly as the document states it.
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! #[extract(name = "record_invoice")]
//! struct Invoice {
//!     /// The invoice number as printed.
//!     number: String,
//!     total: f64,
//! }
//!
//! let tool = Invoice::tool();
//! assert_eq!(tool.name, "record_invoice");
//! assert!(tool.description.starts_with("Record one invoice exactly as the document states it."));
//! assert_eq!(tool.input_schema["properties"]["number"]["description"], "The invoice number as printed.");
//! ```
//!
//! # Fields: required, optional, recoverable
//!
//! - A field is **required** unless it is an `Option` or has
//!   `#[serde(default)]`. A required field the model leaves out, or sends as
//!   `null`, is a `missing_field` violation, and the model is asked again.
//! - An **`Option`** field is optional: `null` and absence both mean "not
//!   in the source", and neither is a violation.
//! - **`#[extract(recoverable = false)]`** on a required field says the
//!   datum may truly be absent from the source: when the model leaves it
//!   out, the run escalates at once for a person instead of asking again (a
//!   retry would push the model to invent it). Its schema admits `null`, so
//!   a model can say "absent". On an `Option` or a defaulted field the tag
//!   is a compile error: such a field is never missing.
//!
//! Serde's `rename`, `rename_all`, `default`, `skip` and
//! `deny_unknown_fields` are honoured. What the derive cannot honour
//! (`flatten`, `alias`, `transparent`, `from`, `try_from`, `remote`, and
//! `untagged` or `tag` on a struct) is a compile error, never a silently
//! wrong schema.
//!
//! ```
//! use extract::{Extractable, Extractor, Outcome, Reason, testing::Scripted};
//! use serde_json::json;
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! struct Order {
//!     #[extract(recoverable = false)]
//!     purchase_order: String,
//!     note: Option<String>,
//!     total: f64,
//! }
//!
//! // `note` is optional: absent is fine. `total` is required: a retry.
//! let violations = extract::validate::<Order>(&json!({"purchase_order": "PO-1"}), "").unwrap_err();
//! assert_eq!(violations.len(), 1);
//! assert_eq!((violations[0].code.as_str(), violations[0].path.to_string()), ("missing_field", "total".into()));
//! assert!(violations[0].recoverable);
//!
//! // `purchase_order` is tagged: its absence goes to a person at once.
//! let model = Scripted::new([json!({"purchase_order": null, "total": 12.5})]);
//! let outcome = Extractor::new(model.clone()).extract_blocking::<Order>("Total 12.50")?;
//! let Outcome::Escalated(escalation) = outcome else { panic!("a tagged field left out escalates") };
//! assert_eq!(escalation.reason, Reason::NotRecoverable);
//! assert_eq!(model.calls(), 1, "no retry");
//! # Ok::<(), extract::Error>(())
//! ```
//!
//! # Sourced values
//!
//! [`Sourced<T>`](crate::Sourced) is `{"value": ..., "quote": "..."}`: the
//! quote must occur in the document, and the value in its quote (whitespace
//! normalised; text ignoring case; a number or a date as written, so
//! `140.00` holds 140.0). A failure is `quote_not_found`, recoverable
//! unless the field is tagged `recoverable = false`. `T` is text, a number,
//! a date, a type deriving `Extractable` (its checks run), or your own
//! plain type declared with [`leaf!`](crate::leaf).
//!
//! ```
//! use extract::{Extractable, Sourced};
//! use serde_json::json;
//!
//! #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! struct Currency(String);
//! extract::leaf!(Currency);
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! struct Total {
//!     amount: Sourced<f64>,
//!     currency: Sourced<Currency>,
//! }
//!
//! let document = "Total due: 140.00 EUR";
//! let right = json!({"amount": {"value": 140.0, "quote": "140.00"}, "currency": {"value": "EUR", "quote": "EUR"}});
//! assert!(extract::validate::<Total>(&right, document).is_ok());
//! let invented = json!({"amount": {"value": 140.0, "quote": "Total: 140.00"}, "currency": {"value": "EUR", "quote": "EUR"}});
//! let violations = extract::validate::<Total>(&invented, document).unwrap_err();
//! assert_eq!(violations[0].code, "quote_not_found");
//! assert_eq!(violations[0].path.to_string(), "amount.quote");
//! ```
//!
//! # The check language
//!
//! `#[check(EXPR, options...)]` goes on a struct or a struct variant. EXPR
//! names the struct's Rust fields; the derive lowers it to typed Rust, so
//! rustc checks every name and type, and its errors point at your tokens.
//! Messages, fix hints and the tool's list of checks speak the JSON names.
//!
//! | Form | Example |
//! |---|---|
//! | a field path, through nested structs, `Option`, `Box`, and (inside an aggregate) `Vec`, `VecDeque`, arrays, map values | `vendor.address.zip != "00000"` |
//! | number, text and `true`/`false` literals | `amount >= 0`, `currency == "EUR"`, `paid == true` |
//! | an enum's variant, compared with `==`/`!=` (`PartialEq`); a derived enum's is shown as its JSON tag (`"paid"`) in the tool and in messages | `status != Status::Paid \|\| balance == 0` |
//! | `+ - * /`, `== != < <= > >=`, `&& \|\| !`, parentheses | `quantity * unit_price == amount` |
//! | `sum(p)`, `count(p)`, `min(p)`, `max(p)` over a collection's values | `sum(line_items.amount) == total` |
//! | `unique(p)`: no value twice | `unique(line_items.sku)` |
//! | `len(p)`: characters of a text, elements of a collection | `len(invoice_number) <= 32` |
//! | `abs(x)` | `abs(balance) < 0.01` |
//! | `is_some(p)`, `is_none(p)` | `is_some(due_date) \|\| is_some(terms_days)` |
//!
//! | Option | Example | Effect |
//! |---|---|---|
//! | `tolerance` | `tolerance = 0.01` | `==` and `!=` within this distance |
//! | `message` | `message = "items add to {lhs}, the total says {rhs}"` | the failure's message: `{lhs}`, `{rhs}` (the two sides of the comparison) and any field's name are filled in |
//! | `code` | `code = "total_mismatch"` | the violation's code (default `check_failed`) |
//! | `recoverable` | `recoverable = false` | a failure escalates at once instead of asking again |
//!
//! ```
//! use extract::Extractable;
//! use serde_json::json;
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! #[check(sum(lines.amount) == total, tolerance = 0.01, code = "total_mismatch",
//!         message = "the lines add to {lhs}, the total says {rhs}")]
//! #[check(unique(lines.sku))]
//! #[check(len(number) <= 8)]
//! #[check(is_some(due) || is_some(terms_days), recoverable = false)]
//! struct Invoice {
//!     number: String,
//!     lines: Vec<Line>,
//!     total: f64,
//!     due: Option<String>,
//!     terms_days: Option<u32>,
//! }
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! #[check(amount >= 0)]
//! struct Line {
//!     sku: String,
//!     amount: f64,
//! }
//!
//! let output = json!({
//!     "number": "INV-2026-0001",
//!     "lines": [{"sku": "A", "amount": 100.0}, {"sku": "A", "amount": -20.0}],
//!     "total": 100.0,
//!     "due": null,
//!     "terms_days": null
//! });
//! let violations = extract::validate::<Invoice>(&output, "").unwrap_err();
//! let found: Vec<(String, String)> =
//!     violations.iter().map(|v| (v.code.to_string(), v.path.to_string())).collect();
//! assert!(found.contains(&("total_mismatch".into(), "lines".into())), "{violations}");
//! assert!(found.contains(&("check_failed".into(), "lines[1].amount".into())), "{violations}");
//! let mismatch = violations.iter().find(|v| v.code == "total_mismatch").unwrap();
//! assert_eq!(mismatch.message, "the lines add to 80.00, the total says 100.00");
//! // Every failed check is reported together, each at its own path.
//! assert_eq!(violations.len(), 5, "{violations}");
//! let neither = violations.iter().find(|v| v.message.contains("is_some(due)")).unwrap();
//! assert!(!neither.recoverable, "recoverable = false escalates at once");
//! ```
//!
//! **Absent values.** A `None` operand, `min` or `max` of an empty
//! collection, and an aggregate meeting a `None` are *absent*; a check
//! whose result is absent holds (`&&`, `||` and `!` treat absent like SQL's
//! unknown), so `total > 0` does not fail on a `total: Option<f64>` the
//! document lacks: say `is_some(total)` where it must be there.
//!
//! **Numbers.** Literals adapt to what they meet and integers promote; `/`
//! is exact; an overflow or a division by zero is a violation, never a
//! panic; float `==` allows a relative 1e-9 unless a `tolerance` is given; a
//! float meeting a `Decimal` is a compile error.
//!
//! **Paths.** A path through a collection is allowed only inside an
//! aggregate; a path cannot step into an enum (put the check on the struct
//! variant that has the field); an unknown field is a compile error with a
//! "did you mean".
//!
//! ```
//! use extract::Extractable;
//! use serde_json::json;
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! #[check(total > 0)]
//! #[check(min(payments) >= 1)]
//! struct Account {
//!     total: Option<f64>,
//!     payments: Vec<f64>,
//! }
//!
//! // An absent total and an empty list: both checks hold.
//! assert!(extract::validate::<Account>(&json!({"total": null, "payments": []}), "").is_ok());
//! assert!(extract::validate::<Account>(&json!({"total": -1.0, "payments": []}), "").is_err());
//! ```
//!
//! # Rules in Rust: `with = function`
//!
//! What the language cannot say, a function can: `#[check(with = f)]` on a
//! struct, a newtype or a tuple struct calls `f(&value)` and reports its
//! `Err`'s text at the value's path.
//!
//! ```
//! use extract::Extractable;
//! use serde_json::json;
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! #[check(with = valid_iban)]
//! struct Iban(String);
//!
//! fn valid_iban(iban: &Iban) -> Result<(), String> {
//!     if iban.0.len() >= 15 && iban.0.is_char_boundary(2) && iban.0[..2].chars().all(|c| c.is_ascii_uppercase()) {
//!         Ok(())
//!     } else {
//!         Err(format!("{:?} is not an IBAN", iban.0))
//!     }
//! }
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! struct Payee {
//!     name: String,
//!     iban: Iban,
//! }
//!
//! let violations = extract::validate::<Payee>(&json!({"name": "ACME", "iban": "12"}), "").unwrap_err();
//! assert_eq!(violations[0].path.to_string(), "iban");
//! assert!(violations[0].message.contains("\"12\" is not an IBAN"), "{}", violations[0].message);
//! ```
//!
//! # Enums
//!
//! An enum in serde's tagged forms (external, `#[serde(tag = "...")]`,
//! `#[serde(tag = "...", content = "...")]`) with `rename`, `rename_all`
//! and `rename_all_fields`; violations follow the JSON, and the variant a
//! value holds is walked. `untagged` and `#[serde(other)]` are compile
//! errors: without a tag, feedback could not say which variant was meant.
//! Under an internal tag, a newtype variant's content must be a JSON
//! object: write a struct variant, or tag and content.
//!
//! The extracted type itself is a JSON object: a struct or a tagged enum.
//! A newtype or a tuple struct inside it takes `#[check(with = function)]`
//! (above); a generic struct has a tool per instantiation. For an open
//! category (an enum of the expected values with an `Other`, and a detail
//! field a check demands exactly when the category is `Other`), see
//! `examples/open_category.rs`.
//!
//! ```
//! use extract::Extractable;
//! use serde_json::json;
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! #[serde(tag = "kind", rename_all = "snake_case")]
//! enum Payment {
//!     #[check(len(last4) == 4)]
//!     Card { last4: String },
//!     Transfer { iban: String },
//!     Cash,
//! }
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! struct Receipt {
//!     payment: Payment,
//! }
//!
//! assert!(extract::validate::<Receipt>(&json!({"payment": {"kind": "cash"}}), "").is_ok());
//! let violations =
//!     extract::validate::<Receipt>(&json!({"payment": {"kind": "card", "last4": "12345"}}), "").unwrap_err();
//! assert_eq!(violations[0].path.to_string(), "payment.last4");
//! ```
//!
//! # Tags at a glance
//!
//! | Tag | Where | Says |
//! |---|---|---|
//! | `recoverable = false` (on `#[extract]`) | a required field | the datum may be absent from the source: escalate, never retry |
//! | `recoverable = false` (on `#[check]`) | a check | a failure needs a person: escalate at once |
//! | `Option<T>` | a field | optional: `null` and absence are answers |
//! | `#[serde(default)]` | a field | optional, with the default when absent |
//! | `Sourced<T>` | a field | the value must be quoted from the document |

pub mod bulk;
pub mod clients;
pub mod desk;
pub mod documents;
pub mod evaluation;
pub mod retries;
pub mod telemetry;
