//! The retry loop: what each attempt decides, the feedback a model reads,
//! the packets an outcome becomes, a reviewer's fix, statistics, costs, a
//! ladder of models, and patch corrections.
//!
//! The examples run offline with the scripted model
//! ([`Scripted`](crate::testing::Scripted)); with
//! `extract::anthropic::Client::from_env()?` in its place they run against
//! Claude. They share this type:
//!
//! ```
//! use extract::Extractable;
//!
//! /// Record one invoice exactly as printed.
//! #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! #[extract(name = "record_invoice")]
//! #[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
//! struct Invoice {
//!     invoice_number: String,
//!     #[extract(recoverable = false)] // absent from the output = absent from the source
//!     purchase_order: String,
//!     line_items: Vec<LineItem>,
//!     #[serde(rename = "total")]
//!     stated_total: f64,
//! }
//!
//! #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! #[check(amount >= 0)]
//! struct LineItem {
//!     description: String,
//!     amount: f64,
//! }
//! ```
//!
//! # Run it
//!
//! An [`Extractor`](crate::Extractor) over a model runs the loop;
//! [`Retries`](crate::Retries) is 1, 2 or 3 (attempts = retries + 1; the
//! default is 2). `extract` is async; `extract_blocking` runs on a runtime
//! of its own. The result is `Err` only for transport and configuration
//! failures: every answer of the model ends as an [`Outcome`](crate::Outcome),
//! which you match on, so a failed output never passes as a valid one.
//!
//! ```
//! # use extract::Extractable;
//! # #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! # #[extract(name = "record_invoice")]
//! # #[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
//! # struct Invoice {
//! #     invoice_number: String,
//! #     #[extract(recoverable = false)]
//! #     purchase_order: String,
//! #     line_items: Vec<LineItem>,
//! #     #[serde(rename = "total")]
//! #     stated_total: f64,
//! # }
//! # #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! # #[check(amount >= 0)]
//! # struct LineItem { description: String, amount: f64 }
//! # fn store(_: Invoice) {}
//! # fn send_to_human(_: String) {}
//! use extract::{Extractor, Outcome, Retries, testing::Scripted};
//! use serde_json::json;
//!
//! let document = "INV-7 for PO-1\nDesign 200.00\nBuild 300.00\nTotal 500.00";
//! let answer = |design: f64| json!({"invoice_number": "INV-7", "purchase_order": "PO-1", "total": 500.0,
//!     "line_items": [{"description": "Design", "amount": design}, {"description": "Build", "amount": 300.0}]});
//! // The first answer misreads a line; the sum check catches it.
//! let model = Scripted::new([answer(150.0), answer(200.0)]); // or extract::anthropic::Client::from_env()?
//! let outcome = Extractor::new(model.clone())
//!     .retries(Retries::new(2)?)              // 1, 2 or 3; attempts = retries + 1
//!     .extract_blocking::<Invoice>(document)?; // Err only for transport/configuration
//! assert_eq!(outcome.attempts(), 2);
//! match outcome {
//!     Outcome::Valid(v) => store(v.into_inner()),
//!     Outcome::Escalated(e) => send_to_human(serde_json::to_string(&e)?),
//! }
//!
//! // The second prompt showed the model its output and exactly what failed.
//! let correction = model.prompts()[1].correction.clone().unwrap();
//! assert!(correction.previous_output.contains(r#"{"description":"Design","amount":150.0}"#));
//! assert_eq!(
//!     correction.violations,
//!     "- line_items: check failed: sum(line_items.amount) == total (tolerance 0.01): \
//!      sum(line_items.amount) = 450.00, total = 500.00"
//! );
//! assert_eq!(
//!     correction.instruction,
//!     "Call `record_invoice` again with the whole input: fix only what VALIDATION ERRORS name, \
//!      from the document; keep every other value of PREVIOUS OUTPUT."
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What each attempt decides
//!
//! After each answer the loop decides, in this order:
//!
//! 1. **valid**: every layer passed; the outcome is
//!    [`Outcome::Valid`](crate::Outcome::Valid).
//! 2. **a violation that is not recoverable**: escalate at once
//!    ([`Reason::NotRecoverable`](crate::Reason::NotRecoverable),
//!    `not_recoverable`): a field tagged `recoverable = false` left out, or
//!    a check tagged so failed. A retry would push the model to invent the
//!    datum.
//! 3. **the same violation as the attempt before**: escalate
//!    ([`Reason::Systematic`](crate::Reason::Systematic), `systematic`),
//!    with a fix hint: asking again will not help.
//! 4. **the budget is spent**: escalate
//!    ([`Reason::BudgetExhausted`](crate::Reason::BudgetExhausted),
//!    `budget_exhausted`): the retries, or a token or cost budget.
//! 5. otherwise **retry**, showing the model its previous output and
//!    exactly what failed. After the document, the correction of the first
//!    example reads:
//!
//! ````text
//! ### PREVIOUS OUTPUT
//! ```
//! {"invoice_number":"INV-7","purchase_order":"PO-1","total":500.0,"line_items":[{"description":"Design","amount":150.0},{"description":"Build","amount":300.0}]}
//! ```
//!
//! ### VALIDATION ERRORS
//! ```
//! - line_items: check failed: sum(line_items.amount) == total (tolerance 0.01): sum(line_items.amount) = 450.00, total = 500.00
//! ```
//!
//! ### INSTRUCTION
//! ```
//! Call `record_invoice` again with the whole input: fix only what VALIDATION ERRORS name, from the document; keep every other value of PREVIOUS OUTPUT.
//! ```
//! ````
//!
//! # The packets
//!
//! An outcome serializes to the packet the wider world expects. A valid
//! one is `{"status":"ok","output":{...},"attempts":2,"cost":0.0031}`
//! (with `"model"` when the run knows it, `"sources"` when the type has
//! [`Sourced`](crate::Sourced) values, `"reviewed": true` for a reviewer's
//! fix). An escalation is the packet a reviewer queue expects; here the
//! purchase order is not in the document, so it escalates at once:
//!
//! ```json
//! {
//!   "status": "escalated", "reason": "not_recoverable",
//!   "error_chain": [{ "attempt": 1, "violations": [{ "layer": "structure", "code": "missing_field",
//!     "path": "purchase_order", "fields": ["purchase_order"], "message": "required field is null: ...",
//!     "recoverable": false }], "usage": { "input_tokens": 1840, "output_tokens": 96, "...": "..." } }],
//!   "last_output": { "invoice_number": "INV-2024-0231", "purchase_order": null, "...": "..." },
//!   "fix_hint": "`purchase_order` is tagged recoverable = false and the model gave no value for it ...",
//!   "cost": 0.0007,
//!   "partial": { "held": { "invoice_number": "INV-2024-0231", "...": "..." }, "failed": { "purchase_order": ["..."] } }
//! }
//! ```
//!
//! `cost` is in US dollars, `null` when the model has no price. Each entry
//! of `error_chain` is one failed attempt: its violations, its usage, the
//! `"model"` that answered and its `"cost"`. The rustdoc of
//! [`Outcome`](crate::Outcome) shows both packets whole, as a test.
//!
//! # A reviewer's fix
//!
//! `partial` says what a reviewer can trust: the fields that `held` and
//! those that `failed`, with why. A reviewer's fix is a JSON merge patch
//! over the last output, and goes through all three layers like a model's
//! answer: [`review`](fn@crate::review) gives a
//! [`Validated`](crate::Validated) whose packet says `"reviewed": true`, or
//! the violations the fix still has.
//!
//! ```
//! # use extract::Extractable;
//! # #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! # #[extract(name = "record_invoice")]
//! # #[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
//! # struct Invoice {
//! #     invoice_number: String,
//! #     #[extract(recoverable = false)]
//! #     purchase_order: String,
//! #     line_items: Vec<LineItem>,
//! #     #[serde(rename = "total")]
//! #     stated_total: f64,
//! # }
//! # #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! # #[check(amount >= 0)]
//! # struct LineItem { description: String, amount: f64 }
//! use extract::{Extractor, Outcome, Reason, testing::Scripted};
//! use serde_json::json;
//!
//! let document = "Invoice INV-7\nDesign 500.00\nTotal 500.00";
//! let model = Scripted::new([json!({"invoice_number": "INV-7", "purchase_order": null,
//!     "line_items": [{"description": "Design", "amount": 500.0}], "total": 500.0})]);
//! let outcome = Extractor::new(model).extract_blocking::<Invoice>(document)?;
//! let Outcome::Escalated(escalation) = outcome else { panic!("no purchase order: a person decides") };
//! assert_eq!(escalation.reason, Reason::NotRecoverable);
//! assert!(escalation.partial.held.contains_key("invoice_number"));
//! assert!(escalation.partial.failed.contains_key("purchase_order"));
//!
//! // The reviewer found the purchase order on the delivery note.
//! let fixed = extract::review::<Invoice>(&escalation, document, json!({"purchase_order": "PO-1"}))?;
//! assert_eq!(fixed.value().purchase_order, "PO-1");
//! assert_eq!(serde_json::to_value(&fixed)?["reviewed"], true);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Statistics and the report
//!
//! [`Stats`](crate::Stats) folds outcomes: how many were valid (at the
//! first attempt or after a retry), escalated by each reason, the
//! violations by fingerprint, tokens and cost. When one fingerprint
//! dominates the failures, [`Stats::dominant`](crate::Stats::dominant)
//! names the structural fix ("make `department` optional"), not "raise the
//! retries". [`Report`](crate::report::Report) renders a run as one
//! self-contained HTML page (`cargo run --example report`).
//!
//! ```
//! # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
//! # #[check(total > 0)]
//! # struct Receipt { total: f64 }
//! use extract::{Extractor, Stats, testing::Scripted};
//! use serde_json::json;
//!
//! let mut stats = Stats::new();
//! for answers in [vec![json!({"total": 7.5})], vec![json!({"total": -7.5}), json!({"total": -7.5})]] {
//!     let outcome = Extractor::new(Scripted::new(answers)).extract_blocking::<Receipt>("Total 7.50")?;
//!     stats.record(&outcome);
//! }
//! assert_eq!((stats.valid(), stats.escalated()), (1, 1));
//! let dominant = stats.dominant().expect("one check fails every time");
//! println!("{}", dominant.fix);
//! let page = extract::report::Report::new(&stats).html(); // one self-contained HTML page
//! assert!(page.starts_with("<!DOCTYPE html>"));
//! # Ok::<(), extract::Error>(())
//! ```
//!
//! # What it costs
//!
//! Every outcome has a cost in US dollars
//! ([`Outcome::cost`](crate::Outcome::cost), `None` when the model has no
//! price), from [`PriceTable::claude`](crate::cost::PriceTable::claude)
//! (dated); [`Extractor::prices`](crate::Extractor::prices) overrides or
//! extends it, for any model. [`Stats`](crate::Stats), a bulk report, the
//! HTML report and an evaluation total it.
//! [`cost_budget(usd)`](crate::Extractor::cost_budget) ends a document as
//! `BudgetExhausted` when the next attempt would go past it, like
//! [`token_budget(tokens)`](crate::Extractor::token_budget) with tokens.
//!
//! ```
//! # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
//! # struct Receipt { total: f64 }
//! use extract::cost::{PriceTable, Prices};
//! use extract::{Extractor, Usage, model::Reply, testing::Scripted};
//! use serde_json::json;
//!
//! // $3 per million input tokens, $15 per million output, then cache reads and writes.
//! let prices = PriceTable::claude().with("scripted", Prices::per_million(3.0, 15.0, 0.3, 3.75));
//! let reply = Reply::tool_call(json!({"total": 4.5})).with_usage(Usage::new(1_000, 200));
//! let outcome = Extractor::new(Scripted::new([reply]))
//!     .prices(prices)
//!     .cost_budget(0.05) // US dollars per document
//!     .extract_blocking::<Receipt>("Total 4.50")?;
//! assert_eq!(outcome.cost(), Some(0.006));
//! # Ok::<(), extract::Error>(())
//! ```
//!
//! # A ladder of models
//!
//! [`then`](crate::Extractor::then) lets a cheap model answer first and a
//! stronger one start over only where the checks say the cheap one failed
//! systematically (or spent its budget): the stronger model gets a first
//! attempt of its own, with its own retries; any number of rungs. A
//! violation that is not recoverable (absent data, which a stronger model
//! would only invent) goes to a person at once.
//!
//! ```
//! # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
//! # #[check(total > 0)]
//! # struct Receipt { total: f64 }
//! use extract::{Extractor, testing::Scripted};
//! use serde_json::json;
//!
//! let haiku = Scripted::new([json!({"total": -7.5}), json!({"total": -7.5})]); // the same mistake twice
//! let sonnet = Scripted::new([json!({"total": 7.5})]);
//! let outcome = Extractor::new(haiku).then(sonnet).extract_blocking::<Receipt>("Total 7.50")?;
//! assert_eq!(outcome.rung(), 1); // the second model answered
//! println!("{:?}", outcome.model()); // its name: Some("claude-sonnet-5-5") with real clients
//! # Ok::<(), extract::Error>(())
//! ```
//!
//! Each failed attempt in the packet names its `"model"` and `"cost"`;
//! [`Stats::by_model`](crate::Stats::by_model) and the report show what
//! each model answered, settled and cost; a journal replays every rung.
//! On the ladder benchmark (`benches/README.md`) it reaches the large
//! model's accuracy at a quarter of its cost. Message Batches refuse a
//! ladder.
//!
//! # Patch corrections
//!
//! [`corrections(Corrections::Patch)`](crate::Extractor::corrections) asks
//! each correction for the fix alone: RFC 6902 operations through the tool
//! `patch_output`, applied to the previous output and validated whole with
//! all three layers. The default is [`Corrections::Full`](crate::Corrections::Full):
//! the whole object again.
//!
//! ```
//! # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
//! # #[check(total > 0)]
//! # struct Receipt { vendor: String, total: f64 }
//! use extract::{Corrections, Extractor, testing::Scripted};
//! use serde_json::json;
//!
//! let model = Scripted::new([
//!     json!({"vendor": "Café Aurora", "total": -7.5}),
//!     json!({"patch": [{"op": "replace", "path": "/total", "value": 7.5}]}),
//! ]);
//! let outcome = Extractor::new(model.clone())
//!     .corrections(Corrections::Patch)
//!     .extract_blocking::<Receipt>("Café Aurora\nTotal 7.50")?;
//! assert_eq!(outcome.valid().unwrap().value().total, 7.5);
//! assert_eq!(model.prompts()[1].tool.name, "patch_output");
//! # Ok::<(), extract::Error>(())
//! ```
