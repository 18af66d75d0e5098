//! [`Batches`]: many documents on the Message Batches API (half the price of
//! the Messages API, results within 24 hours), driving the same [`Run`](extract_core::Run) as
//! [`Extractor`](crate::Extractor) does, with the journal [`Bulk`](crate::Bulk) uses.
//!
//! Round k sends one batch (or several, past [`MAX_BATCH_REQUESTS`] requests
//! or [`MAX_BATCH_BYTES`]) holding the prompt of every document that needs
//! attempt k, keyed by `custom_id` (the document id); polls each batch until
//! its `processing_status` is `ended`; streams its results file (JSONL, in
//! any order) and hands each result to its document's `Run`. A document
//! needing a correction goes into round k+1.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};
use tracing::{Instrument, info, warn};

use super::builder::Mode;
use super::client::Client;
use super::request::{self, DocumentAs, ToolChoice};
use super::response;
use crate::{BulkReport, Document, Error, Extractable, Extractor, Journal, Outcome, Progress, Retries};
use extract_core::telemetry as names;
use extract_drive::bulk::{ProgressCallback, Tally};
use extract_drive::clock::{rfc3339, unix_now, unix_seconds};
use extract_drive::engine::{self, Engine, Job};
use extract_drive::http::transport::{Failure, Repeat};
use extract_drive::journal::{Intent, JournalProblem};

/// The most requests the API takes in one message batch.
pub const MAX_BATCH_REQUESTS: usize = 100_000;

/// The largest request body the API takes for one message batch: 256 MB.
pub const MAX_BATCH_BYTES: usize = 256_000_000;

/// How many times one attempt of a document is sent again after a
/// transient fault (`overloaded_error`, `api_error`, `rate_limit_error`,
/// `expired`, `canceled`, or no result at all) before it is failed.
pub const MAX_RESENDS: u32 = 3;

/// How many polls of one batch in a row may fail (after the transport's own
/// retries) before its documents fail for this run.
const MAX_POLL_FAILURES: u32 = 10;

/// The default wait between two polls of a batch: 30 s.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(30);

/// Many documents through the Message Batches API, with the retry policy of
/// [`Run`](extract_core::Run) and an optional journal that makes the run resumable: a batch
/// created and not yet collected is re-attached by its id, never created
/// twice, and every recorded result is replayed through a fresh `Run`.
///
/// A result `errored` with a transient error (`overloaded_error`,
/// `api_error`, `rate_limit_error`), `expired`, `canceled`, or missing from
/// the results file, is sent again in the next batch without spending a
/// validation attempt, at most [`MAX_RESENDS`] times per attempt; then the
/// document is in [`BulkReport::failed`]. `invalid_request_error` (and any
/// other error type) is failed at once, with the API's message.
///
/// ```no_run
/// use extract::anthropic::{Batches, Client};
/// use extract::{Document, Extractable, Retries};
/// use std::time::Duration;
///
/// #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
/// struct Total { total: f64 }
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let report = Batches::new(Client::from_env()?)
///     .retries(Retries::new(2)?)
///     .journal("runs/march-batch.db")?
///     .poll_interval(Duration::from_secs(60))
///     .run::<Total>([Document::text("Total: 12.50").with_id("inv-1")])
///     .await?;
/// println!("{} valid of {}", report.stats.valid(), report.outcomes.len());
/// # Ok(()) }
/// ```
pub struct Batches {
    /// The client and every setting of a run: retries, instructions, token
    /// budget, trace content.
    extractor: Extractor<Client>,
    journal: Option<Journal>,
    poll_interval: Duration,
    max_requests: usize,
    max_bytes: usize,
    progress: Option<ProgressCallback>,
}

impl Batches {
    /// A batch run over `client`'s model and settings, with two retries, no
    /// journal, and [`DEFAULT_POLL_INTERVAL`].
    pub fn new(client: Client) -> Batches {
        Batches::with_extractor(Extractor::new(client))
    }

    /// A batch run with every setting of `extractor`, as [`Bulk::new`](crate::Bulk::new)
    /// takes them: its client, retries, instructions, token budget and
    /// trace content. No journal, and [`DEFAULT_POLL_INTERVAL`].
    pub fn with_extractor(extractor: Extractor<Client>) -> Batches {
        Batches {
            extractor,
            journal: None,
            poll_interval: DEFAULT_POLL_INTERVAL,
            max_requests: MAX_BATCH_REQUESTS,
            max_bytes: MAX_BATCH_BYTES,
            progress: None,
        }
    }

    /// The retry budget: `Retries::new(2)` is at most 3 validation attempts,
    /// so 3 rounds when nothing is resent.
    pub fn retries(mut self, retries: Retries) -> Batches {
        self.extractor = self.extractor.retries(retries);
        self
    }

    /// The caller's instructions, appended to the built-in system block.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Batches {
        self.extractor = self.extractor.instructions(instructions);
        self
    }

    /// The journal that makes the run durable and resumable: a path
    /// (`"runs/march-batch.db"`) is an SQLite database; the same journal
    /// again resumes; one run at a time: a run locks it. `Err` only for an
    /// empty path. Without one, a run that stops (killed, or a batch that
    /// cannot be polled) cannot find its batches again, though the API goes
    /// on processing them. The intent to create each batch is committed
    /// before the create call, and its id as soon as the API answers.
    pub fn journal(mut self, journal: impl Into<Journal>) -> Result<Batches, Error> {
        self.journal = Some(journal.into().checked()?);
        Ok(self)
    }

    /// How long to wait between two polls of a batch still in progress.
    pub fn poll_interval(mut self, interval: Duration) -> Batches {
        self.poll_interval = interval;
        self
    }

    /// Splits a round into batches of at most `requests` requests (1 to
    /// [`MAX_BATCH_REQUESTS`]) and `bytes` bytes of request body (up to
    /// [`MAX_BATCH_BYTES`]); the API's limits by default.
    pub fn batch_limits(mut self, requests: usize, bytes: usize) -> Batches {
        self.max_requests = requests.clamp(1, MAX_BATCH_REQUESTS);
        self.max_bytes = bytes.clamp(1, MAX_BATCH_BYTES);
        self
    }

    /// Calls `report` after every finished document (to draw a progress
    /// bar). A panic in `report` is caught and traced; the run goes on.
    pub fn on_progress(mut self, report: impl Fn(&Progress) + Send + Sync + 'static) -> Batches {
        self.progress = Some(Arc::new(report));
        self
    }

    /// The client requests go through.
    fn client(&self) -> &Client {
        self.extractor.model()
    }

    /// Runs every document to an outcome. `Err` only for the journal's I/O
    /// and for configuration (two documents with one id, an id the API
    /// cannot take as `custom_id`); a document's own failure is in
    /// [`BulkReport::failed`].
    pub async fn run<T>(&self, documents: impl IntoIterator<Item = Document>) -> Result<BulkReport<T>, Error>
    where
        T: Extractable + Send + 'static,
    {
        self.run_all(documents).await
    }

    /// [`run`](Batches::run), blocking, on a runtime of its own: for
    /// programs without an async runtime. `Err` (configuration) when called
    /// inside one, where `.run(..).await` is the call.
    pub fn run_blocking<T>(
        &self,
        documents: impl IntoIterator<Item = Document>,
    ) -> Result<BulkReport<T>, Error>
    where
        T: Extractable + Send + 'static,
    {
        extract_drive::blocking::block_on(
            "a blocking batches run",
            ".run(..).await",
            self.run_all(documents),
        )?
    }

    async fn run_all<T>(&self, documents: impl IntoIterator<Item = Document>) -> Result<BulkReport<T>, Error>
    where
        T: Extractable + Send + 'static,
    {
        self.extractor.check_prices()?;
        if self.extractor.rungs() > 1 {
            return Err(Error::config(
                "Message Batches take one model: a ladder of models (Extractor::then) is for Extractor and Bulk",
            ));
        }
        if let Some(windows) = self.extractor.windows_setting() {
            return Err(Error::config(format!(
                "Message Batches ask each document in one request, and windows ({windows}) ask a long document \
                 window by window, each call after the one before: windows are for Extractor and Bulk"
            )));
        }
        let mut engine = Engine::open(
            documents,
            self.journal.as_ref(),
            &T::tool(),
            self.extractor.instructions_text(),
            None,
        )
        .await?;
        let asked_again = engine.asked_again();
        // On a journal many workers share, one at a time coordinates the
        // run's batches, under a lease on the run it renews; the others wait
        // for the run's end (or for a coordinator that died to lose its lease).
        #[cfg(feature = "postgres")]
        let _coordinating = engine.coordinate().await?;
        let mut ledger = engine.batches();
        // The Message Batches API bills every token at half price.
        let billed = self.extractor.clone().billed_at(self.extractor.rate().map(|rate| rate.scaled(0.5)));
        let jobs = engine.jobs::<T, Client>(&billed);
        let run_span = engine.trace_run(&T::tool().name, jobs.len());
        let mut state = State {
            spans: (0..jobs.len()).map(|_| None).collect(),
            model: self.client().model().to_string(),
            results: (0..jobs.len()).map(|_| None).collect(),
            index: jobs.iter().enumerate().map(|(i, job)| (job.id().to_string(), i)).collect(),
            jobs,
            handled: std::mem::take(&mut ledger.handled),
            engine,
            tally: Tally::new(0, self.progress.clone()),
            forced_refused: self.client().forced_refused.clone(),
            forced: BTreeSet::new(),
        };
        state.tally = Tally::new(state.jobs.len(), self.progress.clone());
        for i in 0..state.jobs.len() {
            if let Some(problem) = state.jobs[i].problem() {
                // A bad id would be a bad custom_id, which fails its whole batch: it fails alone, here.
                let id = state.jobs[i].id().to_string();
                state.fail(&id, Error::config(problem), None).await?;
            } else if let Some(outcome) = state.jobs[i].replay() {
                let result = Ok(outcome);
                state.tally.finished(state.jobs[i].id(), &result).deliver();
                state.results[i] = Some(result);
            }
        }

        // A batch an earlier run was about to create, whose id it never
        // recorded, is looked for among the API's batches before anything
        // else is sent: found, it is collected; not found, the run stops.
        for intent in std::mem::take(&mut ledger.intents) {
            let batch = self.find_intended(&state, &intent).await?;
            ledger.open.push((batch, intent.documents));
        }
        // A batch an earlier run created and did not collect is collected
        // first (sent with the choice this client makes now, as far as it knows).
        for (batch, documents) in std::mem::take(&mut ledger.open) {
            if self.client().forces_tool_choice() {
                state.forced.insert(batch.clone());
            }
            info!(target: "extract", %batch, "re-attaching a message batch created by an earlier run");
            self.collect(&mut state, &batch, &documents).await?;
        }
        let mut round = 0;
        loop {
            let pending: Vec<usize> = (0..state.jobs.len()).filter(|&i| state.results[i].is_none()).collect();
            if pending.is_empty() {
                break;
            }
            round += 1;
            info!(target: "extract", round, documents = pending.len(), "sending a round of message batches");
            let round_span = tracing::info_span!(
                target: "extract",
                parent: &run_span,
                "extract.batches.round",
                { names::OTEL_NAME } = tracing::field::display(format_args!("extract.batches.round {round}")),
                { names::OTEL_KIND } = "internal",
                { names::RUN_DOCUMENTS } = i64::try_from(pending.len()).unwrap_or(i64::MAX),
            );
            // The round's calls and results sit in its span.
            async {
                let mut created = Vec::new();
                let forced = self.client().forces_tool_choice();
                for chunk in self.requests(&mut state, &pending).await? {
                    let documents: Vec<(String, u32)> = chunk
                        .members
                        .iter()
                        .map(|&i| (state.jobs[i].id().to_string(), state.jobs[i].attempt()))
                        .collect();
                    // The intent is committed before the create call: a run
                    // killed in between finds its batch again, or says so.
                    let listed = chunk
                        .members
                        .iter()
                        .map(|&i| {
                            let job = &state.jobs[i];
                            (job.id().to_string(), job.attempt(), job.content().to_string())
                        })
                        .collect();
                    let intent = state.engine.intent(unix_now(), listed).await?;
                    match self.create(chunk.body).await {
                        Ok(batch) => {
                            if let Err(error) = state.engine.batch_created(intent, &batch).await {
                                // Its id could not be recorded: the batch is cancelled
                                // rather than left to be billed unknown to the journal.
                                return Err(self.cancel_unrecorded(&batch, error).await);
                            }
                            if forced {
                                state.forced.insert(batch.clone());
                            }
                            created.push((batch, documents));
                        }
                        Err(error) => {
                            let error = match error {
                                // No answer after the body went out: the API may have made the batch.
                                Error::Transport(message) => Error::transport(format!(
                                    "{message}; the batch may have been created all the same, so it was not \
                                     sent again: look for it in the Console before running these documents again"
                                )),
                                error => error,
                            };
                            if !matches!(error, Error::Transport(_)) {
                                // The API answered: no batch was made.
                                state.engine.abandon(intent).await?;
                            }
                            for (id, _) in &documents {
                                state.fail(id, error.clone(), None).await?;
                            }
                        }
                    }
                }
                for (batch, documents) in created {
                    self.collect(&mut state, &batch, &documents).await?;
                }
                Ok::<(), Error>(())
            }
            .instrument(round_span)
            .await?;
        }
        let results =
            state.jobs.iter().zip(state.results).map(|(job, result)| {
                (job.id().to_string(), result.expect("every document ends with a result"))
            });
        let mut report = BulkReport::from_results(results);
        report.asked_again = asked_again;
        state.engine.finish_run(report.stats.valid(), report.stats.escalated(), report.failed.len());
        Ok(report)
    }

    /// Cancels `batch`, made but not recorded because the journal failed
    /// with `error`; the error to end the run with, saying what happened.
    async fn cancel_unrecorded(&self, batch: &str, error: Error) -> Error {
        let path = format!("/v1/messages/batches/{batch}/cancel");
        let cancelled = self
            .client()
            .transport
            .send_to(Method::POST, &path, None, response::api_error, Repeat::Always)
            .await;
        let said = match cancelled {
            Ok(_) => format!(
                "the message batch {batch} was created, and cancelled since its id could not be recorded"
            ),
            Err(failure) => format!(
                "the message batch {batch} was created, its id could not be recorded, and cancelling it failed \
                 ({}): cancel it in the Console",
                Error::from(failure)
            ),
        };
        // The failure keeps its kind; the batch's fate joins its message.
        match error {
            Error::Io { context, source } => Error::Io { context: format!("{context}; {said}"), source },
            Error::Config(message) => Error::Config(format!("{message}; {said}")),
            Error::Transport(message) => Error::Transport(format!("{message}; {said}")),
            Error::WorkerPanicked(message) => Error::WorkerPanicked(format!("{message}; {said}")),
            Error::Journal { journal, problem: JournalProblem::Unreadable(what) } => {
                Error::Journal { journal, problem: JournalProblem::Unreadable(format!("{what}; {said}")) }
            }
            // A failure whose message is not its own text cannot take it: it is logged.
            other => {
                tracing::error!(target: "extract", error = %other, "{said}");
                other
            }
        }
    }

    /// The batch an earlier run meant to create with `intent`, found among
    /// the API's batches by its creation time and request count; `Err`
    /// naming what may exist and how to go on when there is not exactly one.
    async fn find_intended<T: Extractable + Send + 'static>(
        &self,
        state: &State<T>,
        intent: &Intent,
    ) -> Result<String, Error> {
        // Created after the intent was committed, within the create call's
        // time (with a margin for the clocks).
        let window = (intent.created_at - 300)..=(intent.created_at + 3600);
        let mut found = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let mut path = "/v1/messages/batches?limit=100".to_string();
            if let Some(after) = &after {
                path.push_str(&format!("&after_id={after}"));
            }
            let answer = self
                .client()
                .transport
                .send_to(Method::GET, &path, None, response::api_error, Repeat::Always)
                .await?;
            let page: BatchList = serde_json::from_slice(&answer).map_err(|e| {
                Error::invalid_response(format!(
                    "the list of message batches is not what the API documents: {e}"
                ))
            })?;
            let mut older = false;
            for batch in &page.data {
                let Some(created) = batch.created_at.as_deref().and_then(unix_seconds) else { continue };
                older |= created < *window.start();
                if window.contains(&created) && batch.request_counts.total() == intent.requests {
                    found.push(batch.id.clone());
                }
            }
            // Newest first: once a page reaches before the window, the rest does too.
            if !page.has_more || older || page.last_id.is_none() {
                break;
            }
            after = page.last_id;
        }
        let when = rfc3339(intent.created_at);
        let shown = self.journal.as_ref().map(Journal::shown).unwrap_or_default();
        if let [batch] = found.as_slice() {
            info!(target: "extract", %batch, "found the message batch an earlier run created without recording its id");
            state.engine.batch_created(Some(intent.number), batch).await?;
            return Ok(batch.clone());
        }
        Err(Error::Journal {
            journal: shown,
            problem: JournalProblem::UnconfirmedBatch {
                created_at: when,
                requests: intent.requests,
                documents: intent.documents.iter().map(|(id, _)| id.clone()).collect(),
                candidates: found,
            },
        })
    }

    /// Forgets the batches an earlier run was creating when it stopped
    /// without recording the API's answer (after a run stopped with an
    /// error saying so, and you looked in the Console): the next run sends
    /// their documents again. Returns how many were forgotten.
    pub async fn forget_unconfirmed<T: Extractable>(&self) -> Result<usize, Error> {
        let journal = self.journal.as_ref().ok_or_else(|| Error::config("forgetting needs a journal"))?;
        let mut engine = Engine::open(Vec::new(), Some(journal), &T::tool(), None, None).await?;
        let intents = engine.batches().intents;
        for intent in &intents {
            engine.abandon(Some(intent.number)).await?;
        }
        Ok(intents.len())
    }

    /// Cancels every batch the journal holds as created and not collected,
    /// and returns their ids. A later [`run`](Batches::run) on the journal
    /// collects them (their canceled requests are sent again).
    pub async fn cancel<T: Extractable>(&self) -> Result<Vec<String>, Error> {
        let journal = self.journal.as_ref().ok_or_else(|| Error::config("cancelling needs a journal"))?;
        let mut engine = Engine::open_for_reading(Vec::new(), journal, &T::tool(), None, None).await?;
        let (mut cancelled, mut failures) = (Vec::new(), Vec::new());
        for (batch, _) in engine.batches().open {
            let path = format!("/v1/messages/batches/{batch}/cancel");
            match self
                .client()
                .transport
                .send_to(Method::POST, &path, None, response::api_error, Repeat::Always)
                .await
            {
                Ok(_) => cancelled.push(batch),
                Err(failure) => failures.push(format!("{batch}: {}", Error::from(failure))),
            }
        }
        if failures.is_empty() {
            Ok(cancelled)
        } else {
            Err(Error::transport(format!(
                "cancelled {} of the open batches; these could not be: {}",
                cancelled.len(),
                failures.join("; ")
            )))
        }
    }

    /// The requests of one round, split into batch bodies by the limits. A
    /// document whose request cannot be built is failed.
    async fn requests<T: Extractable + Send + 'static>(
        &self,
        state: &mut State<T>,
        pending: &[usize],
    ) -> Result<Vec<Chunk>, Error> {
        let choice =
            if self.client().forces_tool_choice() { ToolChoice::Forced } else { ToolChoice::AutoStrict };
        let document_as = if self.client().document_blocks { DocumentAs::Block } else { DocumentAs::Text };
        let mut chunks: Vec<Chunk> = Vec::new();
        for &i in pending {
            let job = &mut state.jobs[i];
            let body = request::body(
                job.start().prompt(),
                &self.client().model,
                self.client().max_tokens,
                self.client().ask(choice),
                document_as,
            );
            let line = body.and_then(|params| {
                serde_json::to_vec(&json!({ "custom_id": job.id(), "params": params }))
                    .map_err(|e| Error::config(format!("cannot serialize the request: {e}")))
            });
            let line = match line {
                Ok(line) if line.len() + ENVELOPE > self.max_bytes => Err(Error::config(format!(
                    "the request for document {} is {} bytes, more than a message batch takes ({})",
                    crate::quote_prefix(job.id()),
                    line.len(),
                    self.max_bytes
                ))),
                line => line,
            };
            let line = match line {
                Ok(line) => line,
                Err(error) => {
                    let id = job.id().to_string();
                    state.fail(&id, error, None).await?;
                    continue;
                }
            };
            let fits = chunks.last().is_some_and(|chunk| {
                chunk.members.len() < self.max_requests
                    && chunk.body.len() + 1 + line.len() + 2 <= self.max_bytes
            });
            if !fits {
                chunks.push(Chunk { body: b"{\"requests\":[".to_vec(), members: Vec::new() });
            }
            let chunk = chunks.last_mut().expect("a chunk was just pushed");
            if !chunk.members.is_empty() {
                chunk.body.push(b',');
            }
            chunk.body.extend_from_slice(&line);
            chunk.members.push(i);
        }
        for chunk in &mut chunks {
            chunk.body.extend_from_slice(b"]}");
        }
        Ok(chunks)
    }

    /// Creates one message batch; its id.
    async fn create(&self, body: Vec<u8>) -> Result<String, Error> {
        let answer = self
            .client()
            .transport
            .send_to(
                Method::POST,
                "/v1/messages/batches",
                Some(&body),
                response::api_error,
                Repeat::WhenUnsent,
            )
            .await?;
        let batch: BatchObject = parse_batch(&answer)?;
        info!(target: "extract", batch = %batch.id, "created a message batch");
        Ok(batch.id)
    }

    /// Polls `batch` until it has ended, then hands each of its results to
    /// its document; a document without a result is sent again.
    async fn collect<T: Extractable + Send + 'static>(
        &self,
        state: &mut State<T>,
        batch: &str,
        documents: &[(String, u32)],
    ) -> Result<(), Error> {
        let ended = match self.wait_for(batch).await {
            Ok(ended) => ended,
            // Gone only when the API says so: any other 404 (a proxy, a
            // wrong base URL) is a transport error, and nothing is resent.
            Err(Error::Api { status: 404, error_type, message, .. }) if error_type == "not_found_error" => {
                // The API no longer has it (results are kept 29 days): its
                // documents are sent again, and the journal forgets it.
                warn!(target: "extract", %batch, %message, "the message batch is gone; its documents are sent again");
                for id in state.unhandled(batch, documents) {
                    state.resend(&id, batch, "the API no longer has its batch", true).await?;
                }
                return state.collected(batch).await;
            }
            Err(error) => {
                let error = match error {
                    Error::Api { status: 404, error_type, message, .. } => Error::transport(format!(
                        "polling the message batch {batch} got a 404 that is not the API's not_found_error \
                         ({error_type}: {message}); the batch is kept in the journal for a later run"
                    )),
                    error => error,
                };
                // The batch stays open in the journal: a later run re-attaches it.
                for (id, attempt) in documents {
                    if state.awaits(id, *attempt) {
                        state.fail(id, error.clone(), None).await?;
                    }
                }
                return Ok(());
            }
        };
        let path = ended
            .results_url
            .as_deref()
            .and_then(|url| results_path(url, self.client().transport.base_url()))
            .unwrap_or_else(|| format!("/v1/messages/batches/{batch}/results"));
        let attempts: BTreeMap<&str, u32> = documents.iter().map(|(id, a)| (id.as_str(), *a)).collect();
        let tool = T::tool().name;
        let mode = self.client().mode;
        // The lines are handled (and journalled, off the async threads) as
        // they arrive, while the rest of the file is read.
        let (lines, mut arriving) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let fetch = async move {
            let mut handle = |line: &[u8]| -> Result<(), Failure> {
                let _ = lines.send(line.to_vec());
                Ok(())
            };
            Ok::<_, Error>(self.client().transport.get_lines(&path, response::api_error, &mut handle).await)
        };
        let handle = async {
            while let Some(line) = arriving.recv().await {
                state.result(batch, &attempts, (&tool, mode), &line).await?;
            }
            Ok::<_, Error>(())
        };
        let (fetched, ()) = tokio::try_join!(fetch, handle)?;
        if let Err(failure) = fetched {
            let error = Error::from(failure);
            for id in state.unhandled(batch, documents) {
                state.fail(&id, error.clone(), None).await?;
            }
            return Ok(());
        }
        for id in state.unhandled(batch, documents) {
            state.resend(&id, batch, "the results file holds no result for it", true).await?;
        }
        state.collected(batch).await
    }

    /// Polls `batch` until its `processing_status` is `ended`.
    async fn wait_for(&self, batch: &str) -> Result<BatchObject, Error> {
        let path = format!("/v1/messages/batches/{batch}");
        let mut failures = 0;
        loop {
            let answer = match self
                .client()
                .transport
                .send_to(Method::GET, &path, None, response::api_error, Repeat::Always)
                .await
            {
                Ok(answer) => answer,
                // A batch takes up to a day: an outage while it runs is waited out.
                Err(failure) => {
                    let error = Error::from(failure);
                    let passing = match &error {
                        Error::Api { status, .. } => *status == 429 || *status >= 500,
                        Error::Transport(_) => true,
                        _ => false,
                    };
                    failures += 1;
                    if !passing || failures >= MAX_POLL_FAILURES {
                        return Err(error);
                    }
                    warn!(target: "extract", %batch, %error, failures, "polling the message batch failed; polling again");
                    tokio::time::sleep(self.poll_interval).await;
                    continue;
                }
            };
            failures = 0;
            let object = parse_batch(&answer)?;
            if object.processing_status == "ended" {
                return Ok(object);
            }
            tracing::debug!(target: "extract", %batch, status = %object.processing_status, "message batch not ended yet");
            tokio::time::sleep(self.poll_interval).await;
        }
    }
}

impl std::fmt::Debug for Batches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batches")
            .field("extractor", &self.extractor)
            .field("journal", &self.journal)
            .field("poll_interval", &self.poll_interval)
            .field("max_requests", &self.max_requests)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

/// The bytes a batch body adds around one request: `{"requests":[` and `]}`.
const ENVELOPE: usize = 15;

/// One batch body of a round and the entries it holds.
struct Chunk {
    body: Vec<u8>,
    members: Vec<usize>,
}

/// The run's documents, what it has handled, and its journal.
struct State<T> {
    jobs: Vec<Job<T>>,
    /// Each document's extraction span, from its first result to its last.
    spans: Vec<Option<tracing::Span>>,
    /// The model the batches ask (the chat spans' `gen_ai.request.model`).
    model: String,
    /// Each job's result, once it has one.
    results: Vec<Option<Result<Outcome<T>, Error>>>,
    index: BTreeMap<String, usize>,
    /// (batch id, document id) of every result handled, this run or an earlier one.
    handled: BTreeSet<(String, String)>,
    engine: Engine,
    tally: Tally,
    /// The client's memory that its model refused a forced tool choice.
    forced_refused: Arc<AtomicBool>,
    /// The batches sent with a forced tool choice.
    forced: BTreeSet<String>,
}

impl<T: Extractable + Send + 'static> State<T> {
    /// Whether document `id` still waits for the result of its `attempt`.
    fn awaits(&self, id: &str, attempt: u32) -> bool {
        self.index.get(id).is_some_and(|&i| self.results[i].is_none() && self.jobs[i].attempt() == attempt)
    }

    /// The documents of `batch` still waiting for their result from it.
    fn unhandled(&self, batch: &str, documents: &[(String, u32)]) -> Vec<String> {
        documents
            .iter()
            .filter(|(id, attempt)| {
                self.awaits(id, *attempt) && !self.handled.contains(&(batch.to_string(), id.clone()))
            })
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Hands one line of `batch`'s results file to its document.
    async fn result(
        &mut self,
        batch: &str,
        attempts: &BTreeMap<&str, u32>,
        (tool, mode): (&str, Mode),
        line: &[u8],
    ) -> Result<(), Error> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let parsed: ResultLine = match serde_json::from_slice(line) {
            Ok(parsed) => parsed,
            Err(e) => {
                // Its document, if any, has no result and is sent again.
                warn!(target: "extract", %batch, error = %e, "a line of the results file is not a result");
                return Ok(());
            }
        };
        let id = parsed.custom_id;
        let Some(&attempt) = attempts.get(id.as_str()) else {
            warn!(target: "extract", %batch, custom_id = %id, "the results file holds a result for a request the batch did not have");
            return Ok(());
        };
        let key = (batch.to_string(), id.clone());
        if self.handled.contains(&key) || !self.awaits(&id, attempt) {
            return Ok(());
        }
        match parsed.result {
            BatchResult::Succeeded { message } => {
                let bytes = serde_json::to_vec(&message).unwrap_or_default();
                match response::reply(&bytes, tool, mode) {
                    Ok(reply) => self.reply(&id, batch, reply).await,
                    Err(error) => self.fail(&id, error, Some(batch)).await,
                }
            }
            BatchResult::Errored { error } => {
                let error = error.get("error").filter(|e| e.is_object()).unwrap_or(&error);
                let error_type =
                    error.get("type").and_then(Value::as_str).unwrap_or("unknown_error").to_string();
                let message = error.get("message").and_then(Value::as_str).unwrap_or("").to_string();
                let refused = extract_drive::http::transport::ApiError {
                    error_type: error_type.clone(),
                    message: message.clone(),
                    error_code: None,
                    request_id: None,
                    param: None,
                };
                if response::rejects_forced_tool_choice(&refused, 400) && self.forced.contains(batch) {
                    self.forced_refused.store(true, Ordering::Relaxed);
                    // As the client does: the next round asks with `auto` and the strict tool.
                    warn!(target: "extract", api_message = %message, "the model refused a forced tool_choice; the next batches send tool_choice auto with a strict tool");
                    self.resend(&id, batch, "the model refused a forced tool_choice", false).await
                } else if TRANSIENT.contains(&error_type.as_str()) {
                    self.resend(&id, batch, &format!("errored: {error_type}: {message}"), true).await
                } else {
                    let error = Error::api(response::status_of(&error_type), error_type, message, None);
                    self.fail(&id, error, Some(batch)).await
                }
            }
            BatchResult::Expired => self.resend(&id, batch, "expired", true).await,
            BatchResult::Canceled => self.resend(&id, batch, "canceled", true).await,
            BatchResult::Unknown => {
                let error = Error::invalid_response(
                    "the results file holds a result of a type this client does not know",
                );
                self.fail(&id, error, Some(batch)).await
            }
        }
    }

    /// A reply for `id`: recorded, judged and committed by the engine
    /// before the run acts on it.
    async fn reply(&mut self, id: &str, batch: &str, reply: crate::Reply) -> Result<(), Error> {
        let i = self.index[id];
        // The result is the document's call: a chat span under its extraction's.
        let document = self.document_span(i);
        let attempt = self.jobs[i].attempt();
        let chat = document.in_scope(|| engine::chat_span_of(&self.model, "anthropic", attempt));
        engine::record_reply(&chat, &reply);
        let outcome = self.engine.answer(&mut self.jobs[i], reply, Some(batch)).instrument(chat).await?;
        self.handled.insert((batch.to_string(), id.to_string()));
        if let Some(outcome) = outcome {
            if let Some(span) = self.spans[i].take() {
                engine::record_outcome(&span, &outcome);
            }
            let result = Ok(outcome);
            self.tally.finished(id, &result).deliver();
            self.results[i] = Some(result);
        }
        Ok(())
    }

    /// `id`'s current attempt goes into the next batch again, or, past
    /// [`MAX_RESENDS`] `counted` resends, the document fails. A resend that
    /// is not `counted` (the client's own switch of tool choice) is free.
    async fn resend(&mut self, id: &str, batch: &str, reason: &str, counted: bool) -> Result<(), Error> {
        let i = self.index[id];
        if counted && self.jobs[i].resends() >= MAX_RESENDS {
            let error = Error::transport(format!(
                "the Message Batches API gave no usable result for attempt {} after {MAX_RESENDS} resends; the last: {reason}",
                self.jobs[i].attempt()
            ));
            return self.fail(id, error, Some(batch)).await;
        }
        self.engine.resent(&mut self.jobs[i], batch, reason, counted).await?;
        self.handled.insert((batch.to_string(), id.to_string()));
        Ok(())
    }

    /// `id` fails with `error` (a resumed run tries it again).
    async fn fail(&mut self, id: &str, error: Error, batch: Option<&str>) -> Result<(), Error> {
        let i = self.index[id];
        let error = self.engine.fail(&mut self.jobs[i], error, batch).await?;
        let span = self.spans[i].take().unwrap_or_else(|| self.engine.extraction_span(&mut self.jobs[i]));
        span.record(names::ERROR_TYPE, error.kind().as_str());
        if let Some(batch) = batch {
            self.handled.insert((batch.to_string(), id.to_string()));
        }
        let result = Err(error);
        self.tally.finished(id, &result).deliver();
        self.results[i] = Some(result);
        Ok(())
    }

    /// The span of document `i`'s extraction, opened at its first result:
    /// a root span linked to the run's.
    fn document_span(&mut self, i: usize) -> tracing::Span {
        if self.spans[i].is_none() {
            self.spans[i] = Some(self.engine.extraction_span(&mut self.jobs[i]));
        }
        self.spans[i].clone().expect("opened above")
    }

    /// Records that every result of `batch` has been handled.
    async fn collected(&self, batch: &str) -> Result<(), Error> {
        self.engine.collected(batch).await
    }
}

/// The error types a batch result is sent again for.
const TRANSIENT: [&str; 3] = ["overloaded_error", "api_error", "rate_limit_error"];

/// What to request under the base URL for a results URL: the rest of it
/// when it lies under the client's own base URL, else `None` (and the
/// documented path is used), so the key goes only where the client is
/// configured to send it.
fn results_path(url: &str, base: &str) -> Option<String> {
    let rest = url.strip_prefix(base)?;
    rest.starts_with('/').then(|| rest.to_string())
}

/// A message batch, as create and retrieve answer.
#[derive(Debug, Deserialize)]
struct BatchObject {
    id: String,
    processing_status: String,
    #[serde(default)]
    results_url: Option<String>,
}

fn parse_batch(body: &[u8]) -> Result<BatchObject, Error> {
    serde_json::from_slice(body).map_err(|e| {
        Error::invalid_response(format!(
            "the Message Batches API returned a body that is not a message batch ({e}); it begins: {}",
            extract_drive::http::transport::body_prefix(body)
        ))
    })
}

/// A page of the list of message batches (newest first).
#[derive(Debug, Deserialize)]
struct BatchList {
    data: Vec<ListedBatch>,
    #[serde(default)]
    has_more: bool,
    #[serde(default)]
    last_id: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ListedBatch {
    id: String,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    request_counts: RequestCounts,
}

#[derive(Debug, Default, Deserialize)]
struct RequestCounts {
    #[serde(default)]
    processing: u64,
    #[serde(default)]
    succeeded: u64,
    #[serde(default)]
    errored: u64,
    #[serde(default)]
    canceled: u64,
    #[serde(default)]
    expired: u64,
}

impl RequestCounts {
    fn total(&self) -> u64 {
        self.processing + self.succeeded + self.errored + self.canceled + self.expired
    }
}

/// One line of a results file.
#[derive(Deserialize)]
struct ResultLine {
    custom_id: String,
    result: BatchResult,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BatchResult {
    Succeeded {
        message: Value,
    },
    Errored {
        error: Value,
    },
    Canceled,
    Expired,
    #[serde(other)]
    Unknown,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_urls_are_followed_only_under_the_base_url() {
        let base = "https://api.anthropic.com";
        assert_eq!(
            results_path("https://api.anthropic.com/v1/messages/batches/b1/results", base).as_deref(),
            Some("/v1/messages/batches/b1/results")
        );
        let gateway = "http://gw.internal/anthropic";
        assert_eq!(
            results_path("http://gw.internal/anthropic/v1/messages/batches/b1/results?page=2", gateway)
                .as_deref(),
            Some("/v1/messages/batches/b1/results?page=2")
        );
        assert_eq!(results_path("http://evil.example/x", base), None);
        assert_eq!(results_path("https://api.anthropic.com@evil.example/r", base), None);
        assert_eq!(results_path("https://api.anthropic.com.evil.example/r", base), None);
    }

    #[test]
    fn errored_results_name_a_status() {
        assert_eq!(response::status_of("invalid_request_error"), 400);
        assert_eq!(response::status_of("overloaded_error"), 529);
        assert_eq!(response::status_of("something_new"), 500);
    }
}
