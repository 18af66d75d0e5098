//! [`Bulk`]: many documents through one [`Extractor`], a bounded number at a
//! time, each outcome journalled as it finishes, and a [`BulkReport`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::journal::{Journal, Recorded};
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
    journal: Option<PathBuf>,
    progress: Option<ProgressCallback>,
}

/// What [`Bulk::on_progress`] keeps.
pub(crate) type ProgressCallback = Arc<dyn Fn(&Progress) + Send + Sync>;

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

    /// The journal that makes the run durable and resumable: the same path
    /// again resumes. Opened (and locked, one run at a time) when the run
    /// starts; `Err` here only for a path that can never be a journal (empty).
    pub fn journal(mut self, path: impl Into<PathBuf>) -> Result<Bulk<M>, Error> {
        self.journal = Some(journal_path(path)?);
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
    /// is in [`BulkReport::failed`].
    pub async fn run<T>(&self, documents: impl IntoIterator<Item = Document>) -> Result<BulkReport<T>, Error>
    where
        T: Extractable + Send + 'static,
    {
        let (documents, journal, mut recorded) = begin_run::<T>(documents, self.journal.as_deref())?;
        let total = documents.len();
        let jobs: Vec<Job> = documents
            .into_iter()
            .enumerate()
            .map(|(index, document)| {
                let id = document.id().into_owned();
                let replies = recorded.replies.remove(&id).unwrap_or_default();
                let review = recorded.reviews.remove(&id);
                Job { index, id, document, replies, review }
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
                    let text = job.document.searchable_text().unwrap_or_default().to_string();
                    let result =
                        one::<M, T>(&extractor, &job.id, job.document, job.replies, journal.as_deref())
                            .await?;
                    let result = with_review(result, job.review, &text);
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
            finished.extend(joined.map_err(|e| Error::config(format!("a bulk worker failed: {e}")))??);
        }
        // Statistics in the documents' order, so a run and its resumption agree.
        finished.sort_unstable_by_key(|(index, _, _)| *index);
        Ok(BulkReport::from_results(finished.into_iter().map(|(_, id, result)| (id, result))))
    }
}

/// A document waiting for a worker, with what an earlier run recorded of it.
struct Job {
    /// Its place among the run's documents.
    index: usize,
    id: String,
    document: Document,
    replies: Vec<crate::Reply>,
    review: Option<serde_json::Value>,
}

impl<T> BulkReport<T> {
    /// The report of every document's result, in the documents' order.
    pub(crate) fn from_results(
        results: impl IntoIterator<Item = (String, Result<Outcome<T>, Error>)>,
    ) -> BulkReport<T> {
        let mut report =
            BulkReport { outcomes: BTreeMap::new(), failed: BTreeMap::new(), stats: Stats::new() };
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

/// A driver's journal path, checked: an empty path can never be a journal.
pub(crate) fn journal_path(path: impl Into<PathBuf>) -> Result<PathBuf, Error> {
    let path = path.into();
    if path.as_os_str().is_empty() {
        return Err(Error::config("the journal path is empty"));
    }
    Ok(path)
}

/// The start of a run over many documents, for both drivers: the
/// documents, their ids checked unique, and the journal at `journal` (if
/// any) opened, with what an earlier run recorded in it.
pub(crate) fn begin_run<T: Extractable>(
    documents: impl IntoIterator<Item = Document>,
    journal: Option<&Path>,
) -> Result<(Vec<Document>, Option<Journal>, Recorded), Error> {
    let documents: Vec<Document> = documents.into_iter().collect();
    unique_ids(&documents)?;
    let (journal, recorded) = Journal::open_if_any(journal, &T::tool())?;
    Ok((documents, journal, recorded))
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
pub(crate) fn with_review<T: Extractable + Send + 'static>(
    result: Result<Outcome<T>, Error>,
    review: Option<serde_json::Value>,
    text: &str,
) -> Result<Outcome<T>, Error> {
    match (review, result) {
        (Some(fix), Ok(Outcome::Escalated(escalation))) => match crate::review::<T>(&escalation, text, fix) {
            Ok(fixed) => Ok(Outcome::Valid(fixed)),
            Err(_) => Ok(Outcome::Escalated(escalation)),
        },
        (_, result) => result,
    }
}

/// The run's progress: counted after each finished document, reported to
/// `tracing` and to the caller's callback.
pub(crate) struct Tally {
    progress: Progress,
    callback: Option<ProgressCallback>,
}

impl Tally {
    pub(crate) fn new(total: usize, callback: Option<ProgressCallback>) -> Tally {
        Tally { progress: Progress { total, ..Progress::default() }, callback }
    }

    /// Counts document `id`'s result and traces the progress. The caller's
    /// callback is not called here: it is returned, to be called with
    /// [`PendingProgress::deliver`] once any lock around the tally is let go.
    #[must_use = "the progress is only reported to the caller's callback by `deliver`"]
    pub(crate) fn finished<T>(&mut self, id: &str, result: &Result<Outcome<T>, Error>) -> PendingProgress {
        let progress = &mut self.progress;
        progress.done += 1;
        match result {
            Ok(Outcome::Valid(_)) => progress.valid += 1,
            Ok(Outcome::Escalated(_)) => progress.escalated += 1,
            Err(_) => progress.failed += 1,
        }
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
pub(crate) struct PendingProgress(Option<(ProgressCallback, Progress)>);

impl PendingProgress {
    /// Calls the caller's callback, which must run outside the run's locks:
    /// a slow one would hold up every worker, and a panicking one would
    /// poison them. A panic is caught and traced: a progress bar's bug
    /// does not lose the run's work.
    pub(crate) fn deliver(self) {
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
    /// The review queue: every escalated document of the journal's run, with
    /// its escalation (reason, partial result, fix hint), rebuilt from the
    /// recorded replies without calling the model (a document the run has
    /// not finished is not listed, nor one a reviewer already fixed).
    /// `documents` are the run's documents, for the validators. Like a
    /// run, it needs the journal to itself: while a run has it open, this
    /// is an error saying so.
    pub async fn escalations<T>(
        &self,
        documents: impl IntoIterator<Item = Document>,
    ) -> Result<Vec<(String, crate::Escalation)>, Error>
    where
        T: Extractable + Send + 'static,
    {
        let path = self.journal.as_ref().ok_or_else(|| Error::config("the review queue needs a journal"))?;
        let (_, mut recorded) = Journal::open(path, &T::tool())?;
        let mut queue = Vec::new();
        for document in documents {
            let id = document.id().into_owned();
            if recorded.reviews.contains_key(&id) {
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
    /// `document`, after holding it to all three layers ([`review`](crate::review)):
    /// the inner `Err` is the fix's violations, and then nothing is recorded.
    /// A later [`run`](Bulk::run) on the journal counts the document valid
    /// and reviewed. While a run has the journal open, this is an error saying so.
    pub async fn record_review<T>(
        &self,
        document: Document,
        fix: serde_json::Value,
    ) -> Result<Result<crate::Validated<T>, crate::Violations>, Error>
    where
        T: Extractable + Send + 'static,
    {
        let path = self.journal.as_ref().ok_or_else(|| Error::config("a review needs a journal"))?;
        let (journal, mut recorded) = Journal::open(path, &T::tool())?;
        let id = document.id().into_owned();
        let text = document.searchable_text().unwrap_or_default().to_string();
        let replies = recorded.replies.remove(&id).unwrap_or_default();
        let Some(Outcome::Escalated(escalation)) = replay::<T>(&self.extractor, document, replies) else {
            return Err(Error::config(format!(
                "document {} has no escalation in the journal to review",
                crate::quote_prefix(&id)
            )));
        };
        match crate::review::<T>(&escalation, &text, fix.clone()) {
            Ok(fixed) => {
                journal.reviewed(&id, &fix)?;
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
/// reply journalled before it is judged. The outer `Err` is the journal's.
async fn one<M: Model, T: Extractable + Send + 'static>(
    extractor: &Extractor<M>,
    id: &str,
    document: Document,
    recorded: Vec<crate::Reply>,
    journal: Option<&Journal>,
) -> Result<Result<Outcome<T>, Error>, Error> {
    let run = extractor.configure(Run::<T>::for_type(document, extractor.retry_budget()));
    let result = extractor.drive_recorded(run, recorded, journal.map(|journal| (journal, id))).await;
    if let (Some(journal), Err(error)) = (journal, &result) {
        journal.failed(id, error, None)?;
    }
    Ok(result)
}
