//! The async driver of the retry policy: [`Extractor`].

use serde_json::Value;

use std::sync::Arc;

use crate::cost::{PriceTable, Rate};
use crate::engine::{Engine, EventQueue, Job, Streaming};
use crate::events::{Event, EventStream};
use crate::run::Windows;
use crate::{
    Corrections, Document, Error, Escalation, Extractable, Model, Outcome, Retries, Run, Tool, Violations,
};

/// Runs extractions against a [`Model`]: validate, retry with exact feedback,
/// escalate. `Err` is only for transport, I/O and configuration failures; every
/// validation result is an [`Outcome`].
///
/// The futures are `Send`, so extractions can be spawned. Each extraction runs
/// in a `tracing` span named `extract` with one event per attempt (attempt
/// number, layer, codes, usage); documents and outputs stay out of traces
/// unless [`trace_content(true)`](Extractor::trace_content) is set.
///
/// ```
/// use extract::{Code, FieldPath, Layer, Extractor, Retries, Tool, Violations, Violation};
/// use extract::testing::Scripted;
/// use serde_json::{json, Value};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
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
/// let extractor = Extractor::new(model.clone())
///     .retries(Retries::new(1)?)
///     .instructions("Totals are in euros.");
/// let outcome = extractor.extract_with(tool, "Total: 12.50", total).await?;
/// assert!(outcome.is_valid());
/// assert!(model.prompts()[0].system.contains("Totals are in euros."));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
///
/// With a derived type, `extractor.extract::<Invoice>(document).await?` uses
/// the type's tool and all three validation layers.
#[derive(Debug, Clone)]
pub struct Extractor<M> {
    model: M,
    retries: Retries,
    instructions: Option<String>,
    token_budget: Option<u64>,
    trace_content: bool,
    corrections: Corrections,
    /// The model's name, and its rate in the extractor's price table.
    priced_as: String,
    rate: Option<Rate>,
    cost_budget: Option<f64>,
    /// The stronger models of a ladder, in order ([`then`](Extractor::then)),
    /// each with its name and rate.
    ladder: Vec<Rung>,
    /// The table the rates come from (a later rung is priced from it).
    prices_table: PriceTable,
    /// Whether a streamed attempt ends as soon as its output has failed.
    stop_early: bool,
    /// How a long document is split to gather its lists window by window.
    windows: Option<Windows>,
}

/// A stronger model of a ladder: the model (absent in an extractor's
/// settings without its models), its name and its rate.
#[derive(Clone)]
struct Rung {
    model: Option<Arc<dyn Model>>,
    name: String,
    rate: Option<Rate>,
}

impl std::fmt::Debug for Rung {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rung").field("name", &self.name).field("rate", &self.rate).finish()
    }
}

impl<M: Model> Extractor<M> {
    /// An extractor over `model` with the default of two retries, its calls
    /// priced by [`PriceTable::claude`] (see [`prices`](Extractor::prices)).
    pub fn new(model: M) -> Extractor<M> {
        let priced_as = model.name().to_string();
        Extractor {
            rate: PriceTable::claude().rate(&priced_as),
            priced_as,
            model,
            retries: Retries::default(),
            instructions: None,
            token_budget: None,
            trace_content: false,
            corrections: Corrections::Full,
            cost_budget: None,
            ladder: Vec::new(),
            prices_table: PriceTable::claude(),
            stop_early: true,
            windows: None,
        }
    }

    /// Gathers a long document's lists window by window: each call answers
    /// the items of the type's `#[extract(per_window)]` lists that one
    /// window owns (an item belongs to the window where its anchor's quote
    /// starts), the lists merge in document order, and the merged output is
    /// validated whole; a check over the whole that fails (the sum) is
    /// corrected by one patch. Every call sends the whole document, as one
    /// cached prefix. For derived types with a per-window list, with
    /// [`extract`](Extractor::extract) and `Bulk`; a type without one, a
    /// window of nothing (`Windows::pages(0)`), streaming and Message
    /// Batches are configuration errors that say so.
    ///
    /// ```
    /// use extract::{Extractor, Sourced, Windows, testing::Scripted};
    /// use serde_json::json;
    /// #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
    /// #[check(sum(rows.amount) == total)]
    /// struct Ledger {
    ///     total: f64,
    ///     #[extract(per_window)]
    ///     rows: Vec<Row>,
    /// }
    /// #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
    /// struct Row { line: Sourced<String>, amount: f64 }
    ///
    /// let text = "Ledger, total 3\nrent 1\n\u{c}Page 2\nfood 2\n";
    /// let row = |line: &str, amount: f64| json!({"line": {"value": line, "quote": line}, "amount": amount});
    /// let model = Scripted::new([
    ///     json!({"total": 3.0, "rows": [row("rent 1", 1.0), row("food 2", 2.0)]}), // page 2's row: not window 1's
    ///     json!({"total": 0.0, "rows": [row("food 2", 2.0)]}),                     // window 2: its own row
    /// ]);
    /// let outcome = Extractor::new(model.clone()).windows(Windows::pages(1)).extract_blocking::<Ledger>(text)?;
    /// let ledger = outcome.valid().expect("valid").value();
    /// assert_eq!(ledger.rows.len(), 2, "each row once");
    /// assert!(model.prompts()[1].to_string().contains(r#"from the line "Page 2" through the line "food 2""#));
    /// # Ok::<(), extract::Error>(())
    /// ```
    pub fn windows(mut self, windows: Windows) -> Extractor<M> {
        self.windows = Some(windows);
        self
    }

    /// A ladder of models: when this extractor's attempts on a document end
    /// [`Systematic`](crate::Reason::Systematic) or
    /// [`BudgetExhausted`](crate::Reason::BudgetExhausted), `stronger`
    /// starts over with a first attempt of its own (the document, and a
    /// note of what the model before got wrong), with its own retries; any
    /// number of rungs. A violation that is not recoverable (absent data a
    /// stronger model would only invent) goes to a person at once. The
    /// outcome names the model that answered ([`Outcome::model`],
    /// [`Outcome::rung`]), and so does each failed attempt. Only for
    /// derived types ([`extract`](Extractor::extract), `Bulk`); Message
    /// Batches refuse a ladder.
    ///
    /// ```
    /// use extract::{Extractor, Outcome, testing::Scripted};
    /// use serde_json::json;
    /// # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
    /// # #[check(total > 0)]
    /// # struct Receipt { total: f64 }
    /// let small = Scripted::new([json!({"total": -1.0}), json!({"total": -1.0})]); // the same mistake twice
    /// let large = Scripted::new([json!({"total": 7.5})]);
    /// let outcome = Extractor::new(small).then(large.clone()).extract_blocking::<Receipt>("Total 7.50")?;
    /// assert_eq!((outcome.rung(), outcome.attempts()), (1, 3));
    /// assert!(large.prompts()[0].correction.is_none(), "a first attempt of its own");
    /// # Ok::<(), extract::Error>(())
    /// ```
    pub fn then<S: Model + 'static>(mut self, stronger: S) -> Extractor<M> {
        let name = stronger.name().to_string();
        let rate = self.prices_table.rate(&name);
        self.ladder.push(Rung { model: Some(Arc::new(stronger)), name, rate });
        self
    }

    /// The prices of the extractor's calls: the model's entry in `table`
    /// (by [`Model::name`]). The default is [`PriceTable::claude`]; a model
    /// the table does not price gives outcomes whose
    /// [`cost`](Outcome::cost) is `None`.
    ///
    /// ```
    /// use extract::cost::{PriceTable, Prices};
    /// use extract::{Extractor, testing::Scripted};
    /// use serde_json::json;
    ///
    /// # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
    /// # struct Receipt { total: f64 }
    /// let reply = extract::model::Reply::tool_call(json!({"total": 4.5}))
    ///     .with_usage(extract::Usage::new(1_000, 200));
    /// let prices = PriceTable::new().with("scripted", Prices::per_million(3.0, 15.0, 0.3, 3.75));
    /// let outcome = Extractor::new(Scripted::new([reply])).prices(prices).extract_blocking::<Receipt>("Total 4.50")?;
    /// assert_eq!(outcome.cost(), Some(0.006)); // 1,000 × $3 + 200 × $15, per million
    /// # Ok::<(), extract::Error>(())
    /// ```
    pub fn prices(mut self, table: PriceTable) -> Extractor<M> {
        self.rate = table.rate(&self.priced_as);
        for rung in &mut self.ladder {
            rung.rate = table.rate(&rung.name);
        }
        self.prices_table = table;
        self
    }

    /// A cap in US dollars per document: a run ends with `BudgetExhausted`
    /// when what it spent plus the last attempt's cost would exceed it, as
    /// the [`token_budget`](Extractor::token_budget) does with tokens. An
    /// extraction with a cost budget and no price for the model is a
    /// configuration error.
    pub fn cost_budget(mut self, usd: f64) -> Extractor<M> {
        self.cost_budget = Some(usd);
        self
    }

    /// The retry budget (1 to 3).
    pub fn retries(mut self, retries: Retries) -> Extractor<M> {
        self.retries = retries;
        self
    }

    /// The caller's own instructions (and examples), appended to the built-in
    /// system instructions of every prompt.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Extractor<M> {
        self.instructions = Some(instructions.into());
        self
    }

    /// A token budget per extraction: a run ends with `BudgetExhausted` when
    /// the tokens spent plus the last attempt's usage would exceed it.
    pub fn token_budget(mut self, tokens: u64) -> Extractor<M> {
        self.token_budget = Some(tokens);
        self
    }

    /// Whether traces may carry the document and the model's outputs. Off by
    /// default: they are personal data.
    pub fn trace_content(mut self, on: bool) -> Extractor<M> {
        self.trace_content = on;
        self
    }

    /// How a correction asks for the fix: [`Corrections::Full`] (the
    /// default: the complete object again) or [`Corrections::Patch`] (only
    /// the operations that fix the previous output, through the tool
    /// `patch_output`; the runtime applies them and validates the whole
    /// result with all three layers). Journals record each reply as the
    /// model sent it, and resuming applies a recorded patch again, so a run
    /// resumes with the setting it was started with.
    ///
    /// ```
    /// use extract::{Corrections, Extractor, Outcome, Tool, Violations};
    /// use extract::testing::Scripted;
    /// use serde_json::{json, Value};
    ///
    /// let tool = Tool {
    ///     name: "record_total".into(),
    ///     description: "Record the total.".into(),
    ///     input_schema: json!({"type": "object"}),
    ///     strict: false,
    /// };
    /// fn positive(output: &Value, _document: &str) -> Result<f64, Violations> {
    ///     let total = output["total"].as_f64().unwrap_or(-1.0);
    ///     if total > 0.0 { return Ok(total) }
    ///     let at = extract::FieldPath::root().key("total");
    ///     Err(Violations::one(extract::Violation::new(extract::Layer::Semantic, extract::Code::CHECK_FAILED, at, "must be positive")))
    /// }
    /// let model = Scripted::new([
    ///     json!({"total": -3.0, "currency": "EUR"}),
    ///     json!({"patch": [{"op": "replace", "path": "/total", "value": 3.0}]}),
    /// ]);
    /// let extractor = Extractor::new(model.clone()).corrections(Corrections::Patch);
    /// let outcome = extractor.extract_with_blocking(tool, "Total: 3 EUR", positive)?;
    /// assert_eq!(*outcome.valid().unwrap().value(), 3.0);
    /// assert_eq!(model.prompts()[1].tool.name, "patch_output");
    /// # Ok::<(), extract::Error>(())
    /// ```
    pub fn corrections(mut self, corrections: Corrections) -> Extractor<M> {
        self.corrections = corrections;
        self
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// Whether a streamed attempt ([`stream`](Extractor::stream)) ends as
    /// soon as a finished value fails a check that later output cannot
    /// change: on by default. The model's request is cancelled; the
    /// attempt's reply is a stopped one ([`ReplyContent::Stopped`](crate::ReplyContent::Stopped):
    /// the prefix and the violation that stopped it, its usage estimated
    /// at four bytes a token), which a run judges again the same way on
    /// replay; and the correction carries that violation (in patch mode, a
    /// full correction). Off, a streamed extraction's
    /// outcome is the one [`extract`](Extractor::extract) gives for the
    /// same replies.
    pub fn stop_early(mut self, on: bool) -> Extractor<M> {
        self.stop_early = on;
        self
    }

    /// The model, taken out of the extractor.
    pub fn into_model(self) -> M {
        self.model
    }

    /// Extracts a `T` from `document`: its tool, its three validation layers,
    /// and the retry policy.
    pub async fn extract<T>(&self, document: impl Into<Document>) -> Result<Outcome<T>, Error>
    where
        T: Extractable + Send + 'static,
    {
        if self.ladder.is_empty() {
            return self.drive(self.run_for::<T>(document, 0, None)).await;
        }
        self.check_prices()?;
        // A ladder: the job can make the run of each rung from its document.
        let mut job = Job::climbing(Engine::starter::<T, M>(self), document.into(), self.rungs());
        Engine::without_journal().drive(&mut job, self).await?
    }

    /// Extracts with an explicit `tool` and `validator` (given the tool input
    /// and the document), for types that do not derive `Extractable` or for
    /// custom validation. The validator runs under `catch_unwind`.
    pub async fn extract_with<T, V>(
        &self,
        tool: Tool,
        document: impl Into<Document>,
        validator: V,
    ) -> Result<Outcome<T>, Error>
    where
        T: Send,
        V: Fn(&Value, &str) -> Result<T, Violations> + Send + Sync + 'static,
    {
        if let Some(windows) = self.windows {
            return Err(Error::config(format!(
                "windows ({windows}) gather a derived type's #[extract(per_window)] lists, and extract_with takes \
                 a validator of your own: use extract, or an extractor without `windows`"
            )));
        }
        self.drive(self.configure(Run::new(tool, document, self.retries, validator))).await
    }

    /// Drives a prepared [`Run`] to its outcome against the model, as it
    /// was built: the extractor's [`windows`](Extractor::windows) are not
    /// applied (call [`Run::windowed`] on a run of a derived type).
    pub async fn run<T: Send>(&self, run: Run<T>) -> Result<Outcome<T>, Error> {
        self.drive(run).await
    }

    /// [`extract`](Extractor::extract) for callers without an async runtime:
    /// runs on a current-thread tokio runtime made for the call. Called from
    /// inside a tokio runtime it returns [`Error::Config`] instead of blocking
    /// (or panicking) there; use `.extract(..).await` in async code.
    pub fn extract_blocking<T>(&self, document: impl Into<Document>) -> Result<Outcome<T>, Error>
    where
        T: Extractable + Send + 'static,
    {
        block_on(self.extract::<T>(document))?
    }

    /// [`extract_with`](Extractor::extract_with) for callers without an async
    /// runtime, with the same rules as [`extract_blocking`](Extractor::extract_blocking).
    ///
    /// ```
    /// use extract::{Code, FieldPath, Layer, Extractor, Tool, Violations, Violation};
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
    /// let extractor = Extractor::new(Scripted::new([json!({"total": 3.0})]));
    /// let outcome = extractor.extract_with_blocking(tool, "Total: 3", total)?;
    /// assert_eq!(outcome.attempts(), 1);
    /// # Ok::<(), extract::Error>(())
    /// ```
    pub fn extract_with_blocking<T, V>(
        &self,
        tool: Tool,
        document: impl Into<Document>,
        validator: V,
    ) -> Result<Outcome<T>, Error>
    where
        T: Send,
        V: Fn(&Value, &str) -> Result<T, Violations> + Send + Sync + 'static,
    {
        block_on(self.extract_with(tool, document, validator))?
    }

    /// Extracts a `T` from `document` as [`extract`](Extractor::extract)
    /// does, streaming each reply as the model writes it: a stream of
    /// [`Event`]s, the outcome last. Dropping the stream cancels the call
    /// in flight.
    ///
    /// Each [`Event::Partial`] shows the output so far and the paths that
    /// are complete: finished, and passing every check that reads them (a
    /// complete path never changes or fails later in its attempt, until a
    /// [`Event::Restart`] starts the output over). A value
    /// that finished and fails a check nothing later can change ends the
    /// attempt at once (see [`stop_early`](Extractor::stop_early)); the
    /// correction carries that violation. A ladder of models
    /// ([`then`](Extractor::then)) is refused with [`Error::Config`].
    ///
    /// ```
    /// use extract::{Event, Extractor, testing::Scripted};
    /// use futures_util::StreamExt;
    /// use serde_json::json;
    /// # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
    /// # #[check(total > 0)]
    /// # struct Receipt { shop: String, total: f64 }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let model = Scripted::new([json!({"shop": "Corner", "total": 7.5})]).chunked(4);
    /// let extractor = Extractor::new(model);
    /// let mut events = extractor.stream::<Receipt>("Corner shop. Total 7.50");
    /// while let Some(event) = events.next().await {
    ///     match event? {
    ///         Event::Partial(snapshot) => println!("{} {:?}", snapshot.json(), snapshot.complete()),
    ///         Event::Done(outcome) => assert_eq!(outcome.valid().unwrap().value().total, 7.5),
    ///         _ => {}
    ///     }
    /// }
    /// # Ok::<(), extract::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn stream<T>(&self, document: impl Into<Document>) -> EventStream<'_, T>
    where
        T: Extractable + Send + 'static,
    {
        let queue = EventQueue::default();
        let streaming = Streaming {
            events: queue.clone(),
            judge: crate::stream::judge::<T>,
            stop_early: self.stop_early,
        };
        let run = self.configure(Run::<T>::for_type(document, self.retries));
        let drive = async move {
            self.check_prices()?;
            if !self.ladder.is_empty() {
                return Err(Error::config(
                    "a ladder of models (Extractor::then) cannot stream: use extract, or an extractor without `then`",
                ));
            }
            if let Some(windows) = self.windows {
                return Err(Error::config(format!(
                    "windows ({windows}) cannot stream yet: use extract, or an extractor without `windows`"
                )));
            }
            let outcome =
                Engine::without_journal().drive(&mut Job::new(run).streaming(streaming), self).await?;
            outcome.map(Event::Done)
        };
        crate::queued::queued_stream(drive, queue)
    }

    /// [`stream`](Extractor::stream) for callers without an async runtime:
    /// an iterator of the same events, run on a runtime of its own. Called
    /// inside a tokio runtime its one item is [`Error::Config`].
    ///
    /// ```
    /// use extract::{Event, Extractor, testing::Scripted};
    /// use serde_json::json;
    /// # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
    /// # #[check(total > 0)]
    /// # struct Receipt { total: f64 }
    /// let model = Scripted::new([json!({"total": -7.5}), json!({"total": 7.5})]).chunked(3);
    /// let extractor = Extractor::new(model);
    /// let retries = extractor
    ///     .stream_blocking::<Receipt>("Total 7.50")
    ///     .filter(|event| matches!(event, Ok(Event::Retry { .. })))
    ///     .count();
    /// assert_eq!(retries, 1, "the negative total was stopped and corrected");
    /// ```
    pub fn stream_blocking<T>(
        &self,
        document: impl Into<Document>,
    ) -> impl Iterator<Item = Result<Event<T>, Error>> + Send + '_
    where
        T: Extractable + Send + 'static,
    {
        crate::events::Blocking::new(self.stream::<T>(document))
    }

    async fn drive<T: Send>(&self, run: Run<T>) -> Result<Outcome<T>, Error> {
        self.check_prices()?;
        if !self.ladder.is_empty() {
            return Err(Error::config(
                "a ladder of models (Extractor::then) needs a derived type: use extract, not extract_with or run",
            ));
        }
        // Without a journal the engine has no failure of its own: its outer `Err` never comes.
        Engine::without_journal().drive(&mut Job::new(run), self).await?
    }
}

// What needs no model: a driver of its own configures runs with these.
impl<M> Extractor<M> {
    /// The retry budget each extraction gets.
    pub fn retry_budget(&self) -> Retries {
        self.retries
    }

    /// How many models the extractor's ladder has (1 without [`then`](Extractor::then)).
    pub fn rungs(&self) -> u32 {
        u32::try_from(self.ladder.len()).unwrap_or(u32::MAX).saturating_add(1)
    }

    /// The stronger model of rung `rung` (1 and up); `None` for rung 0 or
    /// an extractor's settings without their models.
    #[doc(hidden)]
    pub fn stronger(&self, rung: u32) -> Option<&dyn Model> {
        let index = usize::try_from(rung.checked_sub(1)?).ok()?;
        self.ladder.get(index)?.model.as_deref()
    }

    /// `run` configured for rung `rung` of the ladder: as
    /// [`configure`](Extractor::configure) does, with that rung's model
    /// named and priced, and from rung 1 a note of what the model before
    /// got wrong (`earlier`: the escalation it ended with).
    #[doc(hidden)]
    pub fn configure_rung<T>(&self, run: Run<T>, rung: u32, earlier: Option<&Escalation>) -> Run<T> {
        let mut run = self.configure(run);
        let Some(index) = rung.checked_sub(1).and_then(|i| usize::try_from(i).ok()) else { return run };
        let Some(stronger) = self.ladder.get(index) else { return run };
        run = run.answered_by(stronger.name.clone(), rung);
        if let Some(rate) = stronger.rate {
            run = run.prices(rate);
        }
        if let Some(violations) = earlier.and_then(Escalation::last_violations) {
            run = run.instructions(&format!(
                "Another model answered this document before you, and its answer broke these rules. Read the \
                 document afresh and answer from it; do not repeat these mistakes:\n{violations}"
            ));
        }
        run
    }

    /// `run` with this extractor's instructions, token budget, content
    /// tracing and corrections mode: what a driver of its own (the Batches
    /// driver) applies to each document's run.
    #[doc(hidden)]
    pub fn configure<T>(&self, mut run: Run<T>) -> Run<T> {
        if let Some(instructions) = &self.instructions {
            run = run.instructions(instructions);
        }
        if let Some(tokens) = self.token_budget {
            run = run.token_budget(tokens);
        }
        if let Some(rate) = self.rate {
            run = run.prices(rate);
        }
        if let Some(usd) = self.cost_budget {
            run = run.cost_budget(usd);
        }
        run.trace_content(self.trace_content)
            .corrections(self.corrections)
            .answered_by(self.priced_as.clone(), 0)
    }

    /// The rate this extractor's calls are billed at, `None` when its price
    /// table has no price for the model.
    pub fn rate(&self) -> Option<Rate> {
        self.rate
    }

    /// The same settings with its calls billed at `rate` (the Batches
    /// driver's: half the extractor's).
    #[doc(hidden)]
    pub fn billed_at(mut self, rate: Option<Rate>) -> Extractor<M> {
        self.rate = rate;
        self
    }

    /// `Err` when a cost budget is set and the model has no price: the
    /// budget could never be enforced.
    #[doc(hidden)]
    pub fn check_prices(&self) -> Result<(), Error> {
        let Some(usd) = self.cost_budget else { return Ok(()) };
        let rates = std::iter::once((&self.priced_as, self.rate))
            .chain(self.ladder.iter().map(|r| (&r.name, r.rate)));
        for (name, rate) in rates {
            if rate.is_none() {
                return Err(Error::config(format!(
                    "the cost budget of ${usd} cannot be kept: the price table has no price for the model {name:?}; \
                     give one with Extractor::prices(PriceTable::claude().with({name:?}, Prices::per_million(..)))"
                )));
            }
        }
        Ok(())
    }

    /// This extractor's settings without its model: what configures a run
    /// made away from the model (the engine makes a job's run when it starts).
    #[doc(hidden)]
    pub fn without_model(&self) -> Extractor<()> {
        Extractor {
            model: (),
            retries: self.retries,
            instructions: self.instructions.clone(),
            token_budget: self.token_budget,
            trace_content: self.trace_content,
            corrections: self.corrections,
            priced_as: self.priced_as.clone(),
            rate: self.rate,
            cost_budget: self.cost_budget,
            ladder: self.ladder.iter().map(|rung| Rung { model: None, ..rung.clone() }).collect(),
            prices_table: self.prices_table.clone(),
            stop_early: self.stop_early,
            windows: self.windows,
        }
    }

    /// How long documents are split ([`windows`](Extractor::windows)), if they are.
    pub fn windows_setting(&self) -> Option<Windows> {
        self.windows
    }

    /// The run of rung `rung` of a derived type over `document`: configured
    /// as [`configure_rung`](Extractor::configure_rung) configures one, then
    /// gathered window by window when the extractor has windows.
    #[doc(hidden)]
    pub fn run_for<T: Extractable + 'static>(
        &self,
        document: impl Into<Document>,
        rung: u32,
        earlier: Option<&Escalation>,
    ) -> Run<T> {
        let run = self.configure_rung(Run::<T>::for_type(document, self.retries), rung, earlier);
        match self.windows {
            Some(windows) => run.windowed(windows),
            None => run,
        }
    }

    /// The caller's instructions, if any.
    pub fn instructions_text(&self) -> Option<&str> {
        self.instructions.as_deref()
    }
}

fn block_on<F: Future>(future: F) -> Result<F::Output, Error> {
    crate::blocking::block_on("a blocking extraction", ".extract(..).await", future)
}

/// Compile-time proof that extraction futures are `Send` for every model and
/// every type, so they can be spawned on a multi-thread runtime.
fn _extraction_futures_are_send<M, T>(extractor: &Extractor<M>, run: Run<T>)
where
    M: Model,
    T: Extractable + Send + 'static,
{
    fn is_send<F: Send>(_: &F) {}
    is_send(&extractor.extract::<T>(""));
    is_send(&extractor.run(run));
    is_send(&extractor.extract_with(T::tool(), "", crate::validate::<T>));
    is_send(&extractor.stream::<T>(""));
}
