//! `Bulk`: many documents, a bounded number in flight, a journal that makes
//! the run resumable, even after the process is killed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use extract::journal::JournalProblem;
use extract::model::{Model, ModelFuture, Prompt, Reply};
use extract::{Bulk, Document, Error, ErrorKind, Extractable, Extractor, Retries};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::support::invoices;
use invoices::{Invoice, packets};

/// A model that reads its answer from the document: `amounts 1 2 3 total 6`,
/// and `wrong` makes the first attempt drop the last amount (the check fails,
/// the correction fixes it); `down` makes every call fail. It counts calls,
/// the calls in flight, and the most in flight at once.
#[derive(Clone, Default)]
struct DocumentModel {
    latency: Duration,
    calls: Arc<AtomicUsize>,
    in_flight: Arc<AtomicUsize>,
    most_in_flight: Arc<AtomicUsize>,
}

impl Model for DocumentModel {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.most_in_flight.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(self.latency).await;
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            let text = prompt.document.searchable_text().unwrap_or_default();
            if text.contains("down") {
                return Err(Error::transport("the test server is down"));
            }
            let words: Vec<&str> = text.split_whitespace().collect();
            let total_at = words.iter().position(|w| *w == "total").unwrap();
            let mut amounts: Vec<f64> = words[1..total_at].iter().map(|w| w.parse().unwrap()).collect();
            if (text.contains("wrong") && prompt.attempt == 1) || text.contains("stuck") {
                amounts.pop();
            }
            let items: Vec<_> = amounts.iter().map(|a| json!({"amount": a})).collect();
            Ok(Reply::tool_call(
                json!({"line_items": items, "total": words[total_at + 1].parse::<f64>().unwrap()}),
            ))
        })
    }
}

/// Twenty documents: every third one needs a correction.
fn documents() -> Vec<Document> {
    invoices::marked_invoices(20, 3, " wrong")
}

fn temp_journal(name: &str) -> PathBuf {
    invoices::temp_journal("bulk", name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_n_documents_are_in_flight_and_every_one_has_an_outcome() {
    let model = DocumentModel { latency: Duration::from_millis(20), ..DocumentModel::default() };
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = seen.clone();
    // A panic in the callback is caught by the run: inconsistent counts are counted instead.
    let inconsistent = Arc::new(AtomicUsize::new(0));
    let wrong = inconsistent.clone();
    let report = Bulk::new(Extractor::new(model.clone()).retries(Retries::new(2).unwrap()))
        .concurrency(4)
        .on_progress(move |p| {
            counted.fetch_max(p.done, Ordering::SeqCst);
            if !(p.done <= p.total && p.valid + p.escalated + p.failed == p.done) {
                wrong.fetch_add(1, Ordering::SeqCst);
            }
        })
        .run::<Invoice>(documents())
        .await
        .unwrap();
    assert_eq!(model.most_in_flight.load(Ordering::SeqCst), 4, "bounded, and the bound is used");
    assert_eq!(report.outcomes.len(), 20);
    assert!(report.failed.is_empty());
    assert_eq!(report.stats.valid(), 20);
    assert_eq!(report.stats.first_attempt_valid(), 13, "7 of the 20 need a correction");
    assert_eq!(model.calls.load(Ordering::SeqCst), 27);
    assert_eq!(seen.load(Ordering::SeqCst), 20, "progress reached the total");
    assert_eq!(inconsistent.load(Ordering::SeqCst), 0, "every report adds up");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_progress_callback_that_panics_neither_poisons_nor_stops_the_run() {
    let model = DocumentModel { latency: Duration::from_millis(2), ..DocumentModel::default() };
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let report = Bulk::new(Extractor::new(model).retries(Retries::new(2).unwrap()))
        .concurrency(3)
        .on_progress(move |p| {
            counted.fetch_add(1, Ordering::SeqCst);
            // Every other report panics, with the run's workers all busy.
            if p.done % 2 == 1 {
                panic!("the progress bar broke at {}", p.done);
            }
        })
        .run::<Invoice>(documents())
        .await
        .expect("a panicking callback does not end the run");
    assert_eq!(report.outcomes.len(), 20, "{:?}", report.failed);
    assert_eq!(report.stats.valid(), 20);
    assert_eq!(calls.load(Ordering::SeqCst), 20, "the callback is still called after it panicked");
}

#[tokio::test]
async fn a_journal_that_cannot_be_opened_is_an_io_error_keeping_its_cause() {
    let path = temp_journal("no-such-folder").join("inner").join("run.journal");
    let err = Bulk::new(Extractor::new(DocumentModel::default()))
        .journal(&path)
        .unwrap()
        .run::<Invoice>(documents())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "an I/O failure, not a configuration error: {err:?}");
    let cause = std::error::Error::source(&err).and_then(|e| e.downcast_ref::<std::io::Error>());
    assert_eq!(cause.map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound), "{err:?}");
    assert!(err.to_string().contains("cannot open it"), "{err}");
}

#[tokio::test]
async fn a_transport_failure_is_in_failed_not_in_outcomes() {
    let documents = vec![
        Document::text("amounts 1 total 1").with_id("ok"),
        Document::text("amounts down total 1").with_id("down"),
    ];
    let report = Bulk::new(Extractor::new(DocumentModel::default())).run::<Invoice>(documents).await.unwrap();
    assert_eq!(report.outcomes.keys().collect::<Vec<_>>(), ["ok"]);
    assert!(matches!(report.failed["down"], Error::Transport(_)), "{:?}", report.failed);
}

#[tokio::test]
async fn two_documents_with_one_id_are_a_configuration_error() {
    let documents = vec![Document::text("a").with_id("x"), Document::text("b").with_id("x")];
    let err =
        Bulk::new(Extractor::new(DocumentModel::default())).run::<Invoice>(documents).await.unwrap_err();
    assert!(matches!(err, Error::Config(_)) && err.to_string().contains("\"x\""), "{err}");
}

#[tokio::test]
async fn the_same_journal_again_sends_nothing_for_finished_documents() {
    let path = temp_journal("again");
    let first = DocumentModel::default();
    let bulk = |model: DocumentModel| {
        Bulk::new(Extractor::new(model).retries(Retries::new(2).unwrap()))
            .concurrency(3)
            .journal(&path)
            .unwrap()
    };
    let report = bulk(first.clone()).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(first.calls.load(Ordering::SeqCst), 27);

    let second = DocumentModel::default();
    let again = bulk(second.clone()).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(second.calls.load(Ordering::SeqCst), 0, "every outcome rebuilt from the journal");
    assert_eq!(packets(&again), packets(&report), "the same outcomes, built again by the validators");
    assert_eq!(again.stats.valid(), 20);
}

#[tokio::test]
async fn a_journal_for_another_type_is_refused_naming_both_and_left_as_it_was() {
    #[derive(Debug, Deserialize, JsonSchema, Extractable)]
    struct Other {
        #[allow(dead_code)]
        name: String,
    }
    let path = temp_journal("other");
    let documents = || vec![Document::text("amounts 1 total 1").with_id("a")];
    Bulk::new(Extractor::new(DocumentModel::default()))
        .journal(&path)
        .unwrap()
        .run::<Invoice>(documents())
        .await
        .unwrap();
    let before = std::fs::read(&path).unwrap();

    let model = DocumentModel::default();
    let err = Bulk::new(Extractor::new(model.clone()))
        .journal(&path)
        .unwrap()
        .run::<Other>(vec![Document::text("x")])
        .await
        .unwrap_err();
    let said = err.to_string();
    assert!(
        said.contains("was written for the tool `invoice`") && said.contains("not for `other`"),
        "{said}"
    );
    assert!(
        matches!(&err, Error::Journal { problem: JournalProblem::OtherTool { tool, expected_tool, .. }, .. }
            if tool == "invoice" && expected_tool == "other"),
        "{err:?}"
    );
    assert_eq!(model.calls.load(Ordering::SeqCst), 0);
    assert_eq!(std::fs::read(&path).unwrap(), before, "the journal is left byte for byte as it was");

    // The right type still resumes it: nothing is asked again.
    let report = Bulk::new(Extractor::new(model.clone()))
        .journal(&path)
        .unwrap()
        .run::<Invoice>(documents())
        .await
        .unwrap();
    assert_eq!(report.outcomes.len(), 1);
    assert_eq!(model.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_takes_one_run_at_a_time() {
    let path = temp_journal("one-at-a-time");
    let slow = DocumentModel { latency: Duration::from_millis(50), ..DocumentModel::default() };
    let first = {
        let bulk =
            Bulk::new(Extractor::new(slow.clone()).retries(Retries::new(2).unwrap())).journal(&path).unwrap();
        tokio::spawn(async move { bulk.run::<Invoice>(documents()).await })
    };
    while slow.calls.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let second = DocumentModel::default();
    let err = Bulk::new(Extractor::new(second.clone()))
        .journal(&path)
        .unwrap()
        .run::<Invoice>(documents())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("is in use by another run"), "{err}");
    assert!(matches!(&err, Error::Journal { problem: JournalProblem::InUse, .. }), "{err:?}");
    assert_eq!((err.kind(), err.is_retryable()), (ErrorKind::Journal, false));
    assert_eq!(second.calls.load(Ordering::SeqCst), 0, "the refused run sent nothing");
    assert_eq!(first.await.unwrap().unwrap().outcomes.len(), 20, "the first run is not disturbed");
    let after = Bulk::new(Extractor::new(second.clone())).journal(&path).unwrap();
    let after = after.run::<Invoice>(documents()).await.unwrap();
    assert_eq!(after.outcomes.len(), 20, "once it ended, the journal opens again");
    assert_eq!(second.calls.load(Ordering::SeqCst), 0, "and every outcome is rebuilt from it");
}

/// The child process of the kill-and-resume test: a slow bulk run on the
/// journal the parent names. Does nothing when run as an ordinary test.
#[test]
fn child_process_bulk_run() {
    let Ok(path) = std::env::var("EXTRACT_BULK_CHILD_JOURNAL") else { return };
    let set = if std::env::var("EXTRACT_BULK_CHILD_SET").is_ok_and(|s| s == "stuck") {
        stuck_documents()
    } else {
        documents()
    };
    let model = DocumentModel { latency: Duration::from_millis(40), ..DocumentModel::default() };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let bulk = Bulk::new(Extractor::new(model).retries(Retries::new(2).unwrap()))
            .concurrency(2)
            .journal(&path)
            .unwrap();
        bulk.run::<Invoice>(set).await.unwrap();
    });
}

/// The replies a journal holds.
fn replies(path: &Path) -> usize {
    invoices::journal_replies(path)
}

/// Runs `child_process_bulk_run` in a real child process over the document
/// set `set`, and kills it once the journal holds `replies` replies.
fn kill_child_after(path: &Path, set: &str, at_least: usize) {
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["bulk::child_process_bulk_run", "--exact", "--test-threads=1"])
        .env("EXTRACT_BULK_CHILD_JOURNAL", path)
        .env("EXTRACT_BULK_CHILD_SET", set)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    invoices::kill_once_journalled(child, path, at_least);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_run_resumes_from_its_journal() {
    let path = temp_journal("killed");
    // Kill it once it has journalled some replies, mid-run.
    kill_child_after(&path, "documents", 8);
    let recorded = replies(&path);
    assert!(recorded < 27, "killed mid-run: {recorded} replies journalled");

    // Resume on the same journal: nothing already answered is asked again.
    let model = DocumentModel::default();
    let resumed = Bulk::new(Extractor::new(model.clone()).retries(Retries::new(2).unwrap()))
        .concurrency(4)
        .journal(&path)
        .unwrap()
        .run::<Invoice>(documents())
        .await
        .unwrap();
    assert_eq!(resumed.outcomes.len(), 20, "every document ends with exactly one outcome");
    assert_eq!(
        model.calls.load(Ordering::SeqCst),
        27 - recorded,
        "only the replies not journalled are asked for"
    );

    // The outcomes equal an uninterrupted run's.
    let uninterrupted = Bulk::new(Extractor::new(DocumentModel::default()).retries(Retries::new(2).unwrap()))
        .run::<Invoice>(documents())
        .await
        .unwrap();
    assert_eq!(packets(&resumed), packets(&uninterrupted));
}

/// Twelve documents; every fourth one the model never reads right (its last
/// amount is always missing), so it escalates.
fn stuck_documents() -> Vec<Document> {
    (0..12)
        .map(|i| {
            let stuck = if i % 4 == 0 { " stuck" } else { "" };
            Document::text(format!("amounts {i} 1 2 total {}{stuck}", i + 3)).with_id(format!("doc-{i:02}"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_queue_survives_a_killed_run_and_a_recorded_fix_counts_valid_and_reviewed() {
    let path = temp_journal("review");
    kill_child_after(&path, "stuck", 4);

    // Resume; three documents escalate.
    let bulk = || {
        Bulk::new(Extractor::new(DocumentModel::default()).retries(Retries::new(1).unwrap()))
            .journal(&path)
            .unwrap()
    };
    let resumed = bulk().run::<Invoice>(stuck_documents()).await.unwrap();
    assert_eq!(resumed.stats.escalated(), 3);

    // The queue, rebuilt from the journal without the model.
    let queue = bulk().escalations::<Invoice>(stuck_documents()).await.unwrap();
    let ids: Vec<&str> = queue.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["doc-00", "doc-04", "doc-08"]);
    let (_, escalation) = &queue[0];
    assert!(escalation.partial.failed.contains_key("line_items"));

    // A fix that still fails is refused, and nothing is recorded.
    let reviews = || invoices::journal_count(&path, "SELECT count(*) FROM reviews");
    let document = stuck_documents().remove(0);
    let refused = bulk().record_review::<Invoice>(document.clone(), json!({"total": 99.0})).await.unwrap();
    assert_eq!(refused.unwrap_err()[0].code, "check_failed");
    assert_eq!(reviews(), 0, "a refused fix records nothing");

    // A correct fix is recorded; a later run counts the document valid and reviewed.
    let fix = json!({"line_items": [{"amount": 0.0}, {"amount": 1.0}, {"amount": 2.0}]});
    let fixed = bulk().record_review::<Invoice>(document, fix).await.unwrap().unwrap();
    assert!(fixed.reviewed());
    assert_eq!(reviews(), 1, "one review, one row");
    let model = DocumentModel::default();
    let later = Bulk::new(Extractor::new(model.clone()).retries(Retries::new(1).unwrap()))
        .journal(&path)
        .unwrap()
        .run::<Invoice>(stuck_documents())
        .await
        .unwrap();
    assert_eq!(model.calls.load(Ordering::SeqCst), 0);
    assert_eq!(later.stats.escalated(), 2);
    assert_eq!(later.stats.reviewed(), 1, "the report counts it valid and reviewed");
    assert!(later.stats.to_string().contains("of them, reviewed"), "{}", later.stats);
    let reviewed = later.outcomes["doc-00"].valid().expect("valid after review");
    assert!(reviewed.reviewed());
    assert_eq!(reviewed.value().line_items.len(), 3);
    let queue = bulk().escalations::<Invoice>(stuck_documents()).await.unwrap();
    assert_eq!(queue.len(), 2, "a reviewed document leaves the queue");
}
