//! The retry policy as a sans-IO state machine: [`Run`].
//!
//! A [`Run`] holds the prompt of the next attempt, takes the model's
//! [`Reply`], validates it and answers [`Next::Call`] with the next prompt or
//! [`Next::Done`] with the [`Outcome`]. It does no I/O and never awaits, so the
//! async [`Extractor`](crate::Extractor), the blocking wrapper and a batch
//! driver all drive the same machine, and a test can drive it by hand.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value;

use super::hint;
use super::outcome::{Escalation, FailedAttempt, Reason, Validated};
use super::patch::{Corrections, PATCH_TOOL, apply_patch, is_patch_input, patch_tool};
use super::prompt::{Correction, Windowed};
use super::windowed::{Gathering, Judges};
use super::windows::Windows;
use crate::cost::Rate;
use crate::validate::Accepted;
use crate::validate::syntax;
use crate::vocabulary::text::shorten;
use crate::{
    Document, Extractable, Fingerprint, Layer, Outcome, Prompt, Reply, ReplyContent, Retries, Tool, Usage,
    Violation, Violations,
};

/// The most repeated fingerprints a systematic escalation's fix hint names,
/// one line each; a last line counts the rest.
const HINT_LINES: usize = 8;

/// What the driver of a [`Run`] does next.
#[derive(Debug)]
pub enum Next<T> {
    /// Call the model with this prompt and hand its reply to [`Run::on_reply`].
    Call(Prompt),
    /// The run is over.
    Done(Outcome<T>),
}

/// What an attempt produced besides its verdict.
enum Produced {
    /// The reply itself (its tool input, or its text).
    Reply,
    /// A patch correction's result: the patched object, or the unchanged
    /// base when the patch did not apply; and the patch as sent.
    Patch { output: Value, patch: Value },
}

pub(super) type Validator<T> = dyn Fn(&Value, &Document) -> Result<Accepted<T>, Violations> + Send + Sync;

/// A derived type's validator of a whole output: what a windowed run
/// validates its merged output with, and its windows' answers through.
pub(super) type WholeValidator<T> = fn(&Value, &Document) -> Result<Accepted<T>, Violations>;

/// Puts a patched output in order before it is validated (a windowed
/// run's merged lists, sorted again by anchor after a patch appends).
type Arrange = Box<dyn Fn(&mut Value, Option<&str>) + Send + Sync>;

/// One extraction's retry policy, without I/O.
///
/// Decides after each reply, in this order: valid -> [`Outcome::Valid`]; any
/// violation not recoverable -> escalate [`Reason::NotRecoverable`] at once; a
/// violation whose fingerprint was in the previous attempt -> escalate
/// [`Reason::Systematic`] with a fix hint naming the field; retry budget (or
/// token budget) spent -> escalate [`Reason::BudgetExhausted`]; else retry with
/// a correction prompt carrying the last output and its exact violations.
/// An alternation A, B, A, B is not systematic: the budget ends it.
///
/// ```
/// use extract::{Code, FieldPath, Layer, Outcome, Retries, Tool, Violations, Violation};
/// use extract::run::{Next, Run};
/// use extract::model::Reply;
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
/// let mut run = Run::new(tool, "Total: 12.50", Retries::default(), total);
/// let first = run.prompt().clone();
/// assert_eq!(first.attempt, 1);
///
/// // The driver calls a model with `first`; here the answer is text, which is retried.
/// let Next::Call(second) = run.on_reply(Reply::text("It is 12.50")) else { panic!() };
/// assert!(second.correction.unwrap().violations.contains("calling the tool `record_total`"));
///
/// match run.on_reply(Reply::tool_call(json!({"total": 12.5}))) {
///     Next::Done(Outcome::Valid(v)) => assert_eq!(v.attempts(), 2),
///     other => panic!("{other:?}"),
/// }
/// ```
pub struct Run<T> {
    prompt: Prompt,
    /// The type's tool and the system block of a full attempt (a patch
    /// correction's prompt carries the patch tool instead).
    tool: Tool,
    system: String,
    corrections: Corrections,
    /// In patch mode, the last JSON object an attempt produced: what the
    /// next patch addresses.
    base: Option<Value>,
    validator: Box<Validator<T>>,
    retries: Retries,
    token_budget: Option<u64>,
    /// What the model's calls cost; `None`: no price known, so no cost.
    rate: Option<Rate>,
    cost_budget: Option<f64>,
    /// What the replies so far cost, `None` once one had no price.
    cost: Option<f64>,
    /// The model the run asks, and its rung in a ladder of models.
    model: Option<String>,
    rung: u32,
    trace_content: bool,
    attempt_usage: Vec<Usage>,
    chain: Vec<FailedAttempt>,
    finished: bool,
    /// The type's fields (JSON names), for an escalation's partial result;
    /// empty for a caller's own validator.
    fields: Vec<&'static str>,
    /// What judges a stopped stream's prefix again (a derived type's run).
    prefix_judge: Option<PrefixJudge>,
    /// A windowed run's parts; `None` without windows.
    gathering: Option<Box<Gathering<T>>>,
    /// Why the run cannot make a call (a windows setting the type or the
    /// document cannot take); the driver fails it before any call.
    problem: Option<String>,
    /// What puts a patched output in order before it is validated.
    arrange: Option<Arrange>,
    /// The output the validator accepted, kept where a windowed run needs
    /// it (its whole's run: the patched merge its sources are placed in).
    accepted: Option<Value>,
}

/// Judges a stopped stream's prefix against the document's text: the
/// violations it had already decided.
type PrefixJudge = fn(&str, Option<&str>) -> Option<Violations>;

impl<T> Run<T> {
    /// A run that asks for `tool` over `document` and judges each output with
    /// `validator` (given the tool input and the document's text: the text,
    /// or a PDF's text layer, or `""` for a PDF without one). The validator
    /// runs under `catch_unwind` (so this needs the default `panic = unwind`):
    /// a panic becomes one `validator_panicked` violation, not recoverable.
    pub fn new<V>(tool: Tool, document: impl Into<Document>, retries: Retries, validator: V) -> Run<T>
    where
        V: Fn(&Value, &str) -> Result<T, Violations> + Send + Sync + 'static,
    {
        let validator = move |output: &Value, document: &Document| {
            validator(output, document.searchable_text().unwrap_or("")).map(|value| (value, None))
        };
        Run::judged_by(tool, document.into(), retries, Box::new(validator))
    }

    fn judged_by(tool: Tool, document: Document, retries: Retries, validator: Box<Validator<T>>) -> Run<T> {
        let prompt = Prompt::new(tool.clone(), document);
        Run {
            system: prompt.system.clone(),
            prompt,
            tool,
            corrections: Corrections::Full,
            base: None,
            validator,
            retries,
            token_budget: None,
            rate: None,
            cost_budget: None,
            cost: None,
            model: None,
            rung: 0,
            trace_content: false,
            attempt_usage: Vec::new(),
            chain: Vec::new(),
            finished: false,
            fields: Vec::new(),
            prefix_judge: None,
            gathering: None,
            problem: None,
            arrange: None,
            accepted: None,
        }
    }

    /// A run of one part of a windowed extraction, asking for `tool` and
    /// judged by `validator`, configured as this run is.
    pub(super) fn child<U>(&self, tool: Tool, validator: Box<Validator<U>>) -> Run<U> {
        let mut child = Run::judged_by(tool, self.prompt.document.clone(), self.retries, validator);
        child.prompt.system.clone_from(&self.system);
        child.system.clone_from(&self.system);
        child.corrections = self.corrections;
        // The budgets are the document's: the windowed run checks them over
        // every part's calls, not each part against the whole budget.
        child.rate = self.rate;
        child.cost = self.rate.map(|_| 0.0);
        child.model.clone_from(&self.model);
        child.rung = self.rung;
        child.trace_content = self.trace_content;
        child.fields.clone_from(&self.fields);
        child
    }

    /// The type's tool (a patch correction's prompt carries the patch tool).
    pub(super) fn tool(&self) -> &Tool {
        &self.tool
    }

    /// Makes every call of this run a windowed extraction's call.
    pub(super) fn set_windowed(&mut self, windowed: Windowed) {
        self.prompt.windowed = Some(windowed);
    }

    /// Starts this run at a patch correction of `base` (its attempt 1 was
    /// no call: the merge of a windowed run), each patched output put in
    /// order by `arrange` before it is judged.
    pub(super) fn correct_from(
        &mut self,
        base: Value,
        correction: Correction,
        windowed: Windowed,
        arrange: Arrange,
    ) {
        self.base = Some(base);
        self.arrange = Some(arrange);
        self.prompt = Prompt {
            attempt: 2,
            system: self.system.clone(),
            document: self.prompt.document.clone(),
            tool: patch_tool(),
            correction: Some(correction),
            windowed: Some(windowed),
        };
    }

    /// Puts a windowed run's parts back after a reply that did not end it.
    pub(super) fn resume(&mut self, gathering: Box<Gathering<T>>) {
        self.gathering = Some(gathering);
    }

    pub(super) fn document(&self) -> &Document {
        &self.prompt.document
    }

    /// The document's text (a PDF's text layer; `""` without one).
    pub(super) fn document_text(&self) -> &str {
        self.prompt.document.searchable_text().unwrap_or_default()
    }

    pub(super) fn attempt_usage(&self) -> &[Usage] {
        &self.attempt_usage
    }

    pub(super) fn model_name(&self) -> Option<String> {
        self.model.clone()
    }

    /// The output the validator accepted, for a run that keeps it.
    pub(super) fn accepted_output(&self) -> Option<&Value> {
        self.accepted.as_ref()
    }

    pub(super) fn set_chain(&mut self, chain: Vec<FailedAttempt>) {
        self.chain = chain;
    }

    pub(super) fn finish(&mut self) {
        self.finished = true;
    }

    pub(super) fn over_type_fields(&self, escalation: Escalation) -> Escalation {
        escalation.over_fields(&self.fields)
    }

    /// Why the run cannot make a call, if it cannot (a windows setting the
    /// type or the document cannot take): a driver fails it with a
    /// configuration error before any call.
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    /// Appends the caller's instructions (and examples) to the system block.
    /// Call before the first reply.
    pub fn instructions(mut self, instructions: &str) -> Run<T> {
        self.prompt = self.prompt.with_instructions(instructions);
        self.system = self.prompt.system.clone();
        self
    }

    /// How corrections ask for the fix: the complete object again
    /// ([`Corrections::Full`], the default) or only the operations that fix
    /// the previous output ([`Corrections::Patch`]). Call before the first reply.
    pub fn corrections(mut self, corrections: Corrections) -> Run<T> {
        self.corrections = corrections;
        self
    }

    /// Ends the run with [`Reason::BudgetExhausted`] when the tokens spent so
    /// far plus the last attempt's usage would exceed `tokens` (another attempt
    /// is expected to cost about as much as the last one).
    pub fn token_budget(mut self, tokens: u64) -> Run<T> {
        self.token_budget = Some(tokens);
        self
    }

    /// Prices each reply at `rate`, for the outcome's [`cost`](Outcome::cost)
    /// and the [`cost_budget`](Run::cost_budget). Without it the outcome's
    /// cost is `None`. Call before the first reply.
    pub fn prices(mut self, rate: Rate) -> Run<T> {
        self.rate = Some(rate);
        self.cost = Some(0.0);
        self
    }

    /// Ends the run with [`Reason::BudgetExhausted`] when what was spent so
    /// far plus the last attempt's cost would exceed `usd` (another attempt
    /// is expected to cost about as much as the last one). Needs
    /// [`prices`](Run::prices): a run without them cannot tell what it spent.
    pub fn cost_budget(mut self, usd: f64) -> Run<T> {
        self.cost_budget = Some(usd);
        self
    }

    /// Names the model the run asks (`Model::name`) and its rung in a
    /// ladder of models (0: the first), for the outcome and each failed
    /// attempt to say who answered. Call before the first reply.
    pub fn answered_by(mut self, model: impl Into<String>, rung: u32) -> Run<T> {
        self.model = Some(model.into());
        self.rung = rung;
        self
    }

    /// The rung of the ladder of models the run asks (0: the first).
    pub fn rung(&self) -> u32 {
        self.rung
    }

    /// What the replies so far cost in US dollars; `None` without prices.
    pub fn cost(&self) -> Option<f64> {
        self.cost
    }

    /// Whether attempt events may carry the model's output (off by default:
    /// outputs are personal data).
    pub fn trace_content(mut self, on: bool) -> Run<T> {
        self.trace_content = on;
        self
    }

    /// Whether traces may carry the document and the model's outputs.
    pub fn traces_content(&self) -> bool {
        self.trace_content
    }

    /// The prompt of the attempt to make now (in a windowed run, the
    /// current part's).
    pub fn prompt(&self) -> &Prompt {
        match &self.gathering {
            Some(gathering) => gathering.prompt(),
            None => &self.prompt,
        }
    }

    /// The prompts of the calls to make now, in the order their replies go
    /// to [`on_reply`](Run::on_reply): one, or in a windowed run a wave of
    /// windows asked at once (the first is [`prompt`](Run::prompt)). A
    /// driver may send them together; it hands their replies over in this order.
    pub fn wave(&self) -> Vec<&Prompt> {
        match &self.gathering {
            Some(gathering) => gathering.wave().collect(),
            None => vec![&self.prompt],
        }
    }

    /// The 1-based number of the attempt to make now (in a windowed run,
    /// within the current part).
    pub fn attempt(&self) -> u32 {
        self.prompt().attempt
    }

    /// Whether [`Run::on_reply`] has returned [`Next::Done`].
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The attempts that failed validation so far, oldest first.
    pub fn failed_attempts(&self) -> &[FailedAttempt] {
        &self.chain
    }

    /// The tokens every reply so far spent, summed.
    pub fn spent(&self) -> Usage {
        self.attempt_usage.iter().copied().sum()
    }

    /// Takes the model's reply to [`Run::prompt`] and decides.
    ///
    /// # Panics
    ///
    /// When called again after it returned [`Next::Done`].
    pub fn on_reply(&mut self, reply: Reply) -> Next<T> {
        assert!(!self.finished, "Run::on_reply was called after the run finished");
        let attempt = self.prompt.attempt;
        self.attempt_usage.push(reply.usage);
        let call_cost = self.rate.map(|rate| rate.cost(reply.usage));
        self.cost = self.cost.zip(call_cost).map(|(spent, call)| spent + call);
        if let Some(gathering) = self.gathering.take() {
            return self.on_gathered_reply(gathering, reply, call_cost);
        }
        let (result, produced) = self.judge(&reply);
        let violations = match result {
            Ok((value, sources)) => {
                if let Some(arrange) = &self.arrange {
                    let mut accepted = match produced {
                        Produced::Patch { output, .. } => Some(output),
                        Produced::Reply => syntax::reply_output(&reply),
                    };
                    // What was validated: the output put in order.
                    if let Some(output) = &mut accepted {
                        arrange(output, self.prompt.document.searchable_text());
                    }
                    self.accepted = accepted;
                }
                self.trace_attempt(&reply, None);
                self.finished = true;
                let usage = std::mem::take(&mut self.attempt_usage);
                let corrections = std::mem::take(&mut self.chain);
                tracing::info!(target: "extract", attempts = attempt, "extraction valid");
                let validated = Validated::new(value, usage, corrections, sources)
                    .with_cost(self.cost)
                    .answered_by(self.model.clone(), self.rung);
                return Next::Done(Outcome::Valid(validated));
            }
            Err(violations) => violations,
        };
        self.trace_attempt(&reply, Some(&violations));

        let previous: BTreeSet<Fingerprint> = self
            .chain
            .last()
            .map(|a| a.violations.iter().map(Violation::fingerprint).collect())
            .unwrap_or_default();
        let (output, patch) = match produced {
            Produced::Reply => (syntax::reply_output(&reply), None),
            Produced::Patch { output, patch } => (Some(output), Some(patch)),
        };
        if self.corrections == Corrections::Patch && output.as_ref().is_some_and(Value::is_object) {
            self.base.clone_from(&output);
        }
        if matches!(reply.content, ReplyContent::Stopped { .. }) {
            // No whole output to patch: the correction asks for every field.
            self.base = None;
        }
        self.chain.push(
            FailedAttempt::new(attempt, violations.clone(), reply.usage)
                .with_patch(patch)
                .with_model(self.model.clone())
                .with_cost(call_cost),
        );

        if let Some(blocking) = violations.iter().find(|v| !v.recoverable) {
            let hint = hint::not_recoverable(blocking);
            return self.escalate(Reason::NotRecoverable, output, Some(hint));
        }
        let mut repeated = BTreeSet::new();
        let repeats: Vec<Fingerprint> = violations
            .iter()
            .map(Violation::fingerprint)
            .filter(|fp| previous.contains(fp) && repeated.insert(fp.clone()))
            .collect();
        if !repeats.is_empty() {
            // One line per repeated fingerprint, up to a few: a model that
            // invents 20,000 keys twice must not make a 20,000-line hint.
            let mut hints: Vec<String> = repeats.iter().take(HINT_LINES).map(hint::systematic).collect();
            if repeats.len() > HINT_LINES {
                hints.push(format!(
                    "and {} more that repeat: the last attempt's violations list them all",
                    repeats.len() - HINT_LINES
                ));
            }
            return self.escalate(Reason::Systematic, output, Some(hints.join("\n")));
        }
        if attempt >= self.retries.attempts() {
            return self.escalate(Reason::BudgetExhausted, output, None);
        }
        if let Some(hint) = self.over_budget(reply.usage, call_cost) {
            return self.escalate(Reason::BudgetExhausted, output, Some(hint));
        }
        self.prompt = self.next_prompt(&reply, output.as_ref(), &violations);
        Next::Call(self.prompt.clone())
    }

    /// Why another call would exceed the token or cost budget, after a
    /// last call that spent `last` (and cost `last_cost`): another is
    /// expected to cost about as much. `None` within both.
    pub(super) fn over_budget(&self, last: Usage, last_cost: Option<f64>) -> Option<String> {
        if let Some(budget) = self.token_budget {
            let spent = self.attempt_usage.iter().map(Usage::total).fold(0, u64::saturating_add);
            let next = last.total();
            if spent.saturating_add(next) > budget {
                return Some(format!(
                    "another attempt would exceed the token budget of {budget} ({spent} spent, the last \
                     attempt took {next}): raise the budget or shorten the document"
                ));
            }
        }
        if let (Some(budget), Some(spent), Some(next)) = (self.cost_budget, self.cost, last_cost)
            && spent + next > budget
        {
            return Some(format!(
                "another attempt would exceed the cost budget of ${budget} (${spent:.6} spent, the last attempt \
                 cost ${next:.6}): raise the budget, use a cheaper model or shorten the document"
            ));
        }
        None
    }

    /// The reply judged, and what the attempt produced. In a patch
    /// correction an input that is `{"patch": ...}` alone, in a call of
    /// `patch_output` or an unnamed one, is applied to the base and the
    /// result validated; any other input of `patch_output`, of the type's
    /// tool or of an unnamed call is judged as a full answer; anything else
    /// (text, another tool) is judged against `patch_output`, the tool that
    /// was asked for.
    fn judge(&self, reply: &Reply) -> (Result<Accepted<T>, Violations>, Produced) {
        if let (ReplyContent::Stopped { partial, .. }, Some(judge)) = (&reply.content, self.prefix_judge)
            && let Some(violations) = judge(partial, self.prompt.document.searchable_text())
        {
            return (Err(violations), Produced::Reply);
        }
        let base = self.base.as_ref().filter(|_| self.prompt.asks_for_patch());
        let Some(base) = base else {
            let result = syntax::tool_input(reply, &self.tool.name).and_then(|input| self.validate(&input));
            return (result, Produced::Reply);
        };
        let name = match &reply.content {
            ReplyContent::ToolCall { name, .. } | ReplyContent::ToolCallText { name, .. } => name.as_deref(),
            _ => None,
        };
        let asked = if name == Some(self.tool.name.as_str()) { self.tool.name.as_str() } else { PATCH_TOOL };
        let input = match syntax::tool_input(reply, asked) {
            Ok(input) => input,
            Err(violations) => return (Err(violations), Produced::Reply),
        };
        // A full object, even in a call of `patch_output`, is a full answer.
        if asked != PATCH_TOOL || !is_patch_input(&input) {
            return (self.validate(&input), Produced::Reply);
        }
        let patch = input.get("patch").cloned().unwrap_or_else(|| input.clone().into_owned());
        match apply_patch(base, &input) {
            Ok(mut output) => {
                // Put in order here, so the output a failed patch leaves
                // (the next patch's base) is in order too.
                if let Some(arrange) = &self.arrange {
                    arrange(&mut output, self.prompt.document.searchable_text());
                }
                let result = syntax::require_object(&output).and_then(|()| self.validate(&output));
                (result, Produced::Patch { output, patch })
            }
            Err(violations) => (Err(violations), Produced::Patch { output: base.clone(), patch }),
        }
    }

    /// The correction after an attempt that produced `output` (`None`: nothing)
    /// and broke `violations`: a patch correction of the base in patch mode
    /// when there is one, else the full correction showing the reply verbatim.
    fn next_prompt(&self, reply: &Reply, output: Option<&Value>, violations: &Violations) -> Prompt {
        let base = self.base.as_ref().filter(|_| self.corrections == Corrections::Patch);
        let (system, tool, correction) = match base {
            Some(base) => {
                (self.system.clone(), patch_tool(), Correction::patch(syntax::compact(base), violations))
            }
            None => {
                let shown = match (output, self.prompt.asks_for_patch()) {
                    // A patch attempt's output is the patched object, not the
                    // reply; a stopped stream's is its prefix, shown verbatim.
                    (Some(output), true) if output.is_object() => syntax::compact(output),
                    _ => syntax::output_text(reply),
                };
                (self.system.clone(), self.tool.clone(), Correction::new(&self.tool.name, shown, violations))
            }
        };
        Prompt {
            attempt: self.prompt.attempt + 1,
            system,
            document: self.prompt.document.clone(),
            tool,
            correction: Some(correction),
            windowed: self.prompt.windowed.clone(),
        }
    }

    /// `input` validated, put in order first where the run arranges its
    /// outputs (a full answer to a windowed run's whole, like a patched one).
    fn validate(&self, input: &Value) -> Result<Accepted<T>, Violations> {
        if let Some(arrange) = &self.arrange {
            let mut arranged = input.clone();
            arrange(&mut arranged, self.prompt.document.searchable_text());
            return self.validate_as_is(&arranged);
        }
        self.validate_as_is(input)
    }

    fn validate_as_is(&self, input: &Value) -> Result<Accepted<T>, Violations> {
        let document = &self.prompt.document;
        crate::validate::guarded(Layer::Semantic, format_args!("the validator"), || {
            (self.validator)(input, document)
        })
    }

    fn escalate(&mut self, reason: Reason, last_output: Option<Value>, fix_hint: Option<String>) -> Next<T> {
        self.finished = true;
        let usage = self.attempt_usage.iter().copied().sum();
        let chain = std::mem::take(&mut self.chain);
        tracing::info!(
            target: "extract",
            attempts = chain.len(),
            reason = reason.as_str(),
            "extraction escalated"
        );
        let escalation = Escalation::new(reason, chain, last_output, fix_hint, usage)
            .with_cost(self.cost)
            .answered_by(self.model.clone(), self.rung);
        Next::Done(Outcome::Escalated(escalation.over_fields(&self.fields)))
    }

    /// The `validation` event of one reply: valid or not, the layer, the
    /// violations' codes and paths (never their values).
    fn trace_attempt(&self, reply: &Reply, violations: Option<&Violations>) {
        use crate::telemetry as names;
        let attempt = self.prompt.attempt;
        let (layer, codes, paths) = match violations {
            None => (String::new(), String::new(), String::new()),
            Some(v) => {
                let codes: BTreeSet<&str> = v.iter().map(|v| v.code.as_str()).collect();
                let paths: BTreeSet<String> = v.iter().map(|v| v.path.to_string()).collect();
                let join = |items: Vec<String>| shorten(&items.join(","), 2_000);
                (
                    v.layer().to_string(),
                    join(codes.into_iter().map(str::to_string).collect()),
                    join(paths.into_iter().collect()),
                )
            }
        };
        let valid = violations.is_none();
        // Outputs are personal data: they are recorded only when the caller opted in.
        let output = self.trace_content.then(|| syntax::output_text(reply));
        tracing::event!(
            target: "extract",
            tracing::Level::INFO,
            { names::ATTEMPT } = i64::from(attempt),
            { names::VALID } = valid,
            { names::LAYER } = layer.as_str(),
            { names::CODES } = codes.as_str(),
            { names::PATHS } = paths.as_str(),
            { names::OUTPUT } = output.as_deref(),
            "validation"
        );
    }
}

impl<T: Extractable + 'static> Run<T> {
    /// A run for the derived type `T`: its tool, and [`validate::<T>`](fn@crate::validate)
    /// (syntax, structure and semantic layers) as the validator.
    ///
    /// `Sourced` quotes are checked against the document's text (a PDF's
    /// text layer); a PDF without one has its quotes left unverified, and
    /// the valid outcome's [`sources`](Validated::sources) say so.
    pub fn for_type(document: impl Into<Document>, retries: Retries) -> Run<T> {
        let validator =
            |output: &Value, document: &Document| crate::validate::validate_document::<T>(output, document);
        let mut run = Run::judged_by(T::tool(), document.into(), retries, Box::new(validator));
        run.fields = T::__describe().fields().iter().map(|f| f.json_name).collect();
        run.prefix_judge = Some(crate::stream::prefix_violations::<T>);
        run
    }

    /// The same run over a long document gathered window by window
    /// ([`Windows`]): each window asked for its items of `T`'s per-window
    /// lists (window 1 for every field), the lists merged, and the merged
    /// output validated whole and corrected by patch where it fails. Call
    /// after the run is configured (instructions, corrections, prices):
    /// its parts are configured as it is. A setting `T` or the document
    /// cannot take (`Windows::pages(0)`, a type without a per-window list,
    /// a PDF without a text layer) is the run's [`problem`](Run::problem).
    pub fn windowed(mut self, windows: Windows) -> Run<T> {
        let lists: Vec<(&'static str, &'static str)> = T::__describe()
            .per_window()
            .into_iter()
            .map(|(field, anchor)| (field.json_name, anchor))
            .collect();
        let problem = match (windows.checked(), self.prompt.document.searchable_text()) {
            (Err(problem), _) => Some(problem),
            _ if lists.is_empty() => Some(format!(
                "windows ({windows}) gather a list window by window, and `{}` has none: mark a top-level \
                 `Vec` field whose items have a `Sourced` field with #[extract(per_window)]",
                T::__describe().rust_name
            )),
            (_, None) => Some(format!(
                "windows ({windows}) split a document's text, and document {} is a PDF without a text layer: \
                 give it one with Document::with_text_layer",
                self.prompt.document.id()
            )),
            (Ok(_), Some(_)) => None,
        };
        if problem.is_some() {
            self.problem = problem;
            return self;
        }
        let text = self.document_text().to_string();
        let windows = (windows.split(&text).into(), windows.concurrency() as usize);
        let judges = Judges {
            whole: crate::validate::validate_document::<T>,
            verdict: |output, document| crate::validate::validate_document::<T>(output, document).map(drop),
            boxed: || Box::new(crate::validate::validate_document::<T>),
        };
        self.gathering = Some(Box::new(Gathering::start(&self, lists, &text, windows, judges)));
        self
    }
}

impl<T> fmt::Debug for Run<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Run")
            .field("tool", &self.prompt.tool.name)
            .field("attempt", &self.prompt.attempt)
            .field("retries", &self.retries)
            .field("token_budget", &self.token_budget)
            .field("rate", &self.rate)
            .field("cost_budget", &self.cost_budget)
            .field("failed_attempts", &self.chain.len())
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Code, FieldPath};
    use serde_json::json;

    fn tool() -> Tool {
        Tool { name: "record".into(), description: String::new(), input_schema: json!({}), strict: false }
    }

    fn needs_total(output: &Value, _: &str) -> Result<f64, Violations> {
        output["total"].as_f64().ok_or_else(|| {
            let at = FieldPath::root().key("total");
            Violations::one(Violation::new(Layer::Structure, Code::MISSING_FIELD, at, "missing"))
        })
    }

    fn costly(input: Value) -> Reply {
        Reply::tool_call(input).with_usage(Usage::new(500, 0))
    }

    #[test]
    fn a_budget_exactly_met_still_allows_the_attempt() {
        let mut run = Run::new(tool(), "d", Retries::new(3).unwrap(), needs_total).token_budget(1_000);
        assert!(matches!(run.on_reply(costly(json!({"other": 1}))), Next::Call(_)));
        assert!(matches!(run.on_reply(costly(json!({"total": 1}))), Next::Done(Outcome::Valid(_))));
        assert!(run.is_finished());
    }

    #[test]
    fn prompts_are_numbered_and_keep_the_document() {
        let mut run = Run::new(tool(), "the doc", Retries::default(), needs_total);
        assert_eq!(run.attempt(), 1);
        let Next::Call(prompt) = run.on_reply(Reply::tool_call(json!({"a": 1}))) else { panic!() };
        assert_eq!(prompt.attempt, 2);
        assert_eq!(run.attempt(), 2);
        assert_eq!(prompt.document, "the doc");
        assert_eq!(&prompt, run.prompt());
    }

    #[test]
    fn a_patch_correction_applies_patches_and_judges_full_objects_as_usual() {
        let patch = |ops: Value| Reply::named_tool_call(PATCH_TOOL, json!({ "patch": ops }));
        let mut run =
            Run::new(tool(), "d", Retries::new(3).unwrap(), needs_total).corrections(Corrections::Patch);
        let Next::Call(second) = run.on_reply(Reply::tool_call(json!({"note": "x"}))) else { panic!() };
        assert!(second.asks_for_patch());
        assert_eq!(second.tool.name, PATCH_TOOL);
        // The system names no tool: a patch correction keeps it as it is.
        assert_eq!(second.system, crate::SYSTEM_INSTRUCTIONS);
        // An operation that does not apply leaves the base as it was.
        let Next::Call(third) = run.on_reply(patch(json!([{"op": "remove", "path": "/total"}]))) else {
            panic!()
        };
        assert_eq!(run.failed_attempts()[1].violations[0].code, "invalid_patch");
        assert!(third.correction.as_ref().unwrap().previous_output.contains("\"note\""));
        // A full object sent through `patch_output` is a full answer.
        match run.on_reply(Reply::named_tool_call(PATCH_TOOL, json!({"total": 2.0}))) {
            Next::Done(Outcome::Valid(v)) => assert_eq!(*v.value(), 2.0),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn full_mode_corrections_keep_the_type_tool() {
        let mut run = Run::new(tool(), "d", Retries::default(), needs_total);
        let Next::Call(second) = run.on_reply(Reply::tool_call(json!({"a": 1}))) else { panic!() };
        assert!(!second.asks_for_patch());
        assert_eq!(second.tool.name, "record");
    }

    #[test]
    #[should_panic(expected = "after the run finished")]
    fn replies_after_the_end_are_a_driver_bug() {
        let mut run = Run::new(tool(), "d", Retries::default(), needs_total);
        let _ = run.on_reply(Reply::refusal("no"));
        let _ = run.on_reply(Reply::refusal("no"));
    }
}
