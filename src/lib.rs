#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
//! Trustworthy LLM extraction: derive a tool definition, semantic checks and
//! recoverability rules from a Rust struct, then let a small runtime retry
//! with exact feedback or escalate to a human.
//!
//! `use extract::Extractable;` names both the trait and the derive. The
//! README has the tour; ARCHITECTURE.md the layout.
//!
//! The root holds what a program writes; the rest lives in modules named
//! for a concept: [`guide`] (the derive's attributes and check language,
//! and a page per topic: the retry loop, bulk runs, evaluation, ...),
//! [`model`] (what a backend author needs), [`cost`] (prices
//! and what calls cost), [`run`] (the
//! sans-IO retry policy and its parts), [`journal`], [`bulk`], [`report`],
//! [`eval`], [`testing`], and behind their features [`anthropic`],
//! [`openai`] and [`desk`].
//!
//! # Features
//!
//! - `anthropic` (default): the Claude backend, [`anthropic::Client`], with Message Batches.
//! - `sqlite` (default): the journal in an embedded SQLite database ([`Journal::sqlite`]).
//! - `openai`: the OpenAI-compatible backend, [`openai::Client`].
//! - `postgres`: the journal on PostgreSQL, shared by many worker processes.
//! - `chrono`, `decimal`: dates and exact amounts in checks and schemas.
//! - `desk`: the review desk, an HTTP server over an SQLite journal.
//! - `otel`: traces and metrics over OTLP in one call ([`telemetry::init_otlp`]).
//!
//! Without default features nothing compiles an HTTP client or SQLite:
//! validation, the retry loop, `Bulk` without a journal, and a backend of
//! your own.
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

pub use extract_core::run::review::review;
/// The attributes and the check language are in the [`guide`]: every
/// attribute, function, operator and option, with examples.
/// Long documents, window by window (the window of a text: [`run::Window`]).
pub use extract_core::run::windows::Windows;
pub use extract_core::validate::validate;
pub use extract_core::{
    Code, Corrections, Document, Escalation, Extractable, FieldPath, Layer, Outcome, Partial, Reason,
    Retries, Source, Sourced, Stats, Tool, Usage, Validated, Violation, Violations, leaf,
};
pub use extract_derive::Extractable;
pub use extract_drive::{Bulk, BulkReport, Error, ErrorKind, Event, Extractor, Journal};

mod from_env;
pub mod guide;
pub mod telemetry;

/// What `#[derive(Extractable)]` and the check language require of your
/// types, as the traits and functions their compile errors name. You never
/// write these: an error that names one says what a field or an operand
/// lacks (`Number`: it is not a number; `Hop`: a check path cannot step
/// into it; `ObjectRoot`: its JSON is not always an object; `Audited`: the
/// derive does not know the type, so `extract::leaf!` it or derive it).
/// They are re-exported here so that rustc names them by this path.
pub mod requirements {
    /// The schema trait every extracted type derives (from `schemars`).
    pub use extract_core::__private_v2::schemars::JsonSchema;
    pub use extract_core::__private_v2::{
        Anchored, Audited, Compare, Computed, Hop, IsMany, IsOne, Many, Meet, NotAnObject, Number,
        ObjectContent, ObjectRoot, One, StepHop, Stop, Sum, Summable, compare, kind, require_anchored,
        require_extractable, require_hop, require_many, require_object_content,
    };
}

/// What calls cost, in US dollars: [`Prices`](cost::Prices) per million
/// tokens, a model's [`Rate`](cost::Rate), and the
/// [`PriceTable`](cost::PriceTable) of models (Claude's, dated, by
/// default). An outcome's [`cost`](Outcome::cost) comes from them.
pub mod cost {
    pub use extract_core::cost::{PriceTable, Prices, Rate};
}

/// What a model backend needs: the [`Model`](model::Model) trait, the
/// [`Prompt`](model::Prompt) it is sent (its blocks), and the
/// [`Reply`](model::Reply) it answers with; and
/// [`FromEnv`](model::FromEnv), for the backend the environment names
/// (`Extractor::from_env()`).
pub mod model {
    pub use crate::from_env::FromEnv;
    pub use extract_core::run::{Block, BlockKind, Prompt, Windowed};
    pub use extract_core::schema::StrictError;
    pub use extract_core::vocabulary::{Content, Reply, ReplyContent, Truncation};
    pub use extract_drive::{Chunk, ChunkStream, Model, ModelFuture};
}

/// The retry policy without I/O: a [`Run`](run::Run) builds each attempt's
/// prompt and judges each reply, for drivers of your own; the parts of an
/// escalation, the statistics' details, and the patch corrections' tool.
pub mod run {
    pub use extract_core::run::{
        Correction, Dominant, FEEDBACK_PER_FINGERPRINT, Facts, FailedAttempt, ModelSpend, Next, PATCH_TOOL,
        ParetoRow, Part, RetriesError, Run, SYSTEM_INSTRUCTIONS, Spend, Window, apply_patch, patch_tool,
    };
    pub use extract_core::vocabulary::{Fingerprint, Segment, quote_prefix};
}

/// A run's memory, read back: its summary, reviews and decisions, and
/// what can be wrong with a journal ([`JournalProblem`](journal::JournalProblem),
/// in an [`Error::Journal`]). [`Journal`] itself is at the root.
pub mod journal {
    pub use extract_drive::journal::{JournalProblem, JournalSummary, Review, ReviewDecision};
}

/// Many documents through one extractor: [`Bulk`] and
/// [`BulkReport`] are at the root; its progress and the rate limits it
/// paces requests by ([`Bulk::pace`], [`Bulk::limits`]) are here.
pub mod bulk {
    pub use extract_drive::bulk::Progress;
    pub use extract_drive::pace::Limits;
}

/// Streaming: what is known of a model's output while it arrives.
/// [`Extractor::stream`] gives [`Event`]s; each [`Event::Partial`] holds a
/// [`Snapshot`](stream::Snapshot): the output so far and the
/// [`PathState`](stream::PathState) of each path.
/// [`PartialJson`](stream::PartialJson) reads a model's JSON chunk by chunk
/// and says which values are finished; [`judge`](stream::judge()) says what
/// a prefix already decides: the violations no later output can change,
/// and the paths that are finished and pass every check that reads them.
pub mod stream {
    pub use extract_core::stream::{Judgement, PartialJson, PathState, ReadError, Snapshot, judge};
    pub use extract_drive::EventStream;
}

/// The HTML report of a run: statistics, escalations, reviewer corrections.
pub mod report {
    pub use extract_inspect::Report;
}

pub use extract_drive::testing;
pub use extract_inspect::eval;

#[cfg(feature = "desk")]
#[cfg_attr(docsrs, doc(cfg(feature = "desk")))]
pub use extract_inspect::desk;

#[cfg(feature = "anthropic")]
#[cfg_attr(docsrs, doc(cfg(feature = "anthropic")))]
pub use extract_anthropic as anthropic;

#[cfg(feature = "openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
pub use extract_openai as openai;

#[doc(hidden)]
pub use extract_core::__private_v2;
