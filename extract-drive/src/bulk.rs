//! [`Bulk`]: many documents through one [`Extractor`], a bounded number at a
//! time, each outcome journalled as it finishes, and a [`BulkReport`].

use std::collections::BTreeMap;
#[cfg(feature = "postgres")]
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use crate::engine::{Engine, Job};
use crate::journal::Journal;
use crate::pace::Limits;
use crate::{Document, Error, Extractable, Extractor, Model, Outcome, Stats};
use tracing::Instrument;

/// Many documents through one extractor, `concurrency` at a time, with an
/// optional journal that makes the run resumable: run it again with the same
/// journal and the documents it finished are not sent again (their outcomes
/// are rebuilt from the recorded replies), and an unfinished one goes on
/// from its last recorded reply.
///
/// ```
/// use extract::{Bulk, Document, Extractable, Extractor, testing::Scripted};
/// use serde_json::json;
///
/// #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
/// struct Total { total: f64 }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let model = Scripted::new([json!({"total": 1.0}), json!({"total": 2.0})]);
/// let report = Bulk::new(Extractor::new(model))
///     .concurrency(1)
///     .run::<Total>([Document::text("Total 1").with_id("a"), Document::text("Total 2").with_id("b")])
///     .await?;
/// assert_eq!(report.outcomes.len(), 2);
/// assert_eq!(report.stats.valid(), 2);
/// # Ok::<(), extract::Error>(())
/// # }).unwrap();
/// ```
///
/// Against Claude, with a journal, from a `main` of your own: the runtime
/// needs its I/O and timer drivers (`enable_all`) for a real client, or use
/// [`run_blocking`](Bulk::run_blocking), which builds one.
///
/// ```no_run
/// # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
/// # struct Total { total: f64 }
/// use extract::{Bulk, Document, Extractor};
///
/// let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
/// let client = extract::anthropic::Client::from_env()?; // ANTHROPIC_API_KEY
/// let documents = vec![Document::text("Total 1").with_id("a")];
/// let bulk = Bulk::new(Extractor::new(client)).concurrency(8).journal("runs/march.db")?;
/// let report = runtime.block_on(bulk.run::<Total>(documents))?;
/// println!("{}", report.stats);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Bulk<M> {
    extractor: Arc<Extractor<M>>,
    concurrency: usize,
    journal: Option<Journal>,
    progress: Option<ProgressCallback>,
    /// The limits requests are paced by, or `None` when pacing is off.
    pacing: Option<Limits>,
}

/// What [`Bulk::on_progress`] keeps.
pub type ProgressCallback = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Where a bulk run is, after each document.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Documents finished (valid, escalated or failed), this run and earlier ones.
    pub done: usize,
    /// Documents in the run.
    pub total: usize,
    /// Of `done`, valid.
    pub valid: usize,
    /// Of `done`, escalated.
    pub escalated: usize,
    /// Of `done`, failed (transport or configuration).
    pub failed: usize,
}

/// What a bulk run ended with.
#[derive(Debug)]
pub struct BulkReport<T> {
    /// Every document's outcome, by document id (those an earlier run with the
    /// same journal finished included).
    pub outcomes: BTreeMap<String, Outcome<T>>,
    /// The documents that could not be run: transport or configuration failures.
    pub failed: BTreeMap<String, Error>,
    /// Statistics over every outcome.
    pub stats: Stats,
    /// How many documents the journal had replies for that were asked
    /// again, because their content (or the run's tool or instructions)
    /// changed since: their old replies are kept, and not replayed.
    pub asked_again: usize,
}

impl<M: Model + 'static> Bulk<M> {
    /// A bulk run with `extractor`'s model and settings, 8 documents at a time, without a journal.
    pub fn new(extractor: Extractor<M>) -> Bulk<M> {
        Bulk {
            extractor: Arc::new(extractor),
            concurrency: 8,
            journal: None,
            progress: None,
            pacing: Some(Limits::default()),
        }
    }

    /// Whether requests are paced by the provider's rate limits before they
    /// bite (default on): each waits until the limits its client last read
    /// in a reply's headers (`anthropic-ratelimit-*`, `x-ratelimit-*`) can
    /// take it, counting the requests in flight and reserving their
    /// `max_tokens`, instead of meeting a 429. The headers count every
    /// process of the organisation, so separate runs pace each other. A
    /// 429 still pauses every task of the run. Off, requests go as soon as
    /// a task is free.
    pub fn pace(mut self, on: bool) -> Bulk<M> {
        self.pacing = on.then(|| self.pacing.unwrap_or_default());
        self
    }

    /// The limits to pace by where the server states none in its headers
    /// (vLLM, Ollama, a proxy): `Limits::per_minute().requests(50)`. A limit
    /// the headers state wins. Turns pacing on.
    pub fn limits(mut self, limits: Limits) -> Bulk<M> {
        self.pacing = Some(limits);
        self
    }

    /// How many documents are in flight at once (at least 1).
    pub fn concurrency(mut self, documents: usize) -> Bulk<M> {
        self.concurrency = documents.max(1);
        self
    }

    /// The journal that makes the run durable and resumable: a path
    /// (`"runs/march.db"`) is an SQLite database, created if absent; the same
    /// journal again resumes. A [`Journal::postgres`] run is shared by every
    /// worker process that runs the same documents on it (feature `postgres`). Opened (and locked, one run at a time) when the
    /// run starts; `Err` here only for a path that can never be a journal (empty).
    pub fn journal(mut self, journal: impl Into<Journal>) -> Result<Bulk<M>, Error> {
        self.journal = Some(journal.into().checked()?);
        Ok(self)
    }

    /// Calls `report` after every finished document (to draw a progress
    /// bar), from the worker that finished it and with no lock of the run
    /// held: two workers may report at once, so `done` can arrive out of
    /// order (keep the largest). A panic in `report` is caught and traced;
    /// the run goes on.
    pub fn on_progress(mut self, report: impl Fn(&Progress) + Send + Sync + 'static) -> Bulk<M> {
        self.progress = Some(Arc::new(report));
        self
    }

    /// Runs every document. `Err` only for the journal's I/O and for
    /// configuration (two documents with one id); a document's own failure
    /// is in [`BulkReport::failed`]. A journal that cannot be written ends
    /// the run with `Err` after what was committed: no model call is made
    /// after the failed write, and the reply it could not record is in the
    /// error.
    pub async fn run<T>(&self, documents: impl IntoIterator<Item = Document>) -> Result<BulkReport<T>, Error>
    where
        T: Extractable + Send + 'static,
    {
        self.run_all(documents).await
    }

    /// [`run`](Bulk::run), blocking, on a runtime of its own: for programs
    /// without an async runtime. `Err` (configuration) when called inside
    /// one, where `.run(..).await` is the call.
    ///
    /// ```
    /// use extract::{Bulk, Document, Extractable, Extractor, testing::Scripted};
    /// use serde_json::json;
    ///
    /// #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
    /// struct Total { total: f64 }
    ///
    /// let model = Scripted::new([json!({"total": 1.0})]);
    /// let report = Bulk::new(Extractor::new(model)).run_blocking::<Total>([Document::text("Total 1")])?;
    /// assert_eq!(report.stats.valid(), 1);
    /// # Ok::<(), extract::Error>(())
    /// ```
    pub fn run_blocking<T>(
        &self,
        documents: impl IntoIterator<Item = Document>,
    ) -> Result<BulkReport<T>, Error>
    where
        T: Extractable + Send + 'static,
    {
        crate::blocking::block_on("a blocking bulk run", ".run(..).await", self.run_all(documents))?
    }

    async fn run_all<T>(&self, documents: impl IntoIterator<Item = Document>) -> Result<BulkReport<T>, Error>
    where
        T: Extractable + Send + 'static,
    {
        self.extractor.check_prices()?;
        let mut engine = Engine::open(
            documents,
            self.journal.as_ref(),
            &T::tool(),
            self.extractor.instructions_text(),
            self.extractor.windows_setting(),
        )
        .await?;
        let jobs = engine.jobs::<T, M>(&self.extractor);
        let run_span = engine.trace_run(&T::tool().name, jobs.len());
        let engine = Arc::new(engine);
        let report = self.run_jobs(jobs, &engine).instrument(run_span).await?;
        engine.finish_run(report.stats.valid(), report.stats.escalated(), report.failed.len());
        Ok(report)
    }

    /// Runs `jobs` on `engine`: on a shared journal with the other workers,
    /// else `concurrency` at a time.
    async fn run_jobs<T>(&self, jobs: Vec<Job<T>>, engine: &Arc<Engine>) -> Result<BulkReport<T>, Error>
    where
        T: Extractable + Send + 'static,
    {
        let engine = engine.clone();
        #[cfg(feature = "postgres")]
        if engine.shared().is_some() {
            return self.run_shared::<T>(jobs, engine).await;
        }
        let total = jobs.len();
        // `concurrency` workers each take the next document when they finish
        // one: no task per document, and no wake-up of this task per
        // document, only one per worker at its end.
        let queue = Arc::new(Mutex::new(jobs.into_iter()));
        let tally = Arc::new(Mutex::new(Tally::new(total, self.progress.clone())));
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..self.concurrency.min(total) {
            let (queue, engine, tally) = (queue.clone(), engine.clone(), tally.clone());
            let extractor = self.extractor.clone();
            let work = async move {
                let mut finished = Vec::new();
                // The lock is let go before the document is run.
                while let Some(mut job) = { queue.lock().expect("no worker panics holding the queue").next() }
                {
                    let result = engine.drive(&mut job, &extractor).await?;
                    let pending =
                        tally.lock().unwrap_or_else(PoisonError::into_inner).finished(job.id(), &result);
                    // The caller's callback runs with no lock held.
                    pending.deliver();
                    finished.push((job.index(), job.id().to_string(), result));
                }
                Ok::<_, Error>(finished)
            };
            workers.spawn(paced(self.pacing, work));
        }
        let finished = joined(workers, &engine).await?;
        Ok(BulkReport::in_order(finished, engine.asked_again()))
    }
}

#[cfg(feature = "postgres")]
impl<M: Model + 'static> Bulk<M> {
    /// A run whose journal many worker processes share (PostgreSQL): each
    /// of `concurrency` tasks claims the next pending document under a
    /// lease, replays what any worker recorded of it, and goes on; leases
    /// are renewed in the background; a 429 or 529 pauses every worker of
    /// the run. Returns once every document of the run has an outcome or
    /// has failed, whichever worker did it: those done elsewhere are
    /// rebuilt from their recorded replies, without the model.
    async fn run_shared<T>(&self, jobs: Vec<Job<T>>, engine: Arc<Engine>) -> Result<BulkReport<T>, Error>
    where
        T: Extractable + Send + 'static,
    {
        let db = engine.shared().expect("a shared journal").clone();
        let total = jobs.len();
        tracing::info!(target: "extract", worker = db.worker(), journal = db.shown(), documents = total, "joining a shared run");
        // This worker's documents, each taken out while it runs one.
        let mine: Arc<Mutex<BTreeMap<String, Job<T>>>> =
            Arc::new(Mutex::new(jobs.into_iter().map(|job| (job.id().to_string(), job)).collect()));
        let ids: Arc<BTreeSet<String>> =
            Arc::new(mine.lock().unwrap_or_else(PoisonError::into_inner).keys().cloned().collect());
        // Documents of the run this worker was not given: never claimed again.
        let not_mine = Arc::new(Mutex::new(Vec::<String>::new()));
        let tally = Arc::new(Mutex::new(Tally::new(total, self.progress.clone())));
        // When the run's documents were last counted.
        let counted = Arc::new(Mutex::new(None));
        let renewing = {
            let (db, engine) = (db.clone(), engine.clone());
            AbortOnDrop(tokio::spawn(async move {
                loop {
                    tokio::time::sleep(db.renew_every()).await;
                    if let Err(error) = db.renew().await {
                        engine.keep_failure(&error);
                        return;
                    }
                }
            }))
        };
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..self.concurrency.min(total.max(1)) {
            let (db, engine, mine, ids, not_mine, tally, counted) = (
                db.clone(),
                engine.clone(),
                mine.clone(),
                ids.clone(),
                not_mine.clone(),
                tally.clone(),
                counted.clone(),
            );
            let extractor = self.extractor.clone();
            let pausing = db.clone();
            let work = async move {
                let mut finished = Vec::new();
                loop {
                    if let Some(failure) = engine.failure() {
                        return Err(failure);
                    }
                    let skip = not_mine.lock().unwrap_or_else(PoisonError::into_inner).clone();
                    let claimed = db.claim(&skip).await.inspect_err(|e| engine.keep_failure(e))?;
                    let Some(id) = claimed else {
                        let pending = db.pending().await.inspect_err(|e| engine.keep_failure(e))?;
                        if !pending.iter().any(|id| ids.contains(id)) {
                            return Ok(finished);
                        }
                        // Others hold the rest: look again for a lease that ran out.
                        tokio::time::sleep(db.poll_every()).await;
                        continue;
                    };
                    let taken = mine.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
                    let Some(mut job) = taken else {
                        // Not this worker's, or claimed again after this worker lost it.
                        db.release(&id).await.inspect_err(|e| engine.keep_failure(e))?;
                        not_mine.lock().unwrap_or_else(PoisonError::into_inner).push(id);
                        continue;
                    };
                    engine.refresh(&mut job, &extractor).await.inspect_err(|e| engine.keep_failure(e))?;
                    let result = engine.drive(&mut job, &extractor).await?;
                    if let Some(valid) = result.as_ref().ok().map(Outcome::is_valid) {
                        engine.settle(&job, valid).await.inspect_err(|e| engine.keep_failure(e))?;
                    }
                    if engine.lost(&job) {
                        // Another worker's now; kept, to be rebuilt from the journal at the end.
                        mine.lock().unwrap_or_else(PoisonError::into_inner).insert(id, job);
                        continue;
                    }
                    // The run's counts, read at most every COUNT_EVERY (a count
                    // reads every document of the run); counted here between.
                    let due = {
                        let mut last = counted.lock().unwrap_or_else(PoisonError::into_inner);
                        let due = last.is_none_or(|at: std::time::Instant| at.elapsed() >= COUNT_EVERY);
                        if due {
                            *last = Some(std::time::Instant::now());
                        }
                        due
                    };
                    let pending = if due {
                        let counts = db.counts().await.inspect_err(|e| engine.keep_failure(e))?;
                        tally.lock().unwrap_or_else(PoisonError::into_inner).whole_run(&id, counts)
                    } else {
                        tally.lock().unwrap_or_else(PoisonError::into_inner).finished(&id, &result)
                    };
                    pending.deliver();
                    finished.push((job.index(), id, result));
                }
            };
            workers.spawn(paced(self.pacing, crate::run_pause::shared_with(pausing, work)));
        }
        let mut finished = joined(workers, &engine).await?;
        drop(renewing);
        // Every worker's progress ends at the whole run's count.
        let counts = db.counts().await?;
        let pending = tally.lock().unwrap_or_else(PoisonError::into_inner).whole_run("", counts);
        pending.deliver();
        // The documents other workers finished (or this one lost), rebuilt from the journal.
        let done_here: BTreeSet<String> = finished.iter().map(|(_, id, _)| id.clone()).collect();
        let rest: Vec<Job<T>> = std::mem::take(&mut *mine.lock().unwrap_or_else(PoisonError::into_inner))
            .into_values()
            .filter(|job| !done_here.contains(job.id()))
            .collect();
        finished.extend(engine.finished_elsewhere(rest, &self.extractor).await?);
        Ok(BulkReport::in_order(finished, engine.asked_again()))
    }
}

/// What each worker finished: (index, id, result) of every document.
type Finished<T> = Vec<(usize, String, Result<Outcome<T>, Error>)>;

/// Every worker's documents, once all of them have stopped. A worker's
/// `Err` (the journal's first failed write, or a panic) stops the others
/// from calling the model, but they are waited for, not aborted: a reply
/// already paid for still comes back and is recorded, or named in the error.
async fn joined<T: 'static>(
    mut workers: tokio::task::JoinSet<Result<Finished<T>, Error>>,
    engine: &Engine,
) -> Result<Finished<T>, Error> {
    let mut finished = Vec::new();
    let mut failed = None;
    while let Some(joined) = workers.join_next().await {
        let joined = joined.map_err(|e| Error::WorkerPanicked(format!("a bulk worker failed: {e}")));
        match joined.and_then(|worker| worker) {
            Ok(done) => finished.extend(done),
            Err(error) => {
                engine.keep_failure(&error);
                failed.get_or_insert(error);
            }
        }
    }
    match failed {
        // The journal's failure names every reply it could not record.
        Some(error) => Err(engine.failure().unwrap_or(error)),
        None => Ok(finished),
    }
}

/// How often a worker of a shared run reads the whole run's progress.
#[cfg(feature = "postgres")]
const COUNT_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// A background task, stopped when this is dropped (the run ended, or failed).
#[cfg(feature = "postgres")]
struct AbortOnDrop(tokio::task::JoinHandle<()>);

#[cfg(feature = "postgres")]
impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<T> BulkReport<T> {
    /// What every outcome cost in US dollars (outcomes an earlier run of
    /// the journal finished included); `None` when a model had no price.
    pub fn cost(&self) -> Option<f64> {
        self.stats.cost()
    }

    /// The report of every document's result, in the documents' order.
    pub fn from_results(
        results: impl IntoIterator<Item = (String, Result<Outcome<T>, Error>)>,
    ) -> BulkReport<T> {
        let mut report = BulkReport {
            outcomes: BTreeMap::new(),
            failed: BTreeMap::new(),
            stats: Stats::new(),
            asked_again: 0,
        };
        for (id, result) in results {
            match result {
                Ok(outcome) => {
                    report.stats.record(&outcome);
                    report.outcomes.insert(id, outcome);
                }
                Err(error) => {
                    report.failed.insert(id, error);
                }
            }
        }
        report
    }

    /// The report of `finished` (index, id, result) in the documents' order,
    /// so a run and its resumption count alike; `asked_again` as the engine
    /// counted it.
    pub fn in_order(
        mut finished: Vec<(usize, String, Result<Outcome<T>, Error>)>,
        asked_again: usize,
    ) -> BulkReport<T> {
        finished.sort_unstable_by_key(|(index, _, _)| *index);
        let mut report = BulkReport::from_results(finished.into_iter().map(|(_, id, result)| (id, result)));
        report.asked_again = asked_again;
        report
    }
}

/// The run's progress: counted after each finished document, reported to
/// `tracing` and to the caller's callback.
pub struct Tally {
    progress: Progress,
    callback: Option<ProgressCallback>,
}

impl Tally {
    /// A tally of `total` documents that reports to `callback` after each.
    pub fn new(total: usize, callback: Option<ProgressCallback>) -> Tally {
        Tally { progress: Progress { total, ..Progress::default() }, callback }
    }

    /// Counts document `id`'s result and traces the progress. The caller's
    /// callback is not called here: it is returned, to be called with
    /// [`PendingProgress::deliver`] once any lock around the tally is let go.
    #[must_use = "the progress is only reported to the caller's callback by `deliver`"]
    pub fn finished<T>(&mut self, id: &str, result: &Result<Outcome<T>, Error>) -> PendingProgress {
        let progress = &mut self.progress;
        progress.done += 1;
        match result {
            Ok(Outcome::Valid(_)) => progress.valid += 1,
            Ok(Outcome::Escalated(_)) => progress.escalated += 1,
            Err(_) => progress.failed += 1,
        }
        self.report(id)
    }

    /// The progress of the whole run, as the journal counts it (every
    /// worker's documents), after document `id` finished here.
    #[cfg(feature = "postgres")]
    #[must_use = "the progress is only reported to the caller's callback by `deliver`"]
    pub fn whole_run(&mut self, id: &str, counts: crate::journal::Counts) -> PendingProgress {
        // Workers report their counts out of order: the run's only grow.
        let before = self.progress;
        let progress = &mut self.progress;
        progress.total = counts.total.max(progress.total);
        progress.valid = counts.valid.max(progress.valid);
        progress.escalated = counts.escalated.max(progress.escalated);
        progress.failed = counts.failed;
        progress.done = progress.valid + progress.escalated + progress.failed;
        if id.is_empty() && self.progress == before {
            // The run's end, already reported.
            return PendingProgress(None);
        }
        self.report(id)
    }

    fn report(&self, id: &str) -> PendingProgress {
        let progress = &self.progress;
        tracing::info!(
            target: "extract",
            done = progress.done,
            total = progress.total,
            valid = progress.valid,
            escalated = progress.escalated,
            failed = progress.failed,
            document = %id,
            "bulk progress"
        );
        PendingProgress(self.callback.clone().map(|callback| (callback, *progress)))
    }
}

/// One progress report still to give the caller's callback.
pub struct PendingProgress(Option<(ProgressCallback, Progress)>);

impl PendingProgress {
    /// Calls the caller's callback, which must run outside the run's locks:
    /// a slow one would hold up every worker, and a panicking one would
    /// poison them. A panic is caught and traced: a progress bar's bug
    /// does not lose the run's work.
    pub fn deliver(self) {
        let Some((callback, progress)) = self.0 else { return };
        if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| callback(&progress))) {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            tracing::warn!(target: "extract", done = progress.done, %message, "the progress callback panicked; the run goes on");
        }
    }
}

impl<M: Model + 'static> Bulk<M> {
    /// The journal opened to read, without the run's lock, with what it
    /// recorded of `documents` as they are now.
    async fn reader<T: Extractable>(
        &self,
        documents: Vec<Document>,
        needed_for: &str,
    ) -> Result<Engine, Error> {
        let journal =
            self.journal.as_ref().ok_or_else(|| Error::config(format!("{needed_for} needs a journal")))?;
        Engine::open_for_reading(
            documents,
            journal,
            &T::tool(),
            self.extractor.instructions_text(),
            self.extractor.windows_setting(),
        )
        .await
    }

    /// The review queue: every escalated document of the journal's run, with
    /// its escalation (reason, partial result, fix hint), rebuilt from the
    /// recorded replies without calling the model (a document the run has
    /// not finished is not listed, nor one a reviewer already fixed or
    /// rejected, nor one whose content changed since). `documents` are the run's documents,
    /// for the validators. A reader: it takes no lock, so it works while a
    /// run has the journal open.
    pub async fn escalations<T>(
        &self,
        documents: impl IntoIterator<Item = Document>,
    ) -> Result<Vec<(String, crate::Escalation)>, Error>
    where
        T: Extractable + Send + 'static,
    {
        let mut engine = self.reader::<T>(documents.into_iter().collect(), "the review queue").await?;
        let mut queue = Vec::new();
        for mut job in engine.jobs::<T, M>(&self.extractor) {
            if job.decided() {
                continue;
            }
            if let Some(Outcome::Escalated(escalation)) = job.replay() {
                queue.push((job.id().to_string(), escalation));
            }
        }
        Ok(queue)
    }

    /// Records a reviewer's `fix` (a JSON merge patch) of the escalated
    /// `document`, after holding it to all three layers ([`review`](fn@crate::review)):
    /// the inner `Err` is the fix's violations, and then nothing is recorded.
    /// A later [`run`](Bulk::run) on the journal counts the document valid
    /// and reviewed. One short transaction, without the run's lock: it can
    /// be recorded while a run has the journal open.
    pub async fn record_review<T>(
        &self,
        document: Document,
        fix: serde_json::Value,
    ) -> Result<Result<crate::Validated<T>, crate::Violations>, Error>
    where
        T: Extractable + Send + 'static,
    {
        let mut engine = self.reader::<T>(vec![document.clone()], "a review").await?;
        let mut job = engine.jobs::<T, M>(&self.extractor).pop().expect("one job per document");
        // One rule for the API and the desk: a decided document is not decided again.
        if job.decided() {
            return Err(Error::config(format!(
                "document {} was already reviewed or rejected: a decision is recorded once",
                crate::quote_prefix(job.id())
            )));
        }
        let Some(Outcome::Escalated(escalation)) = job.replay() else {
            return Err(Error::config(format!(
                "document {} has no escalation in the journal to review",
                crate::quote_prefix(job.id())
            )));
        };
        match crate::run::review::review_document::<T>(&escalation, &document, fix.clone()) {
            Ok(fixed) => Ok(Ok(engine.record_review(&job, &escalation, fix, fixed).await?)),
            Err(violations) => Ok(Err(violations)),
        }
    }
}

/// `work` with its model calls paced by `pacing`, when pacing is on.
async fn paced<F: std::future::Future>(pacing: Option<Limits>, work: F) -> F::Output {
    match pacing {
        Some(limits) => crate::pace::paced(limits, work).await,
        None => work.await,
    }
}
