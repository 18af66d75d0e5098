//! The pause a 429 or 529 sets, shared by every worker of a run on a
//! PostgreSQL journal: the transport, which sees the status, records the
//! pause in the run's row, and waits out the run's pause before every
//! request. The journal reaches the transport as a task-local that `Bulk`
//! sets around each of its workers, so a model needs no setting for it
//! and a model called outside such a run pauses only its own clients.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::journal::Postgres;

/// No shared pause is longer than this, whatever the database holds (the
/// transport's own cap on a wait).
pub const MAX_SHARED_PAUSE: Duration = Duration::from_secs(15 * 60);

tokio::task_local! {
    static RUN: Arc<Postgres>;
}

/// Runs `work` with the run's pause shared through `journal`.
pub async fn shared_with<F: Future>(journal: Arc<Postgres>, work: F) -> F::Output {
    RUN.scope(journal, work).await
}

/// Sleeps while the run is paused (looking again after each sleep: another
/// worker may have extended it).
pub async fn wait_out() {
    let Ok(journal) = RUN.try_with(Arc::clone) else { return };
    loop {
        match journal.paused_for().await {
            Ok(wait) if !wait.is_zero() => {
                tracing::info!(target: "extract", wait_ms = wait.as_millis() as u64, "the run is paused (a 429 or 529 one of its workers saw)");
                tokio::time::sleep(wait).await;
            }
            Ok(_) => return,
            Err(error) => {
                // The journal's next write meets the same failure and ends the worker.
                tracing::warn!(target: "extract", %error, "cannot read the run's pause");
                return;
            }
        }
    }
}

/// Pauses every worker of the run for `wait` from now.
pub async fn pause(wait: Duration) {
    let Ok(journal) = RUN.try_with(Arc::clone) else { return };
    if let Err(error) = journal.pause(wait.min(MAX_SHARED_PAUSE)).await {
        tracing::warn!(target: "extract", %error, "cannot record the run's pause");
    }
}
