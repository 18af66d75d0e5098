//! The engine on a journal many workers share (PostgreSQL): a document's
//! records read again when this worker claims it, the documents other
//! workers finished rebuilt from their records, and the coordination of a
//! run's message batches.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Engine, Job};
use crate::journal::Postgres;
use crate::{Error, Extractable, Extractor, Model, Outcome};

impl Engine {
    /// The shared journal, when the run's journal is on PostgreSQL.
    pub(crate) fn shared(&self) -> Option<&Arc<Postgres>> {
        self.journal.as_ref().and_then(|journal| journal.shared())
    }

    /// Starts `job` afresh with what any worker recorded of its document
    /// (a worker that died may have begun it), to replay before the model
    /// is called.
    pub(crate) async fn refresh<T, M>(&self, job: &mut Job<T>, extractor: &Extractor<M>) -> Result<(), Error>
    where
        T: Extractable + Send + 'static,
        M: Model,
    {
        let Some(db) = self.shared() else { return Ok(()) };
        let contents = BTreeMap::from([(job.id.clone(), job.content.clone())]);
        let mut recorded = db.recorded(&contents, Some(&job.id)).await?;
        job.restart(extractor);
        job.take_recorded(&mut recorded);
        Ok(())
    }

    /// Marks `job`'s document finished with its outcome and lets it go, when
    /// its recorded replies ended its run and this worker had nothing left
    /// to write (a journal an earlier version left pending): without it the
    /// document would stay claimed, and every later worker would replay it.
    /// `valid` says which outcome it is.
    pub(crate) async fn settle<T>(&self, job: &Job<T>, valid: bool) -> Result<(), Error> {
        let Some(db) = self.shared() else { return Ok(()) };
        if job.answered > 0 {
            return Ok(());
        }
        let state = if valid { "valid" } else { "escalated" };
        db.settle(&job.id, &job.content, state).await
    }

    /// The outcomes and failures other workers recorded for `jobs` (those
    /// this worker did not finish), rebuilt from the journal: outcomes by
    /// replaying their recorded replies, never read from disk.
    pub(crate) async fn finished_elsewhere<T, M>(
        &self,
        jobs: impl IntoIterator<Item = Job<T>>,
        extractor: &Extractor<M>,
    ) -> Result<Vec<(usize, String, Result<Outcome<T>, Error>)>, Error>
    where
        T: Extractable + Send + 'static,
        M: Model,
    {
        let Some(db) = self.shared() else { return Ok(Vec::new()) };
        let mut jobs: BTreeMap<String, Job<T>> = jobs.into_iter().map(|job| (job.id.clone(), job)).collect();
        let contents = jobs.values().map(|job| (job.id.clone(), job.content.clone())).collect();
        let mut recorded = db.recorded(&contents, None).await?;
        let mut finished = Vec::new();
        for row in db.documents_with_outcomes().await? {
            let Some(mut job) = jobs.remove(&row.id) else { continue };
            if row.content != job.content {
                // Another worker was given other text for it: its outcome is not this text's.
                let problem = crate::journal::JournalProblem::ContentChanged { document: row.id.clone() };
                finished.push((job.index, row.id, Err(db.refused(problem))));
                continue;
            }
            let result = match (row.outcome, row.failure) {
                (Some(_), _) => {
                    job.restart(extractor);
                    job.take_recorded(&mut recorded);
                    match job.replay() {
                        Some(outcome) => Ok(outcome),
                        None => Err(db.refused(crate::journal::JournalProblem::Unreadable(format!(
                            "document {} has an outcome, but its recorded replies do not lead to one",
                            crate::quote_prefix(&row.id)
                        )))),
                    }
                }
                (None, Some(failure)) => Err(Error::transport(failure)),
                (None, None) => continue,
            };
            finished.push((job.index, row.id, result));
        }
        Ok(finished)
    }

    /// Waits to coordinate the run's message batches (one worker at a time
    /// does, under a lease on the run it renews until the guard drops), then
    /// reads again what the run holds (a coordinator before this one may
    /// have gone on since). `None` without a shared journal, or when the
    /// run ended first: every one of its documents has an outcome or failed.
    /// Called before [`jobs`](Engine::jobs), which take what it reads.
    pub async fn coordinate(&mut self) -> Result<Option<Coordinating>, Error> {
        let Some(db) = self.shared().cloned() else { return Ok(None) };
        let ids: Vec<String> = self.documents.iter().map(|d| d.id().into_owned()).collect();
        let Some(coordinating) = Coordinating::start(db.clone(), &ids).await? else { return Ok(None) };
        let contents: BTreeMap<String, String> =
            ids.iter().cloned().zip(self.contents.iter().cloned()).collect();
        self.recorded = db.recorded(&contents, None).await?;
        Ok(Some(coordinating))
    }
}

/// The coordination of a shared run's batches, held by this worker: its
/// lease on the run is renewed in the background until this is dropped
/// (and then lets go).
pub struct Coordinating {
    db: Arc<Postgres>,
    renewing: tokio::task::JoinHandle<()>,
}

impl Coordinating {
    async fn start(db: Arc<Postgres>, ids: &[String]) -> Result<Option<Coordinating>, Error> {
        loop {
            if db.coordinate().await? {
                break;
            }
            if !db.pending().await?.iter().any(|id| ids.contains(id)) {
                return Ok(None);
            }
            tokio::time::sleep(db.poll_every()).await;
        }
        tracing::info!(target: "extract", worker = db.worker(), "coordinating the run's message batches");
        let renewer = db.clone();
        let renewing = tokio::spawn(async move {
            loop {
                tokio::time::sleep(renewer.renew_every()).await;
                // A renewal that fails lets the lease run out: the next
                // intent is refused, so no batch is created by two workers.
                if let Err(error) = renewer.renew().await {
                    tracing::warn!(target: "extract", %error, "cannot renew the coordination of the run's batches");
                }
            }
        });
        Ok(Some(Coordinating { db, renewing }))
    }
}

impl Drop for Coordinating {
    fn drop(&mut self) {
        self.renewing.abort();
        let db = self.db.clone();
        // Lets go at once, so a waiting worker need not wait out the lease.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = db.stop_coordinating().await;
            });
        }
    }
}
