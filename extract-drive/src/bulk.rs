//! [`Bulk`]: many documents through one [`Extractor`], a bounded number at a
//! time, each outcome journalled as it finishes, and a [`BulkReport`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use super::journal::{self, Journal, Recorded, Store};
use crate::{Document, Error, Extractable, Extractor, Model, Outcome, Run, Stats};

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
pub struct Bulk<M> {
    extractor: Arc<Extractor<M>>,
    concurrency: usize,
    journal: Option<Journal>,
    progress: Option<ProgressCallback>,
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
        Bulk { extractor: Arc::new(extractor), concurrency: 8, journal: None, progress: None }
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
        let begun =
            begin_run::<T>(documents, self.journal.as_ref(), self.extractor.instructions_text()).await?;
        let Begun { documents, contents, journal, mut recorded } = begun;
        let total = documents.len();
        let asked_again = recorded.asked_again.len();
        #[cfg(feature = "postgres")]
        let journal = match journal {
            Some(journal) if journal.shared().is_some() => {
                let mut report = self.run_shared::<T>(documents, contents, Arc::new(journal)).await?;
                report.asked_again = asked_again;
                return Ok(report);
            }
            journal => journal,
        };
        let jobs: Vec<Job> = documents
            .into_iter()
            .zip(contents)
            .enumerate()
            .map(|(index, (document, content))| {
                let id = document.id().into_owned();
                let replies = recorded.replies.remove(&id).unwrap_or_default();
                let review = recorded.reviews.remove(&id);
                Job { index, id, content, document, replies, review }
            })
            .collect();
        // `concurrency` workers each take the next document when they finish
        // one: no task per document, and no wake-up of this task per
        // document, only one per worker at its end.
        let queue = Arc::new(Mutex::new(jobs.into_iter()));
        let journal = journal.map(Arc::new);
        let tally = Arc::new(Mutex::new(Tally::new(total, self.progress.clone())));
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..self.concurrency.min(total) {
            let (queue, journal, tally) = (queue.clone(), journal.clone(), tally.clone());
            let extractor = self.extractor.clone();
            workers.spawn(async move {
                let mut finished = Vec::new();
                // The lock is let go before the document is run.
                while let Some(job) = { queue.lock().expect("no worker panics holding the queue").next() } {
                    let text = job.document.searchable_text().map(str::to_owned);
                    let journal = journal.as_deref().map(|journal| (journal, job.content.as_str()));
                    let result = one::<M, T>(&extractor, &job.id, job.document, job.replies, journal).await?;
                    let result = with_review(result, job.review, text.as_deref());
                    let pending =
                        tally.lock().unwrap_or_else(PoisonError::into_inner).finished(&job.id, &result);
                    // The caller's callback runs with no lock held.
                    pending.deliver();
                    finished.push((job.index, job.id, result));
                }
                Ok::<_, Error>(finished)
            });
        }
        let mut finished = Vec::with_capacity(total);
        while let Some(joined) = workers.join_next().await {
            let joined = joined.map_err(|e| Error::WorkerPanicked(format!("a bulk worker failed: {e}")));
            match joined.and_then(|worker| worker) {
                Ok(done) => finished.extend(done),
                Err(error) => {
                    // The first failed write of the journal, which stopped the run.
                    let failure = journal.as_deref().and_then(Store::failure);
                    return Err(failure.unwrap_or(error));
                }
            }
        }
        // Statistics in the documents' order, so a run and its resumption agree.
        finished.sort_unstable_by_key(|(index, _, _)| *index);
        let mut report = BulkReport::from_results(finished.into_iter().map(|(_, id, result)| (id, result)));
        report.asked_again = asked_again;
        Ok(report)
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
    async fn run_shared<T>(
        &self,
        documents: Vec<Document>,
        contents: Vec<String>,
        journal: Arc<Store>,
    ) -> Result<BulkReport<T>, Error>
    where
        T: Extractable + Send + 'static,
    {
        let db = journal.shared().expect("a shared journal").clone();
        let total = documents.len();
        tracing::info!(target: "extract", worker = db.worker(), journal = db.shown(), documents = total, "joining a shared run");
        let mine: Arc<BTreeMap<String, (usize, String, Document)>> = Arc::new(
            documents
                .into_iter()
                .zip(contents)
                .enumerate()
                .map(|(index, (document, content))| (document.id().into_owned(), (index, content, document)))
                .collect(),
        );
        // Documents of the run this worker was not given: never claimed again.
        let not_mine = Arc::new(Mutex::new(Vec::<String>::new()));
        let tally = Arc::new(Mutex::new(Tally::new(total, self.progress.clone())));
        // When the run's documents were last counted.
        let counted = Arc::new(Mutex::new(None));
        let renewing = {
            let (db, journal) = (db.clone(), journal.clone());
            AbortOnDrop(tokio::spawn(async move {
                loop {
                    tokio::time::sleep(db.renew_every()).await;
                    if let Err(error) = db.renew().await {
                        journal.fail(&error);
                        return;
                    }
                }
            }))
        };
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..self.concurrency.min(total.max(1)) {
            let (db, journal, mine, not_mine, tally, counted) =
                (db.clone(), journal.clone(), mine.clone(), not_mine.clone(), tally.clone(), counted.clone());
            let extractor = self.extractor.clone();
            let pausing = db.clone();
            let work = async move {
                let mut finished = Vec::new();
                loop {
                    if let Some(failure) = journal.failure() {
                        return Err(failure);
                    }
                    let skip = not_mine.lock().unwrap_or_else(PoisonError::into_inner).clone();
                    let claimed = db.claim(&skip).await.inspect_err(|e| journal.fail(e))?;
                    let Some(id) = claimed else {
                        let pending = db.pending().await.inspect_err(|e| journal.fail(e))?;
                        if !pending.iter().any(|id| mine.contains_key(id)) {
                            return Ok(finished);
                        }
                        // Others hold the rest: look again for a lease that ran out.
                        tokio::time::sleep(db.poll_every()).await;
                        continue;
                    };
                    let Some((index, content, document)) = mine.get(&id) else {
                        db.release(&id).await.inspect_err(|e| journal.fail(e))?;
                        not_mine.lock().unwrap_or_else(PoisonError::into_inner).push(id);
                        continue;
                    };
                    // What any worker recorded of it, read now: a worker that died may have begun it.
                    let contents = BTreeMap::from([(id.clone(), content.clone())]);
                    let mut recorded =
                        db.recorded(&contents, Some(&id)).await.inspect_err(|e| journal.fail(e))?;
                    let replies = recorded.replies.remove(&id).unwrap_or_default();
                    let review = recorded.reviews.remove(&id);
                    let text = document.searchable_text().map(str::to_owned);
                    let result =
                        one::<M, T>(&extractor, &id, document.clone(), replies, Some((&journal, content)))
                            .await?;
                    if journal.lost(&id) {
                        continue;
                    }
                    let result = with_review(result, review, text.as_deref());
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
                        let counts = db.counts().await.inspect_err(|e| journal.fail(e))?;
                        tally.lock().unwrap_or_else(PoisonError::into_inner).whole_run(&id, counts)
                    } else {
                        tally.lock().unwrap_or_else(PoisonError::into_inner).finished(&id, &result)
                    };
                    pending.deliver();
                    finished.push((*index, id, result));
                }
            };
            workers.spawn(crate::run_pause::shared_with(pausing, work));
        }
        let mut finished: BTreeMap<String, (usize, Result<Outcome<T>, Error>)> = BTreeMap::new();
        while let Some(joined) = workers.join_next().await {
            let joined = joined.map_err(|e| Error::WorkerPanicked(format!("a bulk worker failed: {e}")));
            match joined.and_then(|worker| worker) {
                Ok(done) => {
                    finished.extend(done.into_iter().map(|(index, id, result)| (id, (index, result))))
                }
                Err(error) => return Err(journal.failure().unwrap_or(error)),
            }
        }
        drop(renewing);
        // Every worker's progress ends at the whole run's count.
        let counts = db.counts().await?;
        let pending = tally.lock().unwrap_or_else(PoisonError::into_inner).whole_run("", counts);
        pending.deliver();
        // The documents other workers finished, rebuilt from the journal.
        let exported = db.documents_with_outcomes().await?;
        let contents: BTreeMap<String, String> =
            mine.iter().map(|(id, (_, content, _))| (id.clone(), content.clone())).collect();
        let mut recorded = db.recorded(&contents, None).await?;
        for row in exported {
            let Some((index, _, document)) = mine.get(&row.id) else { continue };
            if finished.contains_key(&row.id) {
                continue;
            }
            let result = match (row.outcome, row.failure) {
                (Some(_), _) => {
                    let replies = recorded.replies.remove(&row.id).unwrap_or_default();
                    let text = document.searchable_text().map(str::to_owned);
                    let review = recorded.reviews.remove(&row.id);
                    match replay::<T>(&self.extractor, document.clone(), replies) {
                        Some(outcome) => with_review(Ok(outcome), review, text.as_deref()),
                        None => Err(db.refused(crate::journal::JournalProblem::Unreadable(format!(
                            "document {} has an outcome, but its recorded replies do not lead to one",
                            crate::quote_prefix(&row.id)
                        )))),
                    }
                }
                (None, Some(failure)) => Err(Error::transport(failure)),
                (None, None) => continue,
            };
            finished.insert(row.id, (*index, result));
        }
        let mut results: Vec<(usize, String, Result<Outcome<T>, Error>)> =
            finished.into_iter().map(|(id, (index, result))| (index, id, result)).collect();
        results.sort_unstable_by_key(|(index, _, _)| *index);
        Ok(BulkReport::from_results(results.into_iter().map(|(_, id, result)| (id, result))))
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

/// A document waiting for a worker, with what an earlier run recorded of it.
struct Job {
    /// Its place among the run's documents.
    index: usize,
    id: String,
    /// The digest of its content, under the run's tool and instructions.
    content: String,
    document: Document,
    replies: Vec<crate::Reply>,
    review: Option<serde_json::Value>,
}

impl<T> BulkReport<T> {
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
}

/// The start of a run over many documents, for both drivers.
pub struct Begun {
    /// The documents, their ids checked unique.
    pub documents: Vec<Document>,
    /// The digest of each one's content (in order), under the run's tool and instructions.
    pub contents: Vec<String>,
    /// The journal, open and locked, if the run has one.
    pub journal: Option<Store>,
    /// What an earlier run recorded of these documents, as they are now.
    pub recorded: Recorded,
}

/// Begins a run: the documents' ids checked unique, their content digests,
/// and the journal (if any) opened, with what an earlier run recorded.
pub async fn begin_run<T: Extractable>(
    documents: impl IntoIterator<Item = Document>,
    journal: Option<&Journal>,
    instructions: Option<&str>,
) -> Result<Begun, Error> {
    let documents: Vec<Document> = documents.into_iter().collect();
    unique_ids(&documents)?;
    let tool = T::tool();
    let run = journal::run_digest(&tool, instructions);
    let contents: Vec<String> = documents.iter().map(|d| journal::content_digest(&run, d)).collect();
    let (journal, recorded) = match journal {
        Some(journal) => {
            let ids = documents.iter().map(|d| d.id().into_owned()).zip(contents.iter().cloned()).collect();
            let (store, recorded) = Store::open_for_run(journal, &tool, ids).await?;
            (Some(store), recorded)
        }
        None => (None, Recorded::default()),
    };
    Ok(Begun { documents, contents, journal, recorded })
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

/// A document a reviewer fixed counts valid, with the human's value (a
/// fix that no longer passes the validators leaves the escalation as it is).
/// `text` is the document's searchable text (`None`: a PDF without a text
/// layer, whose quotes stay unverified, as in the run and at the desk).
pub fn with_review<T: Extractable + Send + 'static>(
    result: Result<Outcome<T>, Error>,
    review: Option<serde_json::Value>,
    text: Option<&str>,
) -> Result<Outcome<T>, Error> {
    match (review, result) {
        (Some(fix), Ok(Outcome::Escalated(escalation))) => {
            match crate::run::review::review_searchable::<T>(&escalation, text, fix) {
                Ok(fixed) => Ok(Outcome::Valid(fixed)),
                Err(_) => Ok(Outcome::Escalated(escalation)),
            }
        }
        (_, result) => result,
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
    pub fn whole_run(&mut self, id: &str, counts: journal::Counts) -> PendingProgress {
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
    /// recorded of `documents` as they are now; their content digests.
    async fn reader<T: Extractable>(
        &self,
        documents: &[Document],
        needed_for: &str,
    ) -> Result<(Store, Recorded, Vec<String>), Error> {
        let journal =
            self.journal.as_ref().ok_or_else(|| Error::config(format!("{needed_for} needs a journal")))?;
        let tool = T::tool();
        let run = journal::run_digest(&tool, self.extractor.instructions_text());
        let contents: Vec<String> = documents.iter().map(|d| journal::content_digest(&run, d)).collect();
        let ids = documents.iter().map(|d| d.id().into_owned()).zip(contents.iter().cloned()).collect();
        let (store, recorded) = Store::open_for_reading(journal, &tool, ids).await?;
        Ok((store, recorded, contents))
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
        let documents: Vec<Document> = documents.into_iter().collect();
        let (_, mut recorded, _) = self.reader::<T>(&documents, "the review queue").await?;
        let mut queue = Vec::new();
        for document in documents {
            let id = document.id().into_owned();
            if recorded.reviews.contains_key(&id) || recorded.rejected.contains(&id) {
                continue;
            }
            let Some(replies) = recorded.replies.remove(&id) else { continue };
            if let Some(Outcome::Escalated(escalation)) = replay::<T>(&self.extractor, document, replies) {
                queue.push((id, escalation));
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
        let (journal, mut recorded, contents) =
            self.reader::<T>(std::slice::from_ref(&document), "a review").await?;
        let id = document.id().into_owned();
        let replies = recorded.replies.remove(&id).unwrap_or_default();
        let Some(Outcome::Escalated(escalation)) = replay::<T>(&self.extractor, document.clone(), replies)
        else {
            return Err(Error::config(format!(
                "document {} has no escalation in the journal to review",
                crate::quote_prefix(&id)
            )));
        };
        match crate::run::review::review_document::<T>(&escalation, &document, fix.clone()) {
            Ok(fixed) => {
                let output = crate::run::review::patched(&escalation, fix.clone());
                let outcome = Outcome::Valid(fixed);
                journal.reviewed(&id, &contents[0], &fix, &outcome, output).await?;
                let Outcome::Valid(fixed) = outcome else { unreachable!("built valid above") };
                Ok(Ok(fixed))
            }
            Err(violations) => Ok(Err(violations)),
        }
    }
}

/// The outcome a document's recorded replies lead to, without the model:
/// `None` when they do not finish its run.
fn replay<T: Extractable + Send + 'static>(
    extractor: &Extractor<impl Model>,
    document: Document,
    replies: Vec<crate::Reply>,
) -> Option<Outcome<T>> {
    let mut run = extractor.configure(Run::<T>::for_type(document, extractor.retry_budget()));
    for reply in replies {
        if let crate::Next::Done(outcome) = run.on_reply(reply) {
            return Some(outcome);
        }
    }
    None
}

/// One document: its recorded replies replayed, then the model, every new
/// reply committed to the journal (with the content digest `journal`
/// carries) before it is judged. The outer `Err` is the journal's: a write
/// that failed stops the run.
async fn one<M: Model, T: Extractable + Send + 'static>(
    extractor: &Extractor<M>,
    id: &str,
    document: Document,
    recorded: Vec<crate::Reply>,
    journal: Option<(&Store, &str)>,
) -> Result<Result<Outcome<T>, Error>, Error> {
    let run = extractor.configure(Run::<T>::for_type(document, extractor.retry_budget()));
    let result = extractor
        .drive_recorded(run, recorded, journal.map(|(journal, content)| (journal, id, content)))
        .await;
    if let Some((journal, content)) = journal {
        if let Some(failure) = journal.failure() {
            return Err(failure);
        }
        // A document another worker took over is its new owner's to record.
        if let Err(error) = &result
            && !journal.lost(id)
        {
            journal.failed(id, content, error, None).await?;
        }
    }
    Ok(result)
}
