//! `Bulk` over long documents gathered window by window (DESIGN.md, "Long
//! documents: windows owned by quotes"), with the SQLite journal: each
//! window's replies are recorded keyed by their part, under the windows
//! setting, so the same run again asks nothing, a run with another window
//! size asks again, and a process killed mid-document resumes without
//! asking any recorded window again.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use extract::model::{Model, ModelFuture, Prompt};
use extract::{Bulk, BulkReport, Document, Extractor, Windows};

use crate::support::invoices::{self, packets};
use crate::support::long_documents::{LongDocument, Statement, long_document};
use crate::support::long_stand_in::{Faults, LongStandIn};

/// Two statements, twelve and eight pages.
fn statements() -> Vec<LongDocument> {
    ["statement-12", "statement-08"].into_iter().map(long_document).collect()
}

fn documents() -> Vec<Document> {
    statements().into_iter().map(|d| Document::text(d.text).with_id(d.name)).collect()
}

/// Every window answer leaves one transaction out, so each document also
/// needs the whole's correction (a patch): replies of every part.
const FAULTS: Faults = Faults::exact().skipping(100);

/// The stand-in that knows both statements.
fn stand_in() -> LongStandIn {
    let statements = statements();
    LongStandIn::new(
        FAULTS,
        statements
            .iter()
            .map(|d| (d.text.as_str(), &d.truth, d.kind.list(), d.kind.anchor()))
            .collect::<Vec<_>>(),
    )
}

/// The calls a run by `pages` makes: each window once, then the patch.
fn calls_by(pages: u32) -> usize {
    statements().iter().map(|d| Windows::pages(pages).split(&d.text).len() + 1).sum()
}

/// The stand-in, `latency` slower per call (a real model's pace, so a
/// process can be killed between two replies).
#[derive(Clone)]
struct Slow {
    inner: LongStandIn,
    latency: Duration,
}

impl Model for Slow {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            tokio::time::sleep(self.latency).await;
            self.inner.call(prompt).await
        })
    }

    fn name(&self) -> &str {
        self.inner.name()
    }
}

async fn run<M: Model + Clone + 'static>(model: M, pages: u32, path: &Path) -> BulkReport<Statement> {
    run_by(model, Windows::pages(pages), path).await
}

async fn run_by<M: Model + Clone + 'static>(
    model: M,
    windows: Windows,
    path: &Path,
) -> BulkReport<Statement> {
    Bulk::new(Extractor::new(model).windows(windows))
        .concurrency(2)
        .journal(path)
        .unwrap()
        .run::<Statement>(documents())
        .await
        .unwrap()
}

/// A journal's replies as keyed: `(document, part, rung, attempt)`, in
/// the order they were recorded (part 0: the whole).
fn keys(path: &Path) -> Vec<(String, i64, i64, i64)> {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let db = rusqlite::Connection::open_with_flags(path, flags).unwrap();
    db.busy_timeout(Duration::from_secs(5)).unwrap();
    let mut query = db.prepare("SELECT document, part, rung, attempt FROM replies ORDER BY seq").unwrap();
    query
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The key of the call `prompt` asks, as the journal stores it.
fn key_of(prompt: &Prompt) -> (String, i64, i64, i64) {
    // The journal stores the whole as part 0, a window as its number.
    let part = prompt.part().window().map_or(0, i64::from);
    (prompt.document.id().into_owned(), part, 0, i64::from(prompt.attempt))
}

fn all_valid(report: &BulkReport<Statement>) {
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.outcomes.len(), 2);
    for (id, outcome) in &report.outcomes {
        let valid = outcome.valid().unwrap_or_else(|| panic!("{id}: {outcome:?}"));
        let truth = long_document(id);
        assert_eq!(valid.value().transactions.len(), truth.items().len(), "{id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_windowed_run_again_asks_nothing_and_another_window_size_asks_again() {
    let path = invoices::temp_journal("windows", "again");
    let first = stand_in();
    let report = run(first.clone(), 3, &path).await;
    all_valid(&report);
    assert_eq!(first.calls(), calls_by(3), "each window once, and the whole's patch");
    // Each reply keyed by its part: every window at attempt 1, the whole's patch at attempt 2.
    let recorded = keys(&path);
    assert_eq!(recorded.len(), calls_by(3));
    for document in statements() {
        let windows = Windows::pages(3).split(&document.text).len() as i64;
        let mut parts: Vec<(i64, i64)> =
            recorded.iter().filter(|k| k.0 == document.name).map(|k| (k.1, k.3)).collect();
        parts.sort_unstable();
        let expected: Vec<(i64, i64)> =
            std::iter::once((0, 2)).chain((1..=windows).map(|w| (w, 1))).collect();
        assert_eq!(parts, expected, "{}", document.name);
    }

    // The same run again: every reply replayed, no call.
    let second = stand_in();
    let again = run(second.clone(), 3, &path).await;
    assert_eq!(second.calls(), 0, "every outcome rebuilt from the journal");
    assert_eq!(packets(&again), packets(&report), "the same outcomes");
    assert_eq!(keys(&path).len(), calls_by(3), "nothing recorded again");

    // Another window size asks other calls: nothing is replayed.
    let other = stand_in();
    let by_four = run(other.clone(), 4, &path).await;
    all_valid(&by_four);
    assert_eq!(other.calls(), calls_by(4), "asked again, window by window");
    assert_ne!(calls_by(4), calls_by(3));
    assert_eq!(keys(&path).len(), calls_by(3) + calls_by(4));

    // And by three again: its own replies still replay.
    let back = stand_in();
    let by_three = run(back.clone(), 3, &path).await;
    assert_eq!(back.calls(), 0, "the replies of windows of three pages are still the journal's");
    assert_eq!(packets(&by_three), packets(&report));
}

/// The stand-in, except that window 3's first answer quotes its first
/// transaction from nowhere: that window is corrected in the wave after
/// the one it was asked in, so its replies are recorded out of window order.
#[derive(Clone)]
struct MisquotesWindow3(LongStandIn);

impl Model for MisquotesWindow3 {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            let mut reply = self.0.call(prompt).await?;
            if prompt.part().window() == Some(3)
                && prompt.attempt == 1
                && let extract::model::ReplyContent::ToolCall { input, .. } = &mut reply.content
            {
                input["transactions"][0]["description"]["quote"] =
                    "a line the statement does not have".into();
            }
            Ok(reply)
        })
    }

    fn name(&self) -> &str {
        self.0.name()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_recorded_in_waves_replay_by_their_keys_one_window_at_a_time() {
    let path = invoices::temp_journal("windows", "waves");
    let first = MisquotesWindow3(stand_in());
    let report = run_by(first.clone(), Windows::pages(2), &path).await;
    all_valid(&report);
    assert_eq!(first.0.calls(), calls_by(2) + 2, "window 3 of each statement asked twice");
    // Window 3's correction went out with the next wave: recorded after window 4's first call.
    let recorded = keys(&path);
    let at = |document: &str, part: i64, attempt: i64| {
        recorded.iter().position(|k| k.0 == document && k.1 == part && k.3 == attempt).unwrap()
    };
    assert!(at("statement-12", 3, 2) > at("statement-12", 4, 1), "{recorded:?}");

    // One window at a time asks window 3's correction before window 4:
    // the replies recorded in waves answer it by their keys, with no call.
    let serial = MisquotesWindow3(stand_in());
    let again = run_by(serial.clone(), Windows::pages(2).at_once(1), &path).await;
    assert_eq!(serial.0.calls(), 0, "every reply replayed to the call it answered");
    assert_eq!(packets(&again), packets(&report));
}

/// The child process of the kill test: a slow windowed run on the journal
/// the parent names. Does nothing when run as an ordinary test.
#[test]
fn child_process_windowed_run() {
    let Ok(path) = std::env::var("EXTRACT_WINDOWS_CHILD_JOURNAL") else { return };
    let model = Slow { inner: stand_in(), latency: Duration::from_millis(150) };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(run(model, 3, Path::new(&path)));
}

/// Runs `child_process_windowed_run` in a real child process and kills it
/// (SIGKILL) once the journal holds `at_least` replies.
fn kill_child_after(path: &Path, at_least: usize) {
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["windows::child_process_windowed_run", "--exact", "--test-threads=1"])
        .env("EXTRACT_WINDOWS_CHILD_JOURNAL", path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    invoices::kill_once_journalled(child, path, at_least);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_mid_document_resumes_without_asking_a_recorded_window_again() {
    let path = invoices::temp_journal("windows", "killed");
    kill_child_after(&path, 2);
    let recorded = keys(&path);
    assert!(recorded.len() >= 2 && recorded.len() < calls_by(3), "killed mid-run: {recorded:?}");
    assert!(recorded.iter().all(|k| k.1 > 0), "only windows answered so far: {recorded:?}");
    let ended = invoices::journal_count(&path, "SELECT count(*) FROM replies WHERE done = 1");
    assert_eq!(ended, 0, "killed before any document's outcome");
    assert_eq!(invoices::journal_count(&path, "SELECT count(*) FROM outcomes"), 0);

    // Resumed in this process: the recorded replies replayed, the rest asked.
    let model = stand_in();
    let resumed = run(model.clone(), 3, &path).await;
    all_valid(&resumed);
    let asked: Vec<_> = model.prompts().iter().map(key_of).collect();
    assert_eq!(asked.len(), calls_by(3) - recorded.len(), "only the calls not journalled are asked");
    let before: BTreeSet<_> = recorded.iter().cloned().collect();
    let again: Vec<_> = asked.iter().filter(|key| before.contains(*key)).collect();
    assert!(again.is_empty(), "recorded calls asked again: {again:?}");

    // Over both processes, each call asked once: the journal holds each key once.
    let all = keys(&path);
    let distinct: BTreeSet<_> = all.iter().collect();
    assert_eq!((all.len(), distinct.len()), (calls_by(3), calls_by(3)), "{all:?}");
    assert_eq!(all[..recorded.len()], recorded[..], "the child's replies kept as they were");
    let mut after: Vec<_> = all[recorded.len()..].to_vec();
    let mut asked = asked;
    after.sort_unstable();
    asked.sort_unstable();
    assert_eq!(after, asked, "then this process's, each asked once");

    // The outcomes equal an uninterrupted run's (their values and attempts:
    // the stand-in bills a prefix its own cache has not seen as written,
    // so the usage of the first call after the kill differs).
    let uninterrupted = Bulk::new(Extractor::new(stand_in()).windows(Windows::pages(3)))
        .run::<Statement>(documents())
        .await
        .unwrap();
    assert_eq!(values(&resumed), values(&uninterrupted));
}

/// Each document's value and attempts.
fn values(report: &BulkReport<Statement>) -> Vec<(String, String, u32)> {
    report
        .outcomes
        .iter()
        .map(|(id, outcome)| {
            let valid = outcome.valid().expect("valid");
            (id.clone(), serde_json::to_string(valid.value()).unwrap(), valid.attempts())
        })
        .collect()
}

// ---------------------------------------------------------------------
// a journal written with one `at_once` replayed
// with another. The journal's key leaves `at_once` out ("changes no
// call"), but the halves of cut windows are numbered in the order they are
// cut, which depends on the waves: window 12 is another window.
// ---------------------------------------------------------------------

#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
struct Fees {
    #[extract(per_window)]
    rows: Vec<FeeRow>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
struct FeeRow {
    line: extract::Sourced<String>,
    amount: f64,
}

const TWELVE: &str =
    "row 1\nrow 2\nrow 3\nrow 4\nrow 5\nrow 6\nrow 7\nrow 8\nrow 9\nrow 10\nrow 11\nrow 12\n";

/// Answers a window of one line with that line's row; a longer window is
/// cut by the output limit.
#[derive(Clone, Default)]
struct OneLineAnswers {
    calls: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Model for OneLineAnswers {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let task = &prompt.windowed.as_ref().expect("a windowed call").task;
            let json_string = |text: &str| -> (String, usize) {
                let mut strings = serde_json::Deserializer::from_str(text).into_iter::<String>();
                let string = strings.next().unwrap().unwrap();
                (string, strings.byte_offset())
            };
            let after = task.split_once("from the line ").unwrap().1;
            let (first, used) = json_string(after);
            let last = json_string(after[used..].split_once("through the line ").unwrap().1).0;
            let row = serde_json::json!({"line": {"value": first, "quote": first}, "amount": 1.0});
            Ok(if first == last {
                extract::model::Reply::tool_call(serde_json::json!({"rows": [row]}))
            } else {
                extract::model::Reply::truncated()
            })
        })
    }

    fn name(&self) -> &str {
        "one-line-answers"
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_written_in_waves_of_4_replays_the_same_outcome_one_window_at_a_time() {
    let path = invoices::temp_journal("windows", "review-at-once");
    let run = |at_once: u32, model: OneLineAnswers| {
        let path = path.clone();
        async move {
            Bulk::new(Extractor::new(model).windows(Windows::lines(4).at_once(at_once)))
                .journal(&path)
                .unwrap()
                .run::<Fees>(vec![Document::text(TWELVE).with_id("twelve")])
                .await
                .unwrap()
        }
    };
    let first = run(4, OneLineAnswers::default()).await;
    let outcome = &first.outcomes["twelve"];
    assert_eq!(outcome.valid().expect("valid").value().rows.len(), 12);
    let model = OneLineAnswers::default();
    let again = run(1, model.clone()).await;
    assert!(again.failed.is_empty(), "{:?}", again.failed);
    let outcome = &again.outcomes["twelve"];
    let valid = outcome.valid().unwrap_or_else(|| panic!("replayed to other windows: {outcome:#?}"));
    assert_eq!(valid.value().rows.len(), 12);
}

/// Message Batches ask each document in one request: windows, which ask a
/// long document call after call, are refused before anything is sent
/// (the client points at a port nothing listens on).
#[cfg(feature = "anthropic")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_batches_refuse_windows_and_say_so() {
    use extract::anthropic::{Batches, Client};
    let client = Client::builder()
        .api_key("test-key")
        .base_url("http://127.0.0.1:9")
        .model("claude-haiku-5-5")
        .build()
        .unwrap();
    let extractor = Extractor::new(client).windows(Windows::pages(3));
    let error = Batches::with_extractor(extractor).run::<Statement>(documents()).await.unwrap_err();
    assert_eq!(error.kind(), extract::ErrorKind::Configuration, "{error}");
    assert!(error.to_string().contains("windows (pages(3))"), "{error}");
}
