//! A worker that stalls, or holds text another worker corrected, cannot
//! undo another worker's work (issue 34, defects 1 and 2): only a
//! document's lease holder writes its replies, outcome or failure, and only
//! for the content the run holds now.

use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use extract::model::{Model, ModelFuture, Prompt, Reply};
use extract::{Bulk, Document, Error, Extractable, Extractor, Journal, Retries};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::support::postgres::PgServer;

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Total {
    total: f64,
}

/// A model that answers `{"total": 3}` after `delay`, or fails (a transport
/// error) when `fails`; counting its calls.
#[derive(Clone, Default)]
struct Timed {
    delay: Duration,
    fails: bool,
    calls: Arc<AtomicUsize>,
}

impl Model for Timed {
    fn call<'a>(&'a self, _prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(self.delay).await;
            if self.fails {
                return Err(Error::transport("the stand-in model failed"));
            }
            Ok(Reply::tool_call(json!({"total": 3.0})))
        })
    }
}

/// Short leases, so a paused worker loses its document within the test.
fn journal(url: &str, run: &str) -> Journal {
    Journal::postgres(url, run).leases(Duration::from_secs(2), Duration::from_millis(500))
}

fn bulk(model: &Timed, url: &str, run: &str) -> Bulk<Timed> {
    Bulk::new(Extractor::new(model.clone()).retries(Retries::new(1).unwrap()))
        .concurrency(1)
        .journal(journal(url, run))
        .unwrap()
}

fn document(text: &str) -> Document {
    Document::text(text).with_id("x")
}

/// The worker that stalls: a failing model that answers after 1.5 s. Does
/// nothing when run as an ordinary test.
#[test]
fn child_stalling_worker() {
    let Ok(url) = std::env::var("EXTRACT_STALL_DATABASE") else { return };
    let model = Timed { delay: Duration::from_millis(1500), fails: true, ..Timed::default() };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let report = runtime.block_on(bulk(&model, &url, "stall").run::<Total>([document("Total 3")])).unwrap();
    println!("REPORT valid={} failed={}", report.stats.valid(), report.failed.len());
}

fn signal(child: &Child, signal: &str) {
    let status = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
    assert!(status.success(), "kill {signal}");
}

/// Whether a worker holds document `x` of `run` now (false before the schema exists).
fn held(server: &PgServer, run: &str) -> bool {
    let sql = format!(
        "SELECT count(*) FROM extract_documents WHERE run = '{run}' AND id = 'x' AND lease_owner IS NOT NULL"
    );
    server.count("stall", &sql) == 1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_paused_past_its_lease_cannot_fail_a_document_another_worker_finished() {
    let server = PgServer::start();
    server.create_database("stall");
    let url = server.url("stall");
    // Worker A claims the document and calls its (failing) model: paused there.
    let mut a = Command::new(std::env::current_exe().unwrap())
        .args(["stalled::child_stalling_worker", "--exact", "--test-threads=1", "--nocapture"])
        .env("EXTRACT_STALL_DATABASE", &url)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !held(&server, "stall") {
        assert!(started.elapsed() < Duration::from_secs(30), "worker A never claimed the document");
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&a, "-STOP");
    tokio::time::sleep(Duration::from_millis(2500)).await;

    // Worker B takes the document over once A's lease ran out, and finishes it.
    let good = Timed::default();
    let report = bulk(&good, &url, "stall").run::<Total>([document("Total 3")]).await.unwrap();
    assert_eq!((report.stats.valid(), good.calls.load(Ordering::SeqCst)), (1, 1));

    // A resumes: its model call fails, and it must record nothing.
    signal(&a, "-CONT");
    let waited = Instant::now();
    let status = loop {
        if let Some(status) = a.try_wait().unwrap() {
            break status;
        }
        assert!(waited.elapsed() < Duration::from_secs(60), "worker A never ended");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let output = a.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(status.success(), "{said}");
    assert!(said.contains("REPORT valid=1 failed=0"), "A reports B's outcome: {said}");
    let state = "SELECT state || ' ' || coalesce(lease_owner, '-') FROM extract_documents WHERE run = 'stall' AND id = 'x'";
    assert_eq!(server.sql("stall", state), "valid -", "the document stays valid and free");
    assert_eq!(
        server.count("stall", "SELECT count(*) FROM extract_failures"),
        0,
        "A's failure is not recorded"
    );

    // A third worker ends at once, without a call.
    let third = Timed::default();
    let report = tokio::time::timeout(
        Duration::from_secs(20),
        bulk(&third, &url, "stall").run::<Total>([document("Total 3")]),
    )
    .await
    .expect("a later worker ends")
    .unwrap();
    assert_eq!((report.stats.valid(), third.calls.load(Ordering::SeqCst)), (1, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_holding_old_text_cannot_replace_the_outcome_of_the_corrected_text() {
    let server = PgServer::start();
    server.create_database("stall");
    let url = server.url("stall");
    // Worker A runs the document with its old text; its model is slow.
    let slow = Timed { delay: Duration::from_millis(1500), ..Timed::default() };
    let a = tokio::spawn({
        let (slow, url) = (slow.clone(), url.clone());
        async move { bulk(&slow, &url, "old-text").run::<Total>([document("Total 3 (old scan)")]).await }
    });
    let started = Instant::now();
    while !held(&server, "old-text") {
        assert!(started.elapsed() < Duration::from_secs(30), "worker A never claimed the document");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Worker B joins with the corrected text, and finishes it first.
    let fast = Timed::default();
    let report = bulk(&fast, &url, "old-text").run::<Total>([document("Total 3 (corrected)")]).await.unwrap();
    assert_eq!(report.stats.valid(), 1);
    let outcome_content = "SELECT o.content = d.content FROM extract_outcomes o JOIN extract_documents d
                           ON d.run = o.run AND d.id = o.document WHERE o.run = 'old-text'";
    assert_eq!(server.sql("stall", outcome_content), "t");

    // A's reply for the old text comes back: refused, and said so in A's report.
    let report = a.await.unwrap().unwrap();
    assert_eq!(slow.calls.load(Ordering::SeqCst), 1);
    let refused = report.failed.get("x").map(ToString::to_string).unwrap_or_default();
    assert!(refused.contains("run by another worker with other content"), "{report:?}");
    assert_eq!(server.sql("stall", outcome_content), "t", "the outcome is still the corrected text's");
    assert_eq!(server.count("stall", "SELECT count(*) FROM extract_replies WHERE run = 'old-text'"), 1);

    // A run over the corrected text counts it valid.
    let again = Timed::default();
    let report =
        bulk(&again, &url, "old-text").run::<Total>([document("Total 3 (corrected)")]).await.unwrap();
    assert_eq!((report.stats.valid(), again.calls.load(Ordering::SeqCst)), (1, 0));
}
