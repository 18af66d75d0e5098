//! What a run ends with: [`Outcome`], either [`Validated`] or an
//! [`Escalation`] with the [`Partial`] result a reviewer can trust.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_json::{Map, Value};

use super::windows::Part;
use crate::{Segment, Source, Usage, Violation, Violations};

/// The end of one extraction: a value that passed every layer, or an
/// escalation to a human with everything needed to judge it.
///
/// Not `#[non_exhaustive]`: match on it exhaustively, so a failed output can
/// never slip downstream as if it were valid.
///
/// Serializes to the packets the wider world expects:
/// `{"status":"ok","output":...,"attempts":N,"model":...,"cost":...}` (with
/// `"sources"` for a type with `Sourced` values, `"reviewed": true` for a
/// reviewer's fix) and
/// `{"status":"escalated","reason":...,"error_chain":[...],"last_output":...,"fix_hint":...,"model":...,"cost":...,"partial":...}`,
/// where each entry of `error_chain` has its `attempt`, its `violations`
/// (with the `fields` each names and, for a check, the `check`), its
/// `usage`, the `model` that answered and, when it has a price, its
/// `cost`. `model` is the model's name
/// (`Model::name`; in a ladder of models, the one that answered last),
/// left out when the run was not told it. `cost` is in US dollars, `null` when the model has no price;
/// `last_output` and `fix_hint` are `null` when empty. Both, exactly:
///
/// ```
/// use extract::cost::{PriceTable, Prices};
/// use extract::{Extractor, Retries, Sourced, Usage, model::Reply, testing::Scripted};
/// use serde_json::json;
///
/// /// Record a receipt.
/// #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
/// #[check(total > 0)]
/// struct Receipt {
///     number: Sourced<String>,
///     total: f64,
/// }
///
/// let prices = PriceTable::new().with("scripted", Prices::per_million(3.0, 15.0, 0.3, 3.75));
/// let answer = |total: f64| {
///     let input = json!({"number": {"value": "R-1", "quote": "Receipt R-1"}, "total": total});
///     Reply::tool_call(input).with_usage(Usage::new(1_000, 100))
/// };
/// let extractor = |replies| Extractor::new(Scripted::new(replies)).prices(prices.clone()).retries(Retries::new(1).unwrap());
/// let document = "Receipt R-1\nTotal 4.50";
///
/// let valid = extractor(vec![answer(4.5)]).extract_blocking::<Receipt>(document)?;
/// assert_eq!(serde_json::to_value(&valid)?, json!({
///     "status": "ok",
///     "output": {"number": {"value": "R-1", "quote": "Receipt R-1"}, "total": 4.5},
///     "attempts": 1,
///     "model": "scripted",
///     "cost": 0.0045,
///     "sources": [{"path": "number", "quote": "Receipt R-1", "start": 0, "end": 11, "page": null, "verified": true}]
/// }));
///
/// let escalated = extractor(vec![answer(-4.5), answer(-4.5)]).extract_blocking::<Receipt>(document)?;
/// let violation = json!({
///     "layer": "semantic", "code": "check_failed", "path": "total", "fields": ["total"],
///     "message": "check failed: total > 0: total = -4.50", "recoverable": true, "check": "total > 0"
/// });
/// let usage = json!({"input_tokens": 1000, "output_tokens": 100, "cache_read_tokens": 0, "cache_write_tokens": 0});
/// assert_eq!(serde_json::to_value(&escalated)?, json!({
///     "status": "escalated",
///     "reason": "systematic",
///     "error_chain": [
///         {"attempt": 1, "violations": [violation], "usage": usage, "model": "scripted", "cost": 0.0045},
///         {"attempt": 2, "violations": [violation], "usage": usage, "model": "scripted", "cost": 0.0045}
///     ],
///     "last_output": {"number": {"value": "R-1", "quote": "Receipt R-1"}, "total": -4.5},
///     "fix_hint": "the check `total > 0` on `total` keeps failing: review the check and the field (tolerance, \
///                  rounding, whether the source states these values consistently); tag the check recoverable = \
///                  false if documents may legitimately break it",
///     "model": "scripted",
///     "cost": 0.009,
///     "partial": {
///         "held": {"number": {"value": "R-1", "quote": "Receipt R-1"}},
///         "failed": {"total": ["check failed: total > 0: total = -4.50"]}
///     }
/// }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// ```
/// use extract::{Code, FieldPath, Layer, Extractor, Outcome, Retries, Tool, Violations, Violation};
/// use extract::testing::Scripted;
/// use serde_json::{json, Value};
///
/// let tool = Tool {
///     name: "record_total".into(),
///     description: "Record the total.".into(),
///     input_schema: json!({"type": "object"}),
///     strict: false,
/// };
/// fn total(output: &Value, _document: &str) -> Result<f64, Violations> {
///     // A validator rejects what it cannot read: a missing total is not 0.0.
///     output["total"].as_f64().ok_or_else(|| {
///         let at = FieldPath::root().key("total");
///         Violations::one(Violation::new(Layer::Structure, Code::INVALID_TYPE, at, "expected a number"))
///     })
/// }
/// let model = Scripted::new([json!({"total": 12.5})]);
/// let outcome = Extractor::new(model)
///     .retries(Retries::new(1)?)
///     .extract_with_blocking(tool, "Total: 12.50", total)?;
/// match outcome {
///     Outcome::Valid(v) => assert_eq!(*v.value(), 12.5),
///     Outcome::Escalated(e) => panic!("escalated: {e}"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
// The escalation is held by value, as the public contract says (`Outcome::Escalated(e)`
// gives an `Escalation`); an outcome is made once per extraction, so its size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Outcome<T> {
    /// Every layer passed.
    Valid(Validated<T>),
    /// The run stopped without a valid output; a human has to look.
    Escalated(Escalation),
}

impl<T> Outcome<T> {
    /// Whether the output is valid.
    pub fn is_valid(&self) -> bool {
        matches!(self, Outcome::Valid(_))
    }

    /// The validated value, if any.
    pub fn valid(&self) -> Option<&Validated<T>> {
        match self {
            Outcome::Valid(v) => Some(v),
            Outcome::Escalated(_) => None,
        }
    }

    /// The escalation, if any.
    pub fn escalation(&self) -> Option<&Escalation> {
        match self {
            Outcome::Valid(_) => None,
            Outcome::Escalated(e) => Some(e),
        }
    }

    /// The number of model calls the run made.
    pub fn attempts(&self) -> u32 {
        match self {
            Outcome::Valid(v) => v.attempts(),
            Outcome::Escalated(e) => e.attempts(),
        }
    }

    /// Tokens spent over every attempt.
    pub fn usage(&self) -> Usage {
        match self {
            Outcome::Valid(v) => v.usage(),
            Outcome::Escalated(e) => e.usage,
        }
    }

    /// What every attempt cost in US dollars, at the prices of the model
    /// that answered ([`cost::PriceTable`](crate::cost::PriceTable));
    /// `None` when that model has no price.
    pub fn cost(&self) -> Option<f64> {
        match self {
            Outcome::Valid(v) => v.cost(),
            Outcome::Escalated(e) => e.cost,
        }
    }

    /// The model that answered last (`Model::name`), when the run was told.
    pub fn model(&self) -> Option<&str> {
        match self {
            Outcome::Valid(v) => v.model(),
            Outcome::Escalated(e) => e.model.as_deref(),
        }
    }

    /// The rung of the ladder of models that settled it (0: the first model).
    pub fn rung(&self) -> u32 {
        match self {
            Outcome::Valid(v) => v.rung(),
            Outcome::Escalated(e) => e.rung,
        }
    }

    /// The outcome of a later rung of a ladder of models, with what the
    /// rungs before it tried (`earlier`: their escalations, merged) put in
    /// front: their failed attempts, their tokens and their cost. For the
    /// drivers that climb a ladder.
    pub fn after_rungs(self, earlier: Escalation) -> Outcome<T> {
        let cost = |later: Option<f64>| later.zip(earlier.cost).map(|(a, b)| a + b);
        match self {
            Outcome::Valid(mut v) => {
                let mut usage: Vec<Usage> = earlier.calls();
                usage.append(&mut v.attempt_usage);
                v.attempt_usage = usage;
                v.attempts = u32::try_from(v.attempt_usage.len()).unwrap_or(u32::MAX);
                let mut chain = earlier.error_chain.clone();
                chain.append(&mut v.corrections);
                v.corrections = chain;
                v.cost = cost(v.cost);
                Outcome::Valid(v)
            }
            Outcome::Escalated(mut e) => {
                if !e.call_usage.is_empty() || !earlier.call_usage.is_empty() {
                    let mut calls = earlier.calls();
                    calls.append(&mut e.calls());
                    e.call_usage = calls;
                }
                let mut chain = earlier.error_chain.clone();
                chain.append(&mut e.error_chain);
                e.error_chain = chain;
                e.usage += earlier.usage;
                e.cost = cost(e.cost);
                Outcome::Escalated(e)
            }
        }
    }

    /// `Ok` with the validated value, `Err` with the escalation (boxed; it is
    /// an `std::error::Error`, so `?` works).
    pub fn into_result(self) -> Result<Validated<T>, Box<Escalation>> {
        match self {
            Outcome::Valid(v) => Ok(v),
            Outcome::Escalated(e) => Err(Box::new(e)),
        }
    }
}

impl<T: Serialize> Serialize for Outcome<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Outcome::Valid(v) => v.serialize(s),
            Outcome::Escalated(e) => e.serialize(s),
        }
    }
}

/// A value that passed its run's validator.
///
/// Only a [`Run`](crate::Run) builds one, from the `Ok` of the validator it
/// was given: its fields are private and it has no public constructor. What
/// that proves depends on the validator. For a derived type
/// (`Extractor::extract`, [`Run::for_type`](crate::Run::for_type))
/// it is [`validate::<T>`](fn@crate::validate): the reply was a call of the tool,
/// the input matched `T`'s schema, and every `#[check]` and `Sourced` quote
/// held. For a caller's own validator (`extract_with`, [`Run::new`](crate::Run::new)) it
/// proves only that this validator returned `Ok` for the reply's input; a
/// validator that accepts what it cannot read accepts it here too.
#[derive(Debug, Clone)]
pub struct Validated<T> {
    value: T,
    attempts: u32,
    attempt_usage: Vec<Usage>,
    corrections: Vec<FailedAttempt>,
    /// `None` when the validator knows of no `Sourced` values.
    sources: Option<Vec<Source>>,
    /// Whether a human's fix made it valid ([`review`](fn@crate::review)).
    reviewed: bool,
    /// What the attempts cost in US dollars; `None` without prices.
    cost: Option<f64>,
    /// The model that answered, and its rung in a ladder of models.
    model: Option<String>,
    rung: u32,
}

impl<T> Validated<T> {
    /// Built by the retry policy once the validator accepted `value`.
    pub(crate) fn new(
        value: T,
        attempt_usage: Vec<Usage>,
        corrections: Vec<FailedAttempt>,
        sources: Option<Vec<Source>>,
    ) -> Validated<T> {
        let attempts = u32::try_from(attempt_usage.len()).unwrap_or(u32::MAX).max(1);
        Validated {
            value,
            attempts,
            attempt_usage,
            corrections,
            sources,
            reviewed: false,
            cost: None,
            model: None,
            rung: 0,
        }
    }

    /// The same value, answered by `model` on rung `rung` of a ladder.
    pub(crate) fn answered_by(mut self, model: Option<String>, rung: u32) -> Validated<T> {
        self.model = model;
        self.rung = rung;
        self
    }

    /// The model that answered (`Model::name`), when the run was told.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The rung of the ladder of models that answered (0: the first model).
    pub fn rung(&self) -> u32 {
        self.rung
    }

    /// The same value, with what its attempts cost.
    pub(crate) fn with_cost(mut self, cost: Option<f64>) -> Validated<T> {
        self.cost = cost;
        self
    }

    /// The same value, made valid by a reviewer's fix.
    pub(crate) fn reviewed_by_a_human(mut self) -> Validated<T> {
        self.reviewed = true;
        self
    }

    /// Whether a human's fix made it valid, through [`review`](fn@crate::review)
    /// (held to the same three layers as a model's answer).
    pub fn reviewed(&self) -> bool {
        self.reviewed
    }

    /// One [`Source`] per `Sourced` value of the output, in the order the
    /// walk met them: its path, its quote, and the byte range of the quote
    /// in the document's text (`None` when it could not be verified: a PDF
    /// without a text layer). Empty for a type without `Sourced` values.
    pub fn sources(&self) -> &[Source] {
        self.sources.as_deref().unwrap_or_default()
    }

    /// The validated value.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// The validated value, by value.
    pub fn into_inner(self) -> T {
        self.value
    }

    /// The number of model calls it took, the successful one included (1 = first try).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Tokens spent over every attempt.
    pub fn usage(&self) -> Usage {
        self.attempt_usage.iter().copied().sum()
    }

    /// What every attempt cost in US dollars; `None` when the model has no price.
    pub fn cost(&self) -> Option<f64> {
        self.cost
    }

    /// Tokens spent by each attempt, oldest first.
    pub fn attempt_usage(&self) -> &[Usage] {
        &self.attempt_usage
    }

    /// The attempts that failed before the valid one, oldest first (empty
    /// when the first attempt was valid). Kept for statistics and review.
    pub fn failed_attempts(&self) -> &[FailedAttempt] {
        &self.corrections
    }
}

impl<T: Serialize> Serialize for Validated<T> {
    /// `{"status":"ok","output":...,"attempts":N,"cost":usd|null}`, and
    /// `"sources": [...]` for a type with `Sourced` values (shown whole on [`Outcome`]).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut packet = s.serialize_struct("Validated", 6)?;
        packet.serialize_field("status", "ok")?;
        packet.serialize_field("output", &self.value)?;
        packet.serialize_field("attempts", &self.attempts)?;
        if let Some(model) = &self.model {
            packet.serialize_field("model", model)?;
        }
        packet.serialize_field("cost", &self.cost)?;
        if let Some(sources) = &self.sources {
            packet.serialize_field("sources", sources)?;
        }
        if self.reviewed {
            packet.serialize_field("reviewed", &true)?;
        }
        packet.end()
    }
}

/// Why a run was escalated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A violation no feedback can fix: the datum is absent from the source,
    /// the model refused, the output was cut off, or a validator panicked.
    NotRecoverable,
    /// The same violation in two consecutive attempts: a defect of the schema
    /// or the prompt, not noise.
    Systematic,
    /// The retry or token budget ran out while violations kept changing.
    BudgetExhausted,
}

impl Reason {
    /// Every reason, in declaration order.
    pub const ALL: [Reason; 3] = [Reason::NotRecoverable, Reason::Systematic, Reason::BudgetExhausted];

    /// The snake_case name used in packets: `"not_recoverable"`, `"systematic"`, `"budget_exhausted"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::NotRecoverable => "not_recoverable",
            Reason::Systematic => "systematic",
            Reason::BudgetExhausted => "budget_exhausted",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One attempt that failed validation.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct FailedAttempt {
    /// The attempt number, 1-based.
    pub attempt: u32,
    /// Every violation of the layer that failed.
    pub violations: Violations,
    /// Tokens this attempt spent.
    pub usage: Usage,
    /// The operations of a patch correction, as the model sent them
    /// (serialized under `"patch"`, only when there is one): the attempt's
    /// output is the previous output with them applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<Value>,
    /// The model that answered (serialized under `"model"` when known): in
    /// a ladder of models, which rung the attempt was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What this attempt cost in US dollars (serialized under `"cost"`
    /// when known), at its model's prices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// In a windowed extraction, the part the attempt was about
    /// (serialized under `"window"`: the window's number, `null` for the
    /// whole; absent without windows). Its `attempt` counts within that part.
    #[serde(rename = "window", skip_serializing_if = "Option::is_none", serialize_with = "window_number")]
    pub part: Option<Part>,
}

/// A part as an error chain names it: a window's number, `null` for the whole.
fn window_number<S: Serializer>(part: &Option<Part>, s: S) -> Result<S::Ok, S::Error> {
    part.and_then(Part::window).serialize(s)
}

impl FailedAttempt {
    /// A failed attempt (for backends and drivers outside the crate that build their own chains).
    pub fn new(attempt: u32, violations: Violations, usage: Usage) -> FailedAttempt {
        FailedAttempt { attempt, violations, usage, patch: None, model: None, cost: None, part: None }
    }

    /// The same attempt, made in `part` of a windowed extraction.
    pub fn in_part(mut self, part: Part) -> FailedAttempt {
        self.part = Some(part);
        self
    }

    /// The same attempt, costing `cost` US dollars (`None`: no price known).
    pub fn with_cost(mut self, cost: Option<f64>) -> FailedAttempt {
        self.cost = cost;
        self
    }

    /// The same attempt, answered by `model`.
    pub fn with_model(mut self, model: Option<String>) -> FailedAttempt {
        self.model = model;
        self
    }

    /// The same attempt, made by the patch `patch` (`None`: a full answer).
    pub fn with_patch(mut self, patch: Option<Value>) -> FailedAttempt {
        self.patch = patch;
        self
    }
}

/// A run that ended without a valid output, with what a reviewer needs: why,
/// every failed attempt, the last output and, where one is known, the fix.
///
/// Serializes to
/// `{"status":"escalated","reason":...,"error_chain":[...],"last_output":...,"fix_hint":...,"cost":...,"partial":...}`;
/// `last_output`, `fix_hint` and `cost` are `null` when empty or unknown.
/// Each `error_chain` entry carries its attempt's `usage`; the total is
/// [`usage`](Escalation::usage), on the value only. The whole packet is
/// shown, and tested, on [`Outcome`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Escalation {
    /// Why the run stopped.
    pub reason: Reason,
    /// One entry per failed attempt, oldest first.
    pub error_chain: Vec<FailedAttempt>,
    /// The last attempt's output: the tool input when it was JSON, otherwise
    /// the raw text the model sent (text, unparsable input, a refusal's words,
    /// the partial output of a truncated reply) as a JSON string; `None` when
    /// there was nothing.
    pub last_output: Option<Value>,
    /// What would fix the cause, in the schema's or the run's terms.
    pub fix_hint: Option<String>,
    /// Tokens spent over every attempt.
    pub usage: Usage,
    /// What every attempt cost in US dollars; `None` when the model has no price.
    pub cost: Option<f64>,
    /// The model that answered last (`Model::name`), when the run was told.
    pub model: Option<String>,
    /// The rung of the ladder of models that answered last (0: the first model).
    pub rung: u32,
    /// What of the last output a reviewer can trust, field by field.
    pub partial: Partial,
    /// The tokens of each model call the run made, where the run knows
    /// them (a windowed run's calls include its windows' valid answers,
    /// which are in no chain entry); empty: one call a chain entry.
    call_usage: Vec<Usage>,
}

impl Escalation {
    /// An escalation (for drivers outside the crate).
    pub fn new(
        reason: Reason,
        error_chain: Vec<FailedAttempt>,
        last_output: Option<Value>,
        fix_hint: Option<String>,
        usage: Usage,
    ) -> Escalation {
        let partial = Partial::of(last_output.as_ref(), error_chain.last().map(|a| &a.violations), &[]);
        Escalation {
            reason,
            error_chain,
            last_output,
            fix_hint,
            usage,
            cost: None,
            model: None,
            rung: 0,
            partial,
            call_usage: Vec::new(),
        }
    }

    /// The same escalation, its run's calls having spent `usage` each
    /// (more calls than failed attempts: a windowed run's).
    pub(crate) fn with_call_usage(mut self, usage: Vec<Usage>) -> Escalation {
        self.call_usage = usage;
        self
    }

    /// The tokens of each model call, oldest first.
    fn calls(&self) -> Vec<Usage> {
        match self.call_usage.is_empty() {
            true => self.error_chain.iter().map(|a| a.usage).collect(),
            false => self.call_usage.clone(),
        }
    }

    /// The same escalation, answered last by `model` on rung `rung` of a ladder.
    pub fn answered_by(mut self, model: Option<String>, rung: u32) -> Escalation {
        self.model = model;
        self.rung = rung;
        self
    }

    /// The same escalation, with what its attempts cost.
    pub fn with_cost(mut self, cost: Option<f64>) -> Escalation {
        self.cost = cost;
        self
    }

    /// The same escalation with the partial result judged over the type's
    /// fields (JSON names, in order), so a field the output left out is listed too.
    pub(crate) fn over_fields(mut self, fields: &[&str]) -> Escalation {
        self.partial = Partial::of(self.last_output.as_ref(), self.last_violations(), fields);
        self
    }

    /// The number of model calls the run made.
    pub fn attempts(&self) -> u32 {
        // Every attempt of an escalation failed: one entry each (across the
        // rungs of a ladder, whose attempts each count from 1), unless the
        // run counted its calls (a windowed run's valid windows are calls too).
        let calls = self.call_usage.len().max(self.error_chain.len());
        u32::try_from(calls).unwrap_or(u32::MAX)
    }

    /// The violations of the last attempt.
    pub fn last_violations(&self) -> Option<&Violations> {
        self.error_chain.last().map(|a| &a.violations)
    }
}

impl Serialize for Escalation {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut packet = s.serialize_struct("Escalation", 7)?;
        packet.serialize_field("status", "escalated")?;
        packet.serialize_field("reason", &self.reason)?;
        packet.serialize_field("error_chain", &self.error_chain)?;
        packet.serialize_field("last_output", &self.last_output)?;
        packet.serialize_field("fix_hint", &self.fix_hint)?;
        if let Some(model) = &self.model {
            packet.serialize_field("model", model)?;
        }
        packet.serialize_field("cost", &self.cost)?;
        packet.serialize_field("partial", &self.partial)?;
        packet.end()
    }
}

impl fmt::Display for Escalation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "escalated ({}) after {} attempt(s)", self.reason, self.attempts())?;
        if let Some(violations) = self.last_violations() {
            write!(f, "; last violations:\n{violations}")?;
        }
        if let Some(hint) = &self.fix_hint {
            write!(f, "\nfix: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Escalation {}

/// What a reviewer can trust of an escalation's last output.
///
/// `held` maps each top-level field (JSON name) of the last output that no
/// violation of the last attempt names to its value. It passed every layer
/// that ran on it: when validation stopped at the structure layer, a held
/// field has the right shape and type, but no semantic check (no
/// `#[check]`, no quote) ran on it. `failed` maps every other field of the
/// type to the messages of the violations that name it: an empty list for a
/// field the output left out with no violation of its own. A violation at
/// the root (text instead of a tool call, a `with` check over the whole
/// value) names every field, so nothing is held.
///
/// Serializes as `{"held": {...}, "failed": {...}}`, fields in the type's order.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Partial {
    /// Fields that passed, with their values.
    pub held: Map<String, Value>,
    /// Fields that did not, with the messages of the violations naming them.
    pub failed: Map<String, Value>,
}

impl Partial {
    /// The partial result of `output` judged by `violations`, over the
    /// fields `fields` (JSON names, in the type's order; empty: the output's
    /// own top-level keys).
    pub(crate) fn of(output: Option<&Value>, violations: Option<&Violations>, fields: &[&str]) -> Partial {
        let object = output.and_then(Value::as_object);
        let mut names: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        if names.is_empty() {
            names = object.map(|o| o.keys().cloned().collect()).unwrap_or_default();
        }
        let violations: &[Violation] = violations.map(|v| &v[..]).unwrap_or_default();
        let named = NamedFields::of(violations);
        let mut partial = Partial::default();
        for name in names {
            let messages: Vec<Value> =
                named.of_field(&name).map(|i| Value::String(violations[i].message.clone())).collect();
            match object.and_then(|o| o.get(&name)) {
                Some(value) if messages.is_empty() => {
                    partial.held.insert(name, value.clone());
                }
                _ => {
                    partial.failed.insert(name, Value::Array(messages));
                }
            }
        }
        partial
    }
}

/// Which violations concern which top-level field, found in one pass: a
/// model that invents 20,000 keys gets 20,000 violations, and asking each
/// field about each violation would be 400 million questions.
struct NamedFields<'v> {
    /// The violations (indices, in order) at the root: they name every field.
    root: Vec<usize>,
    /// The violations (indices, in order) that name a top-level key, by key.
    by_key: BTreeMap<&'v str, Vec<usize>>,
}

impl<'v> NamedFields<'v> {
    /// A violation concerns a field when one of the paths it involves
    /// starts there, or sits at the root.
    fn of(violations: &'v [Violation]) -> NamedFields<'v> {
        let mut named = NamedFields { root: Vec::new(), by_key: BTreeMap::new() };
        for (i, violation) in violations.iter().enumerate() {
            let paths = violation.fields.iter().chain(std::iter::once(&violation.path));
            let firsts: Vec<Option<&Segment>> = paths.map(|path| path.segments().first()).collect();
            if firsts.contains(&None) {
                named.root.push(i);
                continue;
            }
            let keys: BTreeSet<&str> = firsts
                .into_iter()
                .filter_map(|first| match first {
                    Some(Segment::Key(key)) => Some(key.as_ref()),
                    _ => None,
                })
                .collect();
            for key in keys {
                named.by_key.entry(key).or_default().push(i);
            }
        }
        named
    }

    /// The violations concerning `field`, in their order.
    fn of_field(&self, field: &str) -> impl Iterator<Item = usize> {
        let mut all: Vec<usize> = self.root.clone();
        all.extend(self.by_key.get(field).into_iter().flatten());
        all.sort_unstable();
        all.into_iter()
    }
}
