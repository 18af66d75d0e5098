//! Evaluation against labelled documents: how often what the loop accepted
//! was right.
//!
//! [`Stats`](crate::Stats) counts what the loop did; an [`Evaluation`] runs
//! an [`Extractor`] over [`Case`]s (a document and the expected JSON of the
//! type, `null` where the source lacks the datum) and scores every field
//! and every document with one of four [`Verdict`]s:
//!
//! - `correct`: valid, and equal to the truth;
//! - `wrong_accepted`: valid, and different from the truth (an invented
//!   value for a `null` truth counts here too): the figure that matters;
//! - `escalated_present`: escalated although the truth holds a value;
//! - `escalated_absent`: escalated, and the truth is `null`.
//!
//! In an escalated document every field counts as escalated, present or
//! absent by its truth (held fields included); the document is
//! `escalated_absent` when its truth is `null` for at least one required
//! field. A field's four counts add up to the number of cases. Fields are
//! keyed by their JSON path as the model sees them (`"total"`,
//! `"vendor.name"`); an array is one field compared whole unless
//! [`Evaluation::items`] pairs its items with the truth's (by position or
//! by a key), and then each item field is scored too (`"line_items[].amount"`:
//! right when every truth item's value is). A `Sourced` field is scored on
//! its `value`; its truth may be the value alone.
//!
//! [`Comparison`] sets two scorecards of the same cases side by side.
//!
//! ```
//! use extract::eval::{Case, Evaluation};
//! use extract::{Document, Extractable, Extractor, testing::Scripted};
//! use serde_json::json;
//!
//! #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! struct Receipt { vendor: String, total: f64 }
//!
//! let cases = vec![
//!     Case::new(Document::text("ACME, total 12.50").with_id("r-1"), json!({"vendor": "ACME", "total": 12.5})),
//!     Case::new(Document::text("Bolt Ltd, total 8").with_id("r-2"), json!({"vendor": "Bolt Ltd", "total": 8})),
//! ];
//! // A model that gets the second total wrong, and is believed.
//! let model = Scripted::new([json!({"vendor": "ACME", "total": 12.5}), json!({"vendor": "Bolt Ltd", "total": 80})]);
//! // Blocking: the evaluation makes its own runtime.
//! let report = Evaluation::new(Extractor::new(model)).run_blocking::<Receipt>(cases)?;
//! assert_eq!(report.fields["vendor"].correct, 2);
//! assert_eq!(report.fields["total"].wrong_accepted, 1);
//! assert_eq!((report.documents.correct, report.documents.wrong_accepted), (1, 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! In async code, `.run::<T>(cases).await`. A runtime of your own needs its
//! I/O and timer drivers for a real backend (`enable_all`): a runtime built
//! without them runs the scripted model but panics at a client's first
//! request ("timers are disabled").
//!
//! ```no_run
//! # #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
//! # struct Receipt { vendor: String, total: f64 }
//! use extract::{Extractor, eval::{self, Evaluation}};
//!
//! let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
//! let cases = eval::load::<Receipt>("examples/corpus")?;
//! let client = extract::anthropic::Client::from_env()?; // ANTHROPIC_API_KEY
//! let card = runtime.block_on(Evaluation::new(Extractor::new(client)).run::<Receipt>(cases))?;
//! println!("{card}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod compare;
mod corpus;
mod plan;
mod score;

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use compare::{Comparison, Paired};
pub use corpus::load;
pub use score::{CaseScore, Counts, Equal, Match, Rule, Verdict};

use crate::{Document, Error, Extractable, Extractor, Model, Outcome, Usage};

/// One labelled document: the document and the JSON a right extraction of
/// it gives (`null` for every datum the source lacks).
#[derive(Debug, Clone)]
pub struct Case {
    /// The document (its id names the case in every result and error).
    pub document: Document,
    /// The expected JSON of the type, in the names the model sees.
    pub expected: Value,
}

impl Case {
    /// A case of `document` whose right extraction is `expected`.
    pub fn new(document: impl Into<Document>, expected: Value) -> Case {
        Case { document: document.into(), expected }
    }

    /// The case's name: its document's id.
    pub fn id(&self) -> String {
        self.document.id().into_owned()
    }
}

/// Prices per million tokens: [`extract::cost::Prices`](extract_core::cost::Prices), kept here by
/// its earlier name.
pub use extract_core::cost::Prices;

/// An extractor, configured to be scored: its label, comparison rules per
/// field, how arrays' items pair with the truth's, and prices.
pub struct Evaluation<M> {
    extractor: Extractor<M>,
    label: String,
    rules: BTreeMap<String, Rule>,
    matches: BTreeMap<String, Match>,
    prices: Option<Prices>,
}

impl<M: Model> Evaluation<M> {
    /// An evaluation of `extractor`, labelled "A", with the default rules.
    pub fn new(extractor: Extractor<M>) -> Evaluation<M> {
        Evaluation {
            extractor,
            label: "A".to_string(),
            rules: BTreeMap::new(),
            matches: BTreeMap::new(),
            prices: None,
        }
    }

    /// The name this configuration goes by in tables and comparisons.
    pub fn label(mut self, label: impl Into<String>) -> Evaluation<M> {
        self.label = label.into();
        self
    }

    /// Compares the field at `path` (its JSON path, as in the scorecard)
    /// with `rule` instead of its kind's default.
    pub fn rule(mut self, path: impl Into<String>, rule: Rule) -> Evaluation<M> {
        self.rules.insert(path.into(), rule);
        self
    }

    /// Pairs the items of the array at `path` with the truth's, so that each
    /// item field is scored (`"{path}[].{field}"`); the array itself is then
    /// right when every truth item has its pair and there are no others.
    pub fn items(mut self, path: impl Into<String>, how: Match) -> Evaluation<M> {
        self.matches.insert(path.into(), how);
        self
    }

    /// Prices per million tokens for the scorecard's cost, in place of the
    /// outcomes' own costs (the extractor's [price table](Extractor::prices)).
    pub fn prices(mut self, prices: Prices) -> Evaluation<M> {
        self.prices = Some(prices);
        self
    }

    /// Runs the extractor over `cases`, one after the other, and scores
    /// them. `Err` before any model call when a case's expected JSON does
    /// not fit `T` or a rule names no field (the error names the case and
    /// the field); `Err` when a model call fails (transport).
    pub async fn run<T>(&self, cases: Vec<Case>) -> Result<Scorecard, Error>
    where
        T: Extractable + Serialize + Send + 'static,
    {
        self.run_all::<T>(cases).await
    }

    /// [`run`](Evaluation::run), blocking, on a runtime of its own: for
    /// programs without an async runtime. `Err` (configuration) when called
    /// inside one, where `.run(..).await` is the call.
    pub fn run_blocking<T>(&self, cases: Vec<Case>) -> Result<Scorecard, Error>
    where
        T: Extractable + Serialize + Send + 'static,
    {
        extract_drive::blocking::block_on(
            "a blocking evaluation",
            ".run(..).await",
            self.run_all::<T>(cases),
        )?
    }

    async fn run_all<T>(&self, cases: Vec<Case>) -> Result<Scorecard, Error>
    where
        T: Extractable + Serialize + Send + 'static,
    {
        let schema = T::tool().input_schema;
        check_cases(&cases, &schema, std::any::type_name::<T>())?;
        let fields = plan::fields(&schema, &self.matches);
        for path in self.rules.keys().chain(self.matches.keys()) {
            if !fields.iter().any(|f| &f.path == path) {
                let known: Vec<&str> = fields.iter().map(|f| f.path.as_str()).collect();
                return Err(Error::config(format!(
                    "evaluation `{}`: no field `{path}` to give a rule to (the fields: {})",
                    self.label,
                    known.join(", ")
                )));
            }
        }
        let started = Instant::now();
        let mut card = Scorecard {
            label: self.label.clone(),
            fields: fields.iter().map(|f| (f.path.clone(), Counts::default())).collect(),
            documents: Counts::default(),
            cases: Vec::with_capacity(cases.len()),
            calls: 0,
            usage: Usage::default(),
            cost: None,
            wall: Duration::ZERO,
        };
        // The outcomes' own costs, summed; `None` once one had no price.
        let mut priced = Some(0.0);
        for case in cases {
            let id = case.id();
            let outcome = self.extractor.extract::<T>(case.document).await?;
            let output = match &outcome {
                Outcome::Valid(valid) => Some(serde_json::to_value(valid.value()).map_err(|e| {
                    Error::config(format!("case {id}: the valid value does not serialize: {e}"))
                })?),
                Outcome::Escalated(_) => None,
            };
            let (verdict, verdicts) =
                score::score_case(&fields, &self.rules, &self.matches, output.as_ref(), &case.expected);
            card.documents.add(verdict);
            for (path, field_verdict) in &verdicts {
                card.fields.entry(path.clone()).or_default().add(*field_verdict);
            }
            card.calls += u64::from(outcome.attempts());
            card.usage += outcome.usage();
            priced = priced.zip(outcome.cost()).map(|(sum, cost)| sum + cost);
            card.cases.push(CaseScore {
                id,
                verdict,
                reason: outcome.escalation().map(|e| e.reason),
                fingerprints: last_fingerprints(&outcome),
                fields: verdicts,
                attempts: outcome.attempts(),
                usage: outcome.usage(),
            });
        }
        card.cost = match self.prices {
            Some(prices) => Some(prices.cost(card.usage)),
            None => priced,
        };
        card.wall = started.elapsed();
        Ok(card)
    }
}

/// The distinct fingerprints of an escalation's last violations, in order.
fn last_fingerprints<T>(outcome: &Outcome<T>) -> Vec<String> {
    let mut fingerprints: Vec<String> = Vec::new();
    for violation in outcome.escalation().and_then(|e| e.last_violations()).into_iter().flat_map(|v| v.iter())
    {
        let fingerprint = violation.fingerprint().to_string();
        if !fingerprints.contains(&fingerprint) {
            fingerprints.push(fingerprint);
        }
    }
    fingerprints
}

/// Refuses, naming the case and the field, the first case whose expected
/// JSON does not fit the schema of `type_name`.
fn check_cases(cases: &[Case], schema: &Value, type_name: &str) -> Result<(), Error> {
    let short = type_name.rsplit("::").next().unwrap_or(type_name);
    for case in cases {
        if let Some(why) = plan::misfit(&case.expected, schema) {
            return Err(Error::config(format!(
                "case {}: the expected JSON does not fit {short}: {why}",
                case.id()
            )));
        }
    }
    Ok(())
}

/// What the accuracy column counts, as the scorecard and the report say it.
pub const ACCURACY: &str = "accuracy: the share of cases the loop got right, correct values plus rightly \
                            escalated ones (escalated, and the truth lacks the value)";

/// What an evaluation found: counts per field and per document, each
/// case's verdicts, and what the run cost.
///
/// Its accuracy is the share of cases the loop got *right*: a correct value,
/// or an escalation of a value the truth lacks (`escalated_absent`: sending
/// to a person what the source does not hold is the right outcome). A wrong
/// value accepted, and an escalation of a value the truth holds, are not.
/// An array of items paired by a key or position ([`Evaluation::items`]) is
/// right only when every truth item has its pair, there are no others, and
/// every scored field of every pair is right.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scorecard {
    /// The configuration's label.
    pub label: String,
    /// Per field, by JSON path.
    pub fields: BTreeMap<String, Counts>,
    /// Per document.
    pub documents: Counts,
    /// Each case, in the order run.
    pub cases: Vec<CaseScore>,
    /// Model calls, every attempt of every case.
    pub calls: u64,
    /// Tokens, summed.
    pub usage: Usage,
    /// What the tokens cost in US dollars: at [`Evaluation::prices`] when
    /// given, else the outcomes' own costs summed (`None` when the model has
    /// no price).
    pub cost: Option<f64>,
    /// Wall time of the run.
    pub wall: Duration,
}

impl Scorecard {
    /// The fields with at least one value accepted but wrong, most first:
    /// where to look first.
    pub fn wrong_fields(&self) -> Vec<(&str, usize)> {
        let mut wrong: Vec<(&str, usize)> = self
            .fields
            .iter()
            .filter(|(_, c)| c.wrong_accepted > 0)
            .map(|(f, c)| (f.as_str(), c.wrong_accepted))
            .collect();
        wrong.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        wrong
    }
}

impl fmt::Display for Scorecard {
    /// A text table: the documents' counts, then one row per field.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} cases, {} calls, {} input + {} output tokens ({} cache read, {} cache write)",
            self.label,
            self.cases.len(),
            self.calls,
            self.usage.input_tokens,
            self.usage.output_tokens,
            self.usage.cache_read_tokens,
            self.usage.cache_write_tokens
        )?;
        if let Some(cost) = self.cost {
            write!(f, ", cost ${cost:.4}")?;
        }
        writeln!(f, ", {:.2} s", self.wall.as_secs_f64())?;
        let width = self.fields.keys().map(String::len).max().unwrap_or(0).max("documents".len());
        writeln!(
            f,
            "{:<width$}  {:>7}  {:>14}  {:>17}  {:>16}  {:>8}",
            "", "correct", "wrong_accepted", "escalated_present", "escalated_absent", "accuracy"
        )?;
        let row = |f: &mut fmt::Formatter<'_>, name: &str, c: &Counts| {
            writeln!(
                f,
                "{:<width$}  {:>7}  {:>14}  {:>17}  {:>16}  {:>7.1}%",
                name,
                c.correct,
                c.wrong_accepted,
                c.escalated_present,
                c.escalated_absent,
                c.accuracy() * 100.0
            )
        };
        row(f, "documents", &self.documents)?;
        for (name, counts) in &self.fields {
            row(f, name, counts)?;
        }
        writeln!(f, "{ACCURACY}")
    }
}
