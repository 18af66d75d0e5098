//! The run engine: what every driver does to a document's [`Run`], written
//! once. [`Extractor`], [`Bulk`](crate::Bulk) (alone or as one worker of a
//! shared journal) and the Anthropic backend's `Batches` drive documents
//! through it, and none of them touches the journal on its own.
//!
//! ```text
//! Engine::open(documents, journal)    ids checked, contents digested, the journal opened
//!   .jobs::<T>(&extractor)            one Job per document: its Run, and what was recorded of it
//! job.replay()                        the recorded replies, through the Run (the policy is deterministic)
//! engine.answer(&mut job, reply)      record, judge, commit: the reply (and the outcome it ends
//!                                     the run with) is in the journal before the run acts on it
//! engine.fail(&mut job, error)        a failure, recorded
//! engine.drive(&mut job, &model)      all of the above against a model, until an outcome
//! ```
//!
//! A job may stream its calls ([`Job::streaming`]): the drive then reads
//! each reply as it arrives, shows it and may stop it early
//! ([`Streaming`]); everything else is the same drive.
//!
//! A reply is keyed by its document, the document's content, and a
//! [`CallKey`]: the part of the document (the whole, or a window), the rung
//! of a ladder of models and the attempt; and a reply may be a cancelled
//! stream's prefix. Windows, ladders and streams add calls to a document's
//! run, not a schema.
//!
//! Every outcome is built by the validators, never read from disk: a
//! resumed run replays what it recorded, and a reviewer's fix is held to all
//! three layers again ([`Job::replay`], [`Engine::answer`]).

mod key;
#[cfg(feature = "postgres")]
mod shared;
mod streamed;

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

use serde_json::Value;
use tracing::Instrument;

pub use key::{CallKey, Part};
#[cfg(feature = "postgres")]
pub use shared::Coordinating;
pub use streamed::{EventQueue, PrefixJudge, Streaming};

use crate::journal::{self, Intent, Journal, Recorded, RecordedReply, Store};
use crate::run::Windows;
use crate::telemetry as names;
use crate::{
    Document, Error, Escalation, Extractable, Extractor, Model, Next, Outcome, Prompt, Reason, Reply, Run,
    Tool,
};
use crate::{Usage, Validated, Violations};

/// The documents of one run and its journal (if it has one), as a driver
/// holds them. Shared by the driver's tasks (`&self` throughout) once its
/// [`jobs`](Engine::jobs) are taken.
pub struct Engine {
    journal: Option<Store>,
    /// The documents until their jobs are made.
    documents: Vec<Document>,
    /// The digest of each document's content (in order), under the run's
    /// tool and instructions: the journal binds every record to it.
    contents: Vec<String>,
    recorded: Recorded,
    asked_again: usize,
    /// The span of the run this engine drives many documents for: each
    /// document's extraction is then a root span linked to it (one span with
    /// 10,000 children breaks tracing backends).
    run_span: Option<tracing::Span>,
}

/// How a journal is opened: by the run (locked, documents recorded), or by
/// a reader (the review queue, a review) beside a run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Opening {
    Run,
    Reader,
}

impl Engine {
    /// The engine of one document without a journal: what
    /// [`Extractor::extract`] drives.
    pub fn without_journal() -> Engine {
        Engine {
            journal: None,
            documents: Vec::new(),
            contents: Vec::new(),
            recorded: Recorded::default(),
            asked_again: 0,
            run_span: None,
        }
    }

    /// Begins a run of `tool` over `documents` (their ids checked unique,
    /// their contents digested under the tool and `instructions`), with the
    /// journal opened (and locked, one run at a time on SQLite), if there is
    /// one, and what an earlier run recorded of them read.
    pub async fn open(
        documents: impl IntoIterator<Item = Document>,
        journal: Option<&Journal>,
        tool: &Tool,
        instructions: Option<&str>,
        windows: Option<Windows>,
    ) -> Result<Engine, Error> {
        Engine::opened(documents, journal, tool, instructions, windows, Opening::Run).await
    }

    /// The journal opened to read (and to record a review), without the
    /// run's lock, with what it recorded of `documents` as they are now.
    pub async fn open_for_reading(
        documents: impl IntoIterator<Item = Document>,
        journal: &Journal,
        tool: &Tool,
        instructions: Option<&str>,
        windows: Option<Windows>,
    ) -> Result<Engine, Error> {
        Engine::opened(documents, Some(journal), tool, instructions, windows, Opening::Reader).await
    }

    async fn opened(
        documents: impl IntoIterator<Item = Document>,
        journal: Option<&Journal>,
        tool: &Tool,
        instructions: Option<&str>,
        windows: Option<Windows>,
        opening: Opening,
    ) -> Result<Engine, Error> {
        let documents: Vec<Document> = documents.into_iter().collect();
        if opening == Opening::Run {
            unique_ids(&documents)?;
        }
        let run = journal::run_digest(tool, instructions, windows);
        let contents: Vec<String> = documents.iter().map(|d| journal::content_digest(&run, d)).collect();
        let ids = documents.iter().map(|d| d.id().into_owned()).zip(contents.iter().cloned()).collect();
        let (journal, recorded) = match (journal, opening) {
            (Some(journal), Opening::Run) => {
                let (store, recorded) = Store::open_for_run(journal, tool, ids).await?;
                (Some(store), recorded)
            }
            (Some(journal), Opening::Reader) => {
                let (store, recorded) = Store::open_for_reading(journal, tool, ids).await?;
                (Some(store), recorded)
            }
            (None, _) => (None, Recorded::default()),
        };
        let asked_again = recorded.asked_again.len();
        Ok(Engine { journal, documents, contents, recorded, asked_again, run_span: None })
    }

    /// One job per document, in the documents' order: its run (configured
    /// as `extractor` configures one), what was recorded of it and the
    /// reviewer's fix, if there is one. Taken once.
    pub fn jobs<T, M>(&mut self, extractor: &Extractor<M>) -> Vec<Job<T>>
    where
        T: Extractable + Send + 'static,
        M: Model,
    {
        let documents = std::mem::take(&mut self.documents);
        let contents = std::mem::take(&mut self.contents);
        // A job's run is made when it starts, so a run over many documents
        // holds a run (its prompt, its tool) only for those in flight.
        let starter = Engine::starter::<T, M>(extractor);
        let rungs = extractor.rungs();
        documents
            .into_iter()
            .zip(contents)
            .enumerate()
            .map(|(index, (document, content))| {
                let id = document.id().into_owned();
                let mut job = Job::of(Stage::Waiting(document), index, id, content);
                job.starter = Some(starter.clone());
                job.rungs = rungs;
                job.reviewer = Some(review_of::<T>);
                job.take_recorded(&mut self.recorded);
                job
            })
            .collect()
    }

    /// What makes a job's run for each rung of `extractor`'s ladder of
    /// models, configured as `extractor` configures one.
    pub fn starter<T, M>(extractor: &Extractor<M>) -> Starter<T>
    where
        T: Extractable + Send + 'static,
        M: Model,
    {
        let configured = extractor.without_model();
        Arc::new(move |document, rung, earlier| configured.run_for::<T>(document, rung, earlier))
    }

    /// How many documents the journal had replies for under another
    /// content (or tool, or instructions): asked again.
    pub fn asked_again(&self) -> usize {
        self.asked_again
    }

    /// The first write of the journal that failed, if one did: no model
    /// call is made after it.
    pub fn failure(&self) -> Option<Error> {
        self.journal.as_ref().and_then(Store::failure)
    }

    /// Keeps `error` as the journal's failure, if it is the first: the run
    /// stops making model calls.
    pub fn keep_failure(&self, error: &Error) {
        if let Some(journal) = &self.journal {
            journal.fail(error);
        }
    }

    /// Opens the span of a run over many documents (`extract.run {tool}`),
    /// to which every document's extraction span is linked; the run's
    /// counts are recorded on it by [`Engine::finish_run`].
    pub fn trace_run(&mut self, tool: &str, documents: usize) -> tracing::Span {
        let span = tracing::info_span!(
            target: "extract",
            "extract.run",
            { names::OTEL_NAME } = tracing::field::display(format_args!("extract.run {tool}")),
            { names::OTEL_KIND } = "internal",
            { names::TOOL } = tool,
            { names::RUN_DOCUMENTS } = count(documents as u64),
            { names::RUN_VALID } = tracing::field::Empty,
            { names::RUN_ESCALATED } = tracing::field::Empty,
            { names::RUN_FAILED } = tracing::field::Empty,
        );
        self.run_span = Some(span.clone());
        span
    }

    /// Records a finished run's counts on its span.
    pub fn finish_run(&self, valid: u64, escalated: u64, failed: usize) {
        if let Some(span) = &self.run_span {
            span.record(names::RUN_VALID, count(valid));
            span.record(names::RUN_ESCALATED, count(escalated));
            span.record(names::RUN_FAILED, count(failed as u64));
        }
    }

    /// Whether the run keeps a journal.
    pub fn has_journal(&self) -> bool {
        self.journal.is_some()
    }

    /// Drives `job` against `model` to its outcome: the recorded replies
    /// first, then the model, every reply recorded before it is judged. The
    /// inner `Err` is the document's (transport, configuration, a lease
    /// another worker took over); the outer one the journal's: a write that
    /// failed stops the run.
    pub async fn drive<T: Send, M: Model>(
        &self,
        job: &mut Job<T>,
        extractor: &Extractor<M>,
    ) -> Result<Result<Outcome<T>, Error>, Error> {
        // The run made now: its settings may be what cannot be sent.
        job.start();
        if let Some(problem) = job.problem() {
            return self.fail(job, Error::config(problem), None).await.map(Err);
        }
        let span = self.extraction_span(job);
        let driven = async {
            if let Some(outcome) = job.replay() {
                return Ok(Ok(outcome));
            }
            loop {
                if let Some(failure) = self.failure() {
                    return Err(failure);
                }
                // The model of the job's rung of the ladder.
                let model: &dyn Model = match job.rung {
                    0 => extractor.model(),
                    rung => match extractor.stronger(rung) {
                        Some(model) => model,
                        None => return Ok(Err(Error::config("a ladder's rung has no model"))),
                    },
                };
                job.start();
                let run = job.run().expect("started above");
                // The calls to make now: one, or a windowed run's wave of
                // windows, sent together and judged in the run's order.
                let wave: Vec<Prompt> = match &job.streaming {
                    Some(_) => vec![run.prompt().clone()],
                    None => run.wave().into_iter().cloned().collect(),
                };
                let calls = wave.iter().map(|prompt| {
                    let chat = chat_span(model, prompt.attempt);
                    let started = std::time::Instant::now();
                    let call = async {
                        match &job.streaming {
                            Some(streaming) => streaming.call(model, prompt).await,
                            None => model.call(prompt).await,
                        }
                    };
                    async move {
                        let called = call.instrument(chat.clone()).await;
                        record_call_metrics(model, &called, started.elapsed());
                        (chat, called)
                    }
                });
                let answered = futures_util::future::join_all(calls).await;
                for (chat, called) in answered {
                    let reply = match called {
                        Ok(reply) => reply,
                        Err(error) => {
                            // The replies after it in the wave are dropped: a
                            // resumed run asks those calls again.
                            chat.record(names::ERROR_TYPE, error.kind().as_str());
                            return self.fail(job, error, None).await.map(Err);
                        }
                    };
                    record_reply(&chat, &reply);
                    // The reply's `validation` event sits in its call's span.
                    match self.answer(job, reply, None).instrument(chat).await {
                        Ok(Some(outcome)) => return Ok(Ok(outcome)),
                        Ok(None) => job.retrying(),
                        // The journal's own failure stops the run; anything else is this document's.
                        Err(error) => return self.failure().map_or(Ok(Err(error)), Err),
                    }
                }
            }
        };
        let result = driven.instrument(span.clone()).await;
        match &result {
            Ok(Ok(outcome)) => record_outcome(&span, outcome),
            Ok(Err(error)) | Err(error) => {
                span.record(names::ERROR_TYPE, error.kind().as_str());
            }
        }
        result
    }

    /// The span of `job`'s extraction (`extract {tool}`): a child of the
    /// current span, or in a run over many documents a root linked to the
    /// run's span. The document's text only with content capture on. A
    /// driver of its own (Batches) ends it with [`record_outcome`] or an
    /// `error.type`.
    pub fn extraction_span<T>(&self, job: &mut Job<T>) -> tracing::Span {
        let run = job.start();
        let prompt = run.prompt();
        let tool = prompt.tool.name.as_str();
        let parent = match &self.run_span {
            Some(_) => None,
            None => tracing::Span::current().id(),
        };
        let span = tracing::info_span!(
            target: "extract",
            parent: parent,
            "extract",
            { names::OTEL_NAME } = tracing::field::display(format_args!("extract {tool}")),
            { names::OTEL_KIND } = "internal",
            { names::TOOL } = tool,
            { names::DOCUMENT_ID } = tracing::field::display(prompt.document.id()),
            { names::DOCUMENT_BYTES } = count(prompt.document.len() as u64),
            { names::DOCUMENT_TEXT } = tracing::field::Empty,
            { names::OUTCOME } = tracing::field::Empty,
            { names::REASON } = tracing::field::Empty,
            { names::ATTEMPTS } = tracing::field::Empty,
            { names::RUNG } = tracing::field::Empty,
            { names::USAGE_INPUT_TOKENS } = tracing::field::Empty,
            { names::USAGE_OUTPUT_TOKENS } = tracing::field::Empty,
            { names::USAGE_CACHE_READ_INPUT_TOKENS } = tracing::field::Empty,
            { names::USAGE_CACHE_CREATION_INPUT_TOKENS } = tracing::field::Empty,
            { names::COST_USD } = tracing::field::Empty,
            { names::ERROR_TYPE } = tracing::field::Empty,
        );
        if let Some(run_span) = &self.run_span {
            span.follows_from(run_span);
        }
        if run.traces_content() {
            span.record(names::DOCUMENT_TEXT, prompt.document_text().as_ref());
        }
        span
    }

    /// Record, judge, commit: `reply` (to the job's current call; from
    /// message batch `batch`, if any) is judged by the job's run and
    /// committed to the journal with the outcome it ends the run with
    /// (before the run acts on it); `Some` outcome when it ended the run,
    /// with a reviewer's fix applied. `Err` when the journal could not take
    /// it (the error carries the reply), or the reply cannot be recorded.
    pub async fn answer<T>(
        &self,
        job: &mut Job<T>,
        reply: Reply,
        batch: Option<&str>,
    ) -> Result<Option<Outcome<T>>, Error> {
        // The record is made from the reply before the policy takes it.
        job.start();
        let Stage::Running(run) = &mut job.stage else { unreachable!("started above") };
        let record = match &self.journal {
            Some(_) => {
                Some(Store::reply_record(&job.id, &job.content, run.prompt(), &reply, batch, job.rung)?)
            }
            None => None,
        };
        let next = run.on_reply(reply);
        // A rung of a ladder that ends where the next model may do better
        // is not the document's outcome: the next rung starts.
        let settled = match next {
            Next::Done(outcome) => job.settle(outcome),
            Next::Call(_) => None,
        };
        if let (Some(journal), Some(record)) = (&self.journal, record) {
            journal.reply(record, settled.as_ref()).await?;
        }
        job.resends = 0;
        job.answered += 1;
        Ok(settled.map(|outcome| job.reviewed(outcome)))
    }

    /// `job` fails with `error` (a result of message batch `batch`, if any):
    /// recorded (a resumed run tries it again), unless another worker took
    /// the document over. Returns the error, saying what the attempts so
    /// far spent; `Err` when the journal failed.
    pub async fn fail<T>(&self, job: &mut Job<T>, error: Error, batch: Option<&str>) -> Result<Error, Error> {
        let error = match &job.stage {
            Stage::Running(run) => error.after(run.failed_attempts().to_vec(), run.spent()),
            Stage::Waiting(_) => error,
        };
        if let Some(journal) = &self.journal {
            if let Some(failure) = journal.failure() {
                return Err(failure);
            }
            if !journal.lost(&job.id) {
                journal.failed(&job.id, &job.content, &error, batch).await?;
            }
        }
        Ok(error)
    }

    /// Whether another worker took `job`'s document over from this one: its
    /// outcome is the new owner's to record and report.
    pub fn lost<T>(&self, job: &Job<T>) -> bool {
        self.journal.as_ref().is_some_and(|journal| journal.lost(&job.id))
    }

    /// Records a reviewer's `fix` of `job`'s escalated document, already
    /// held to all three layers (`fixed`), and the reviewed outcome.
    pub async fn record_review<T>(
        &self,
        job: &Job<T>,
        escalation: &Escalation,
        fix: Value,
        fixed: Validated<T>,
    ) -> Result<Validated<T>, Error> {
        let journal = self.journal.as_ref().ok_or_else(|| Error::config("a review needs a journal"))?;
        let output = crate::run::review::patched(escalation, fix.clone());
        let outcome = Outcome::Valid(fixed);
        journal.reviewed(&job.id, &job.content, &fix, &outcome, output).await?;
        let Outcome::Valid(fixed) = outcome else { unreachable!("built valid above") };
        Ok(fixed)
    }
}

/// The span of one model call (`chat {model}`, kind client), with the
/// request's attributes; the response's are recorded by [`record_reply`].
pub fn chat_span<M: Model + ?Sized>(model: &M, attempt: u32) -> tracing::Span {
    chat_span_of(model.name(), model.provider(), attempt)
}

/// [`chat_span`] of the model `name` served by `provider`.
pub fn chat_span_of(name: &str, provider: &str, attempt: u32) -> tracing::Span {
    tracing::info_span!(
        target: "extract",
        "chat",
        { names::OTEL_NAME } = tracing::field::display(format_args!("chat {name}")),
        { names::OTEL_KIND } = "client",
        { names::OPERATION_NAME } = "chat",
        { names::PROVIDER_NAME } = provider,
        { names::REQUEST_MODEL } = name,
        { names::ATTEMPT } = i64::from(attempt),
        { names::RESPONSE_ID } = tracing::field::Empty,
        { names::RESPONSE_MODEL } = tracing::field::Empty,
        { names::RESPONSE_FINISH_REASONS } = tracing::field::Empty,
        { names::USAGE_INPUT_TOKENS } = tracing::field::Empty,
        { names::USAGE_OUTPUT_TOKENS } = tracing::field::Empty,
        { names::USAGE_CACHE_READ_INPUT_TOKENS } = tracing::field::Empty,
        { names::USAGE_CACHE_CREATION_INPUT_TOKENS } = tracing::field::Empty,
        { names::ERROR_TYPE } = tracing::field::Empty,
    )
}

/// A count as OpenTelemetry's integer attributes hold it (`i64`, saturated):
/// an unsigned value would be exported as text.
fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Records `usage` on `span` as the conventions count it: input tokens
/// are all input, cache reads and writes included.
fn record_usage(span: &tracing::Span, usage: Usage) {
    let input =
        usage.input_tokens.saturating_add(usage.cache_read_tokens).saturating_add(usage.cache_write_tokens);
    span.record(names::USAGE_INPUT_TOKENS, count(input));
    span.record(names::USAGE_OUTPUT_TOKENS, count(usage.output_tokens));
    span.record(names::USAGE_CACHE_READ_INPUT_TOKENS, count(usage.cache_read_tokens));
    span.record(names::USAGE_CACHE_CREATION_INPUT_TOKENS, count(usage.cache_write_tokens));
}

/// Records what a reply says of itself on its call's span.
pub fn record_reply(chat: &tracing::Span, reply: &Reply) {
    if let Some(id) = &reply.id {
        chat.record(names::RESPONSE_ID, id.as_str());
    }
    if let Some(model) = &reply.model {
        chat.record(names::RESPONSE_MODEL, model.as_str());
    }
    if let Some(reason) = &reply.stop_reason {
        chat.record(names::RESPONSE_FINISH_REASONS, reason.as_str());
    }
    record_usage(chat, reply.usage);
}

/// The metrics of one call: its duration, and its tokens by type. Events
/// of their own target and of no span (so no trace shows them), which
/// `tracing-opentelemetry`'s metrics layer turns into the conventions'
/// histograms; their values are unsigned or floats, as its histograms take.
fn record_call_metrics<M: Model + ?Sized>(
    model: &M,
    called: &Result<Reply, Error>,
    took: std::time::Duration,
) {
    let error = called.as_ref().err().map(|e| e.kind().as_str()).unwrap_or_default();
    tracing::event!(
        target: names::METRICS_TARGET,
        parent: None,
        tracing::Level::INFO,
        { names::OPERATION_DURATION_METRIC } = took.as_secs_f64(),
        { names::OPERATION_NAME } = "chat",
        { names::PROVIDER_NAME } = model.provider(),
        { names::REQUEST_MODEL } = model.name(),
        { names::ERROR_TYPE } = error,
    );
    let Ok(reply) = called else { return };
    let u = reply.usage;
    let input = u.input_tokens.saturating_add(u.cache_read_tokens).saturating_add(u.cache_write_tokens);
    for (kind, tokens) in [("input", input), ("output", u.output_tokens)] {
        tracing::event!(
            target: names::METRICS_TARGET,
            parent: None,
            tracing::Level::INFO,
            { names::TOKEN_USAGE_METRIC } = tokens,
            { names::TOKEN_TYPE } = kind,
            { names::OPERATION_NAME } = "chat",
            { names::PROVIDER_NAME } = model.provider(),
            { names::REQUEST_MODEL } = model.name(),
        );
    }
}

/// Records an extraction's outcome on its span, and in the outcome metrics.
pub fn record_outcome<T>(span: &tracing::Span, outcome: &Outcome<T>) {
    let reason = outcome.escalation().map(|e| e.reason.as_str()).unwrap_or_default();
    tracing::event!(
        target: names::METRICS_TARGET,
        parent: None,
        tracing::Level::INFO,
        { names::OUTCOMES_METRIC } = 1_u64,
        { names::ATTEMPTS_METRIC } = u64::from(outcome.attempts()),
        { names::OUTCOME } = if outcome.is_valid() { "valid" } else { "escalated" },
        { names::REASON } = reason,
    );
    span.record(names::OUTCOME, if outcome.is_valid() { "valid" } else { "escalated" });
    if let Some(escalation) = outcome.escalation() {
        span.record(names::REASON, escalation.reason.as_str());
    }
    span.record(names::ATTEMPTS, i64::from(outcome.attempts()));
    span.record(names::RUNG, i64::from(outcome.rung()));
    record_usage(span, outcome.usage());
    if let Some(cost) = outcome.cost() {
        span.record(names::COST_USD, cost);
    }
}

/// The message batches of a run, as its journal holds them: what the
/// Batches driver resumes from and records through.
#[derive(Debug, Default)]
pub struct BatchLedger {
    /// Batches created and not yet collected, oldest first, each with its
    /// documents and their attempts.
    pub open: Vec<(String, Vec<(String, u32)>)>,
    /// Batches about to be created when an earlier run stopped, whose id
    /// the API never gave it.
    pub intents: Vec<Intent>,
    /// The results already handled, as (batch id, document id).
    pub handled: BTreeSet<(String, String)>,
}

impl Engine {
    /// The run's message batches as the journal holds them. Taken once.
    pub fn batches(&mut self) -> BatchLedger {
        BatchLedger {
            open: std::mem::take(&mut self.recorded.open_batches),
            intents: std::mem::take(&mut self.recorded.intents),
            handled: std::mem::take(&mut self.recorded.handled),
        }
    }

    /// Commits the intent to create a batch of `documents` (id, attempt,
    /// content digest), before the create call; its number (`None` without
    /// a journal).
    pub async fn intent(
        &self,
        created_at: i64,
        documents: Vec<(String, u32, String)>,
    ) -> Result<Option<i64>, Error> {
        match &self.journal {
            Some(journal) => journal.intent(created_at, documents).await.map(Some),
            None => Ok(None),
        }
    }

    /// Records the API's id for the batch of `intent`.
    pub async fn batch_created(&self, intent: Option<i64>, id: &str) -> Result<(), Error> {
        match (&self.journal, intent) {
            (Some(journal), Some(intent)) => journal.batch_created(intent, id).await,
            _ => Ok(()),
        }
    }

    /// Records that `intent` made no batch (or is to be forgotten).
    pub async fn abandon(&self, intent: Option<i64>) -> Result<(), Error> {
        match (&self.journal, intent) {
            (Some(journal), Some(intent)) => journal.abandon(intent).await,
            _ => Ok(()),
        }
    }

    /// Records that `job`'s current call goes into a later batch again,
    /// and why; a `counted` resend counts toward the job's limit.
    pub async fn resent<T>(
        &self,
        job: &mut Job<T>,
        batch: &str,
        reason: &str,
        counted: bool,
    ) -> Result<(), Error> {
        if let Some(journal) = &self.journal {
            journal.resent(&job.id, batch, reason, counted).await?;
        }
        job.resends += u32::from(counted);
        Ok(())
    }

    /// Records that batch `batch` was collected whole.
    pub async fn collected(&self, batch: &str) -> Result<(), Error> {
        match &self.journal {
            Some(journal) => journal.collected(batch).await,
            None => Ok(()),
        }
    }
}

/// Holds a reviewer's fix to all three layers, as `review::<T>` does.
type Reviewer<T> = fn(&Escalation, Option<&str>, Value) -> Result<Validated<T>, Violations>;

fn review_of<T: Extractable>(
    escalation: &Escalation,
    text: Option<&str>,
    fix: Value,
) -> Result<Validated<T>, Violations> {
    crate::run::review::review_searchable::<T>(escalation, text, fix)
}

/// Makes a job's run of rung `rung` of a ladder of models from its
/// document (and, from rung 1, the escalation of the rung before),
/// configured as the driver's extractor configures one.
pub type Starter<T> = Arc<dyn Fn(Document, u32, Option<&Escalation>) -> Run<T> + Send + Sync>;

/// A job's document before it starts, its run after (boxed: a waiting job
/// stays as small as its document).
enum Stage<T> {
    Waiting(Document),
    Running(Box<Run<T>>),
}

/// One document in the engine: its [`Run`] (made when it starts), the
/// replies recorded of it still to replay, and a reviewer's fix.
pub struct Job<T> {
    index: usize,
    id: String,
    content: String,
    stage: Stage<T>,
    starter: Option<Starter<T>>,
    replay: VecDeque<RecordedReply>,
    /// A reviewer's fix, applied to the outcome the run ends with.
    fix: Option<Value>,
    /// Whether a reviewer rejected the document (its source unusable).
    rejected: bool,
    reviewer: Option<Reviewer<T>>,
    /// How many times the current call has been sent again (message batches).
    resends: u32,
    /// How many replies this engine judged for it (not replayed ones).
    answered: u32,
    /// The rung of the ladder of models its run asks, how many there are,
    /// and what the rungs before it tried (their escalations, merged).
    rung: u32,
    rungs: u32,
    earlier: Option<Escalation>,
    /// How its calls stream, when they do.
    streaming: Option<Streaming<T>>,
}

impl<T> Job<T> {
    /// A job of `run` alone: no journal, no review (what
    /// [`Extractor::run`] drives).
    pub fn new(run: Run<T>) -> Job<T> {
        let id = run.prompt().document.id().into_owned();
        Job::of(Stage::Running(Box::new(run)), 0, id, String::new())
    }

    fn of(stage: Stage<T>, index: usize, id: String, content: String) -> Job<T> {
        Job {
            index,
            id,
            content,
            stage,
            starter: None,
            replay: VecDeque::new(),
            fix: None,
            rejected: false,
            reviewer: None,
            resends: 0,
            answered: 0,
            rung: 0,
            rungs: 1,
            earlier: None,
            streaming: None,
        }
    }

    /// The same job with its calls streamed as `streaming` says.
    pub fn streaming(mut self, streaming: Streaming<T>) -> Job<T> {
        self.streaming = Some(streaming);
        self
    }

    /// A reply did not end the run: a streamed job reports the attempt
    /// that starts and what the one before failed on.
    fn retrying(&self) {
        let (Some(streaming), Some(run)) = (&self.streaming, self.run()) else { return };
        if let Some(failed) = run.failed_attempts().last() {
            streaming.retry(run.attempt(), failed.violations.clone());
        }
    }

    /// A job that climbs `rungs` models (a ladder): each rung's run made by
    /// `starter` when it starts. What [`Extractor::extract`] drives.
    pub fn climbing(starter: Starter<T>, document: Document, rungs: u32) -> Job<T> {
        let id = document.id().into_owned();
        let mut job = Job::of(Stage::Waiting(document), 0, id, String::new());
        job.starter = Some(starter);
        job.rungs = rungs;
        job
    }

    /// The rung of the ladder of models its run asks (0: the first).
    pub fn rung(&self) -> u32 {
        self.rung
    }

    /// `outcome` of the current rung, settled: `Some` with the rungs before
    /// it in front; `None` when the ladder goes on (the rung escalated as
    /// `Systematic` or `BudgetExhausted`, with only recoverable violations,
    /// and a stronger model is left), and the next rung's run has started.
    fn settle(&mut self, outcome: Outcome<T>) -> Option<Outcome<T>> {
        let climbs = match &outcome {
            Outcome::Escalated(e) => {
                self.rung + 1 < self.rungs
                    && matches!(e.reason, Reason::Systematic | Reason::BudgetExhausted)
                    && e.last_violations().is_some_and(|v| v.iter().all(|v| v.recoverable))
            }
            Outcome::Valid(_) => false,
        };
        let (true, Outcome::Escalated(escalation), Some(starter)) = (climbs, &outcome, self.starter.clone())
        else {
            return Some(match self.earlier.take() {
                Some(earlier) => outcome.after_rungs(earlier),
                None => outcome,
            });
        };
        let merged = match self.earlier.take() {
            Some(earlier) => match Outcome::<T>::Escalated(escalation.clone()).after_rungs(earlier) {
                Outcome::Escalated(merged) => merged,
                Outcome::Valid(_) => unreachable!("an escalation stays one"),
            },
            None => escalation.clone(),
        };
        self.rung += 1;
        let document = self.document().clone();
        self.stage = Stage::Running(Box::new(starter(document, self.rung, Some(escalation))));
        self.earlier = Some(merged);
        None
    }

    /// Its place among the run's documents.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Its document's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The digest of its content, under the run's tool and instructions.
    pub fn content(&self) -> &str {
        &self.content
    }

    /// Its run, made now if the job has not started.
    pub fn start(&mut self) -> &mut Run<T> {
        if let Stage::Waiting(document) = &mut self.stage {
            let document = std::mem::replace(document, Document::text(""));
            let starter = self.starter.as_ref().expect("a waiting job has a starter");
            self.stage = Stage::Running(Box::new(starter(document, self.rung, None)));
        }
        match &mut self.stage {
            Stage::Running(run) => run,
            Stage::Waiting(_) => unreachable!("started above"),
        }
    }

    /// Its run, once it started ([`start`](Job::start), [`replay`](Job::replay)
    /// or a call); `None` before.
    pub fn run(&self) -> Option<&Run<T>> {
        match &self.stage {
            Stage::Running(run) => Some(&**run),
            Stage::Waiting(_) => None,
        }
    }

    /// The attempt its next call is (1 before it started).
    pub fn attempt(&self) -> u32 {
        self.run().map_or(1, Run::attempt)
    }

    /// Its document.
    pub fn document(&self) -> &Document {
        match &self.stage {
            Stage::Running(run) => &run.prompt().document,
            Stage::Waiting(document) => document,
        }
    }

    /// How many replies this engine judged for it, besides those replayed.
    pub fn answered(&self) -> u32 {
        self.answered
    }

    /// How many times its current call has been sent again.
    pub fn resends(&self) -> u32 {
        self.resends
    }

    /// Whether a reviewer already decided on its document (fixed or rejected it).
    pub fn decided(&self) -> bool {
        self.fix.is_some() || self.rejected
    }

    /// Why its document cannot be sent (a bad id), if it cannot: it fails
    /// at once, without a call.
    pub fn problem(&self) -> Option<String> {
        self.document().problem().or_else(|| self.run().and_then(Run::problem).map(str::to_string))
    }

    /// Starts the job's run afresh, as `extractor` configures one.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    fn restart<M: Model>(&mut self, extractor: &Extractor<M>)
    where
        T: Extractable + Send + 'static,
    {
        let document = self.document().clone();
        (self.rung, self.earlier) = (0, None);
        self.stage = Stage::Running(Box::new(extractor.run_for::<T>(document, 0, None)));
    }

    /// Takes what `recorded` holds of this document: its replies, in the
    /// order they were recorded (a windowed run's to every part), its
    /// reviewer's fix and its resends.
    fn take_recorded(&mut self, recorded: &mut Recorded) {
        self.replay = recorded.replies.remove(&self.id).unwrap_or_default().into();
        self.fix = recorded.reviews.remove(&self.id);
        self.rejected = recorded.rejected.remove(&self.id);
        self.resends = recorded.resends.remove(&self.id).unwrap_or(0);
    }

    /// Replays the recorded replies through the run, each to the call it
    /// answered (its key: part, rung and attempt), so a windowed run's
    /// waves replay whatever order their replies were recorded in; `Some`
    /// outcome (with a reviewer's fix applied) when they end it. The model
    /// is not called; what is left of the replies answers no call the run
    /// makes now, and is dropped.
    pub fn replay(&mut self) -> Option<Outcome<T>> {
        let mut replies = std::mem::take(&mut self.replay);
        loop {
            let rung = self.rung;
            let prompt = self.start().prompt();
            let key = CallKey { part: prompt.part(), rung, attempt: prompt.attempt };
            let recorded = replies.iter().position(|recorded| recorded.key == key)?;
            let reply = replies.remove(recorded).expect("found above").reply;
            if let Next::Done(outcome) = self.start().on_reply(reply)
                && let Some(settled) = self.settle(outcome)
            {
                return Some(self.reviewed(settled));
            }
        }
    }

    /// `outcome`, valid with the reviewer's value when a reviewer fixed the
    /// escalation and the fix still passes all three layers (else as it was).
    fn reviewed(&mut self, outcome: Outcome<T>) -> Outcome<T> {
        let (Some(fix), Some(reviewer)) = (self.fix.take(), self.reviewer) else { return outcome };
        match outcome {
            Outcome::Escalated(escalation) => {
                match reviewer(&escalation, self.document().searchable_text(), fix) {
                    Ok(fixed) => Outcome::Valid(fixed),
                    Err(_) => Outcome::Escalated(escalation),
                }
            }
            valid => valid,
        }
    }
}

/// `Err` naming the first id two documents share.
fn unique_ids(documents: &[Document]) -> Result<(), Error> {
    let mut seen = BTreeSet::new();
    for document in documents {
        if !seen.insert(document.id()) {
            return Err(Error::config(format!(
                "two documents have the id {}: give each its own with Document::with_id",
                crate::quote_prefix(&document.id())
            )));
        }
    }
    Ok(())
}
