//! [`Batches`]: many documents on the Message Batches API (half the price of
//! the Messages API, results within 24 hours), driving the same [`Run`] as
//! [`Extractor`](crate::Extractor) does, with the journal [`Bulk`](crate::Bulk) uses.
//!
//! Round k sends one batch (or several, past [`MAX_BATCH_REQUESTS`] requests
//! or [`MAX_BATCH_BYTES`]) holding the prompt of every document that needs
//! attempt k, keyed by `custom_id` (the document id); polls each batch until
//! its `processing_status` is `ended`; streams its results file (JSONL, in
//! any order) and hands each result to its document's `Run`. A document
//! needing a correction goes into round k+1.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};
use tracing::{info, warn};

use super::builder::Mode;
use super::client::Client;
use super::request::{self, DocumentAs, ToolChoice};
use super::response;
use crate::drive::bulk::{ProgressCallback, Tally, begin_run, journal_path, with_review};
use crate::drive::http::transport::{Failure, Repeat};
use crate::drive::journal::{Journal, Recorded};
use crate::{BulkReport, Document, Error, Extractable, Extractor, Next, Outcome, Progress, Retries, Run};

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
/// [`Run`] and an optional journal that makes the run resumable: a batch
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
///     .journal("runs/march-batch.journal")?
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
    journal: Option<PathBuf>,
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

    /// The journal that makes the run durable and resumable (the same path
    /// again resumes; one run at a time: a run locks it). `Err` only for an
    /// empty path. Without one, a run that stops (killed, or a batch that
    /// cannot be polled) cannot find its batches again, though the API goes
    /// on processing them.
    pub fn journal(mut self, path: impl Into<PathBuf>) -> Result<Batches, Error> {
        self.journal = Some(journal_path(path)?);
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
        let (documents, journal, mut recorded) = begin_run::<T>(documents, self.journal.as_deref())?;
        let mut state = State {
            entries: Vec::with_capacity(documents.len()),
            index: BTreeMap::new(),
            handled: std::mem::take(&mut recorded.handled),
            journal,
            tally: Tally::new(documents.len(), self.progress.clone()),
            forced_refused: self.client().forced_refused.clone(),
            forced: BTreeSet::new(),
        };
        for document in documents {
            let entry = self.entry::<T>(document, &mut recorded);
            state.index.insert(entry.id.clone(), state.entries.len());
            if let Some(result) = &entry.result {
                state.tally.finished(&entry.id, result).deliver();
            }
            state.entries.push(entry);
        }

        // A batch an earlier run created and did not collect is collected
        // first (sent with the choice this client makes now, as far as it knows).
        for (batch, documents) in std::mem::take(&mut recorded.open_batches) {
            if self.client().forces_tool_choice() {
                state.forced.insert(batch.clone());
            }
            info!(target: "extract", %batch, "re-attaching a message batch created by an earlier run");
            self.collect(&mut state, &batch, &documents).await?;
        }
        let mut round = 0;
        loop {
            let pending: Vec<usize> =
                (0..state.entries.len()).filter(|&i| state.entries[i].result.is_none()).collect();
            if pending.is_empty() {
                break;
            }
            round += 1;
            info!(target: "extract", round, documents = pending.len(), "sending a round of message batches");
            let mut created = Vec::new();
            let forced = self.client().forces_tool_choice();
            for chunk in self.requests(&mut state, &pending)? {
                let documents: Vec<(String, u32)> = chunk
                    .members
                    .iter()
                    .map(|&i| (state.entries[i].id.clone(), state.entries[i].run.attempt()))
                    .collect();
                match self.create(chunk.body).await {
                    Ok(batch) => {
                        state.journal(|j| j.batch_created(&batch, &documents))?;
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
                        for (id, _) in &documents {
                            state.fail(id, error.clone(), None)?;
                        }
                    }
                }
            }
            for (batch, documents) in created {
                self.collect(&mut state, &batch, &documents).await?;
            }
        }
        let results = state.entries.into_iter().map(|entry| {
            let result = entry.result.expect("every document ends with a result");
            (entry.id, result)
        });
        Ok(BulkReport::from_results(results))
    }

    /// Cancels every batch the journal holds as created and not collected,
    /// and returns their ids. A later [`run`](Batches::run) on the journal
    /// collects them (their canceled requests are sent again).
    pub async fn cancel<T: Extractable>(&self) -> Result<Vec<String>, Error> {
        let path = self.journal.as_ref().ok_or_else(|| Error::config("cancelling needs a journal"))?;
        let (_, recorded) = Journal::open(path, &T::tool())?;
        let (mut cancelled, mut failures) = (Vec::new(), Vec::new());
        for (batch, _) in recorded.open_batches {
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

    /// One document's entry: its run, with the recorded replies replayed.
    fn entry<T: Extractable + Send + 'static>(
        &self,
        document: Document,
        recorded: &mut Recorded,
    ) -> Entry<T> {
        let id = document.id().into_owned();
        let text = document.searchable_text().unwrap_or_default().to_string();
        // A bad id would be a bad custom_id, which fails its whole batch: it fails alone, here.
        let problem = document.problem();
        let mut run = self.extractor.configure(Run::<T>::for_type(document, self.extractor.retry_budget()));
        let review = recorded.reviews.remove(&id);
        let mut result = None;
        for reply in recorded.replies.remove(&id).unwrap_or_default() {
            if let Next::Done(outcome) = run.on_reply(reply) {
                result = Some(with_review(Ok(outcome), review.clone(), &text));
                break;
            }
        }
        let resends = recorded.resends.remove(&id).unwrap_or(0);
        if let Some(problem) = problem {
            result = Some(Err(Error::config(problem)));
        }
        Entry { id, text, run, review, resends, result }
    }

    /// The requests of one round, split into batch bodies by the limits. A
    /// document whose request cannot be built is failed.
    fn requests<T: Extractable + Send + 'static>(
        &self,
        state: &mut State<T>,
        pending: &[usize],
    ) -> Result<Vec<Chunk>, Error> {
        let choice =
            if self.client().forces_tool_choice() { ToolChoice::Forced } else { ToolChoice::AutoStrict };
        let document_as = if self.client().document_blocks { DocumentAs::Block } else { DocumentAs::Text };
        let mut chunks: Vec<Chunk> = Vec::new();
        for &i in pending {
            let entry = &state.entries[i];
            let body = request::body(
                entry.run.prompt(),
                &self.client().model,
                self.client().max_tokens,
                self.client().ask(choice),
                document_as,
            );
            let line = body.and_then(|params| {
                serde_json::to_vec(&json!({ "custom_id": entry.id, "params": params }))
                    .map_err(|e| Error::config(format!("cannot serialize the request: {e}")))
            });
            let line = match line {
                Ok(line) if line.len() + ENVELOPE > self.max_bytes => Err(Error::config(format!(
                    "the request for document {} is {} bytes, more than a message batch takes ({})",
                    crate::quote_prefix(&entry.id),
                    line.len(),
                    self.max_bytes
                ))),
                line => line,
            };
            let line = match line {
                Ok(line) => line,
                Err(error) => {
                    let id = entry.id.clone();
                    state.fail(&id, error, None)?;
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
            Err(Error::Api { status: 404, message, .. }) => {
                // The API no longer has it (results are kept 29 days): its
                // documents are sent again, and the journal forgets it.
                warn!(target: "extract", %batch, %message, "the message batch is gone; its documents are sent again");
                for id in state.unhandled(batch, documents) {
                    state.resend(&id, batch, "the API no longer has its batch", true)?;
                }
                return state.journal(|j| j.collected(batch));
            }
            Err(error) => {
                // The batch stays open in the journal: a later run re-attaches it.
                for (id, attempt) in documents {
                    if state.awaits(id, *attempt) {
                        state.fail(id, error.clone(), None)?;
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
        let mut handle = |line: &[u8]| -> Result<(), Failure> {
            state.result(batch, &attempts, (&tool, mode), line).map_err(|e| Failure::Abort(Box::new(e)))
        };
        let fetched = self.client().transport.get_lines(&path, response::api_error, &mut handle).await;
        match fetched {
            Err(Failure::Abort(error)) => return Err(*error),
            Err(failure) => {
                let error = Error::from(failure);
                for id in state.unhandled(batch, documents) {
                    state.fail(&id, error.clone(), None)?;
                }
                return Ok(());
            }
            Ok(()) => {}
        }
        for id in state.unhandled(batch, documents) {
            state.resend(&id, batch, "the results file holds no result for it", true)?;
        }
        state.journal(|j| j.collected(batch))
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

/// One document of the run.
struct Entry<T> {
    id: String,
    /// Its searchable text, for a reviewer's fix.
    text: String,
    run: Run<T>,
    review: Option<Value>,
    /// How many times its current attempt has been sent again.
    resends: u32,
    /// Its result, once it has one.
    result: Option<Result<Outcome<T>, Error>>,
}

/// The run's documents, what it has handled, and its journal.
struct State<T> {
    entries: Vec<Entry<T>>,
    index: BTreeMap<String, usize>,
    /// (batch id, document id) of every result handled, this run or an earlier one.
    handled: BTreeSet<(String, String)>,
    journal: Option<Journal>,
    tally: Tally,
    /// The client's memory that its model refused a forced tool choice.
    forced_refused: Arc<AtomicBool>,
    /// The batches sent with a forced tool choice.
    forced: BTreeSet<String>,
}

impl<T: Extractable + Send + 'static> State<T> {
    /// Whether document `id` still waits for the result of its `attempt`.
    fn awaits(&self, id: &str, attempt: u32) -> bool {
        self.index
            .get(id)
            .map(|&i| &self.entries[i])
            .is_some_and(|entry| entry.result.is_none() && entry.run.attempt() == attempt)
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
    fn result(
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
                    Ok(reply) => self.reply(&id, batch, reply),
                    Err(error) => self.fail(&id, error, Some(batch)),
                }
            }
            BatchResult::Errored { error } => {
                let error = error.get("error").filter(|e| e.is_object()).unwrap_or(&error);
                let error_type =
                    error.get("type").and_then(Value::as_str).unwrap_or("unknown_error").to_string();
                let message = error.get("message").and_then(Value::as_str).unwrap_or("").to_string();
                let refused = crate::drive::http::transport::ApiError {
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
                    self.resend(&id, batch, "the model refused a forced tool_choice", false)
                } else if TRANSIENT.contains(&error_type.as_str()) {
                    self.resend(&id, batch, &format!("errored: {error_type}: {message}"), true)
                } else {
                    self.fail(&id, Error::api(status_of(&error_type), error_type, message, None), Some(batch))
                }
            }
            BatchResult::Expired => self.resend(&id, batch, "expired", true),
            BatchResult::Canceled => self.resend(&id, batch, "canceled", true),
            BatchResult::Unknown => self.fail(
                &id,
                Error::invalid_response(
                    "the results file holds a result of a type this client does not know",
                ),
                Some(batch),
            ),
        }
    }

    /// A reply for `id`: journalled, then judged by its run.
    fn reply(&mut self, id: &str, batch: &str, reply: crate::Reply) -> Result<(), Error> {
        let i = self.index[id];
        let entry = &mut self.entries[i];
        // Serialized before the policy takes the reply, written once it has judged it.
        let line = match &self.journal {
            Some(_) => Some(Journal::reply_line(id, entry.run.prompt(), &reply, Some(batch))?),
            None => None,
        };
        let next = entry.run.on_reply(reply);
        if let (Some(journal), Some(line)) = (&self.journal, line) {
            journal.append_reply(line, matches!(next, Next::Done(_)))?;
        }
        self.handled.insert((batch.to_string(), id.to_string()));
        let entry = &mut self.entries[i];
        entry.resends = 0;
        if let Next::Done(outcome) = next {
            let result = with_review(Ok(outcome), entry.review.take(), &entry.text);
            self.tally.finished(id, &result).deliver();
            entry.result = Some(result);
        }
        Ok(())
    }

    /// `id`'s current attempt goes into the next batch again, or, past
    /// [`MAX_RESENDS`] `counted` resends, the document fails. A resend that
    /// is not `counted` (the client's own switch of tool choice) is free.
    fn resend(&mut self, id: &str, batch: &str, reason: &str, counted: bool) -> Result<(), Error> {
        let i = self.index[id];
        if counted && self.entries[i].resends >= MAX_RESENDS {
            let error = Error::transport(format!(
                "the Message Batches API gave no usable result for attempt {} after {MAX_RESENDS} resends; the last: {reason}",
                self.entries[i].run.attempt()
            ));
            return self.fail(id, error, Some(batch));
        }
        self.journal(|j| j.resent(id, batch, reason, counted))?;
        self.handled.insert((batch.to_string(), id.to_string()));
        self.entries[i].resends += u32::from(counted);
        Ok(())
    }

    /// `id` fails with `error` (a resumed run tries it again).
    fn fail(&mut self, id: &str, error: Error, batch: Option<&str>) -> Result<(), Error> {
        self.journal(|j| j.failed(id, &error, batch))?;
        if let Some(batch) = batch {
            self.handled.insert((batch.to_string(), id.to_string()));
        }
        let i = self.index[id];
        let error = error.after(self.entries[i].run.failed_attempts().to_vec(), self.entries[i].run.spent());
        let result = Err(error);
        self.tally.finished(id, &result).deliver();
        self.entries[i].result = Some(result);
        Ok(())
    }

    /// Appends to the journal, when there is one.
    fn journal(&mut self, write: impl FnOnce(&mut Journal) -> Result<(), Error>) -> Result<(), Error> {
        match &mut self.journal {
            Some(journal) => write(journal),
            None => Ok(()),
        }
    }
}

/// The error types a batch result is sent again for.
const TRANSIENT: [&str; 3] = ["overloaded_error", "api_error", "rate_limit_error"];

/// The HTTP status the Messages API gives an error type, for [`Error::Api`].
fn status_of(error_type: &str) -> u16 {
    match error_type {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        _ => 500,
    }
}

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
            crate::drive::http::transport::body_prefix(body)
        ))
    })
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
        assert_eq!(status_of("invalid_request_error"), 400);
        assert_eq!(status_of("overloaded_error"), 529);
        assert_eq!(status_of("something_new"), 500);
    }
}
