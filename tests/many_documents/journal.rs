//! The journal itself: an SQLite database that only a run opens, that
//! refuses what is not one of ours without touching it, binds replay to
//! content, stops a run whose writes fail (a real full filesystem), and
//! exports a run as JSON lines.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use extract::journal::JournalProblem;
use extract::model::{Model, ModelFuture, Prompt, Reply};
use extract::{Bulk, Document, Error, Extractor, Journal, Retries};
use serde_json::{Value, json};

use crate::support::invoices::{self, Invoice, packets};

/// A model that reads `amounts 1 2 total 3` from the document (`stuck`
/// drops the last amount, so the document escalates), counting its calls.
#[derive(Clone, Default)]
struct Reader {
    calls: Arc<AtomicUsize>,
    /// How long each answer takes (none by default).
    latency: std::time::Duration,
}

impl Model for Reader {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if !self.latency.is_zero() {
                tokio::time::sleep(self.latency).await;
            }
            let text = prompt.document.searchable_text().unwrap_or_default();
            let words: Vec<&str> = text.split_whitespace().collect();
            let total_at = words.iter().position(|w| *w == "total").unwrap();
            let mut amounts: Vec<f64> = words[1..total_at].iter().map(|w| w.parse().unwrap()).collect();
            if text.contains("stuck") {
                amounts.pop();
            }
            let items: Vec<Value> = amounts.iter().map(|a| json!({"amount": a})).collect();
            Ok(Reply::tool_call(
                json!({"line_items": items, "total": words[total_at + 1].parse::<f64>().unwrap()}),
            ))
        })
    }
}

impl Reader {
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

fn documents() -> Vec<Document> {
    (0..6)
        .map(|i| Document::text(format!("amounts {i} 1 total {}", i + 1)).with_id(format!("d{i}")))
        .collect()
}

fn bulk(model: &Reader, journal: impl Into<Journal>) -> Bulk<Reader> {
    Bulk::new(Extractor::new(model.clone()).retries(Retries::new(1).unwrap()))
        .concurrency(2)
        .journal(journal)
        .unwrap()
}

fn temp_dir(name: &str) -> PathBuf {
    let path = invoices::temp_journal("journal", name);
    path.parent().unwrap().to_path_buf()
}

#[tokio::test]
async fn a_journal_is_only_described_until_a_run_opens_it_and_any_path_converts() {
    let dir = temp_dir("described");
    let path = dir.join("later.db");
    let model = Reader::default();
    // Every kind of path converts into Journal::sqlite.
    let as_str = path.to_str().unwrap();
    for journal in [
        Journal::from(as_str),
        Journal::from(as_str.to_string()),
        Journal::from(path.as_path()),
        Journal::from(path.clone()),
    ] {
        assert_eq!(journal, Journal::sqlite(&path));
        let _ = bulk(&model, journal);
    }
    assert!(!path.exists(), "no I/O before a run");
    let report = bulk(&model, as_str).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.stats.valid(), 6);
    // An SQLite database of ours: WAL mode, our application_id, format 3.
    let db = rusqlite::Connection::open(&path).unwrap();
    let (mode, application, version): (String, i32, i32) = db
        .query_row("SELECT * FROM pragma_journal_mode, pragma_application_id, pragma_user_version", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!((mode.as_str(), application, version), ("wal", 0x4558_5452, 3));
}

/// Runs a bulk run on `path` and returns its error; the model is never called.
async fn refused(path: &Path) -> String {
    let model = Reader::default();
    let err = bulk(&model, path).run::<Invoice>(documents()).await.unwrap_err();
    assert_eq!(model.calls(), 0, "{err}");
    err.to_string()
}

#[tokio::test]
async fn a_file_that_is_not_a_journal_of_ours_is_refused_and_left_byte_for_byte() {
    let dir = temp_dir("not-ours");
    // A one-line JSON file without a final newline: today's main truncated it to zero bytes.
    let json = dir.join("out.json");
    std::fs::write(&json, br#"{"invoices": [1, 2, 3]}"#).unwrap();
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not a journal\nat all\n").unwrap();
    let binary = dir.join("blob.bin");
    std::fs::write(&binary, (0..=255u8).cycle().take(5000).collect::<Vec<u8>>()).unwrap();
    // A journal in the old memory-mapped format (JSON lines).
    let old = dir.join("march.journal");
    std::fs::write(
        &old,
        "{\"record\":\"header\",\"version\":3,\"tool\":\"invoice\",\"schema\":\"ab\"}\n{\"record\":\"call\",\"document\":\"d0\",\"attempt\":1,\"input\":{},\"usage\":[1,2,0,0]}\n",
    )
    .unwrap();
    // Another application's SQLite database.
    let theirs = dir.join("theirs.db");
    {
        let db = rusqlite::Connection::open(&theirs).unwrap();
        db.execute_batch("PRAGMA application_id = 42; CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
    }

    for (path, says) in [
        (&json, "is not a journal of extract"),
        (&text, "is not a journal of extract"),
        (&binary, "is not a journal of extract"),
        (&old, "old memory-mapped format"),
        (&theirs, "not a journal of extract (its application_id is 0x2a"),
    ] {
        let before = std::fs::read(path).unwrap();
        let said = refused(path).await;
        assert!(said.contains(says) && said.contains(&path.display().to_string()), "{said}");
        assert!(said.contains("left as it was"), "{said}");
        assert_eq!(std::fs::read(path).unwrap(), before, "{} is byte for byte as it was", path.display());
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        assert!(!Path::new(&wal).exists(), "SQLite never opened {} for writing", path.display());
        // Readers refuse it too, and leave it as it was.
        let mut out = Vec::new();
        let said = Journal::sqlite(path).export_jsonl(&mut out).unwrap_err().to_string();
        assert!(said.contains("not a journal of extract") || said.contains("old memory-mapped"), "{said}");
        assert_eq!(std::fs::read(path).unwrap(), before, "{} is byte for byte as it was", path.display());
    }
}

#[tokio::test]
async fn a_journal_of_a_newer_format_is_refused_naming_both_formats() {
    let dir = temp_dir("newer");
    let path = dir.join("run.db");
    bulk(&Reader::default(), &path).run::<Invoice>(documents()).await.unwrap();
    {
        let db = rusqlite::Connection::open(&path).unwrap();
        db.execute_batch("PRAGMA user_version = 7").unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let said = refused(&path).await;
    assert!(said.contains("is of format 7, newer than this version of extract reads (format 3)"), "{said}");
    let err = Journal::sqlite(&path).summary().unwrap_err();
    assert!(
        matches!(&err, Error::Journal { problem: JournalProblem::NewerFormat { found: 7, supported: 3 }, journal }
            if *journal == path.display().to_string()),
        "{err:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_take_no_lock_while_a_second_run_is_refused() {
    let dir = temp_dir("readers");
    let path = dir.join("run.db");
    let first = Reader::default();
    bulk(&first, &path).run::<Invoice>(documents()).await.unwrap();

    // A run holds the journal (its lock) while its model is slow.
    #[derive(Clone)]
    struct Slow(Reader);
    impl Model for Slow {
        fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
            Box::pin(async move {
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                self.0.call(prompt).await
            })
        }
    }
    let slow = Reader::default();
    let more: Vec<Document> =
        documents().into_iter().chain([Document::text("amounts 9 total 9").with_id("new")]).collect();
    let running = {
        let bulk = Bulk::new(Extractor::new(Slow(slow.clone()))).journal(&path).unwrap();
        let more = more.clone();
        tokio::spawn(async move { bulk.run::<Invoice>(more).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    // A second run is refused, saying why.
    let said = refused(&path).await;
    assert!(said.contains("is in use by another run"), "{said}");
    // Readers are not: the review queue and the export.
    let queue = bulk(&Reader::default(), &path).escalations::<Invoice>(documents()).await.unwrap();
    assert!(queue.is_empty());
    let mut export = Vec::new();
    assert_eq!(Journal::sqlite(&path).export_jsonl(&mut export).unwrap(), 7);
    let report = running.await.unwrap().unwrap();
    assert_eq!((report.outcomes.len(), slow.calls()), (7, 1), "only the new document was asked");
}

#[tokio::test]
async fn a_changed_document_is_asked_again_and_its_old_replies_are_kept_not_replayed() {
    let dir = temp_dir("changed");
    let path = dir.join("run.db");
    let first = Reader::default();
    bulk(&first, &path).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(first.calls(), 6);

    // d2's content changed: it is asked again; the others are replayed.
    let mut changed = documents();
    changed[2] = Document::text("amounts 40 2 total 42").with_id("d2");
    let second = Reader::default();
    let report = bulk(&second, &path).run::<Invoice>(changed.clone()).await.unwrap();
    assert_eq!(second.calls(), 1, "only the changed document");
    assert_eq!(report.asked_again, 1);
    assert_eq!(report.outcomes["d2"].valid().unwrap().value().total, 42.0, "the new content's answer");
    assert_eq!(invoices::journal_replies(&path), 7, "the old reply is kept");

    // The same documents again: nothing asked, nothing asked again.
    let third = Reader::default();
    let again = bulk(&third, &path).run::<Invoice>(changed.clone()).await.unwrap();
    assert_eq!((third.calls(), again.asked_again), (0, 0));
    assert_eq!(packets(&again), packets(&report));

    // New instructions change every prompt: every document is asked again.
    let fourth = Reader::default();
    let instructed = Bulk::new(
        Extractor::new(fourth.clone()).retries(Retries::new(1).unwrap()).instructions("Totals in euros."),
    )
    .journal(&path)
    .unwrap()
    .run::<Invoice>(changed)
    .await
    .unwrap();
    assert_eq!((fourth.calls(), instructed.asked_again), (6, 6));
}

#[tokio::test]
async fn a_run_exports_as_json_lines_one_object_per_document() {
    let dir = temp_dir("export");
    let path = dir.join("run.db");
    let mut set = documents();
    set.push(Document::text("amounts 1 2 total 3 stuck").with_id("stuck"));
    bulk(&Reader::default(), &path).run::<Invoice>(set).await.unwrap();
    let mut out = Vec::new();
    assert_eq!(Journal::sqlite(&path).export_jsonl(&mut out).unwrap(), 7);
    let lines: Vec<Value> =
        String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 7);
    assert_eq!(lines[0]["id"], "d0");
    assert_eq!(lines[0]["outcome"]["status"], "ok");
    assert_eq!(lines[0]["outcome"]["output"]["total"], 1.0);
    assert_eq!(lines[0]["attempts"], 1);
    assert!(lines[0]["usage"]["input_tokens"].is_u64());
    let stuck = &lines[6];
    assert_eq!(
        (stuck["id"].as_str(), stuck["outcome"]["status"].as_str()),
        (Some("stuck"), Some("escalated"))
    );
    assert_eq!(stuck["attempts"], 2);
    assert!(stuck["outcome"]["error_chain"].is_array());
}

/// The child of the full-disk test: a run on a journal in the small tmpfs
/// the parent mounted, one document at a time. Does nothing when run as an
/// ordinary test.
#[test]
fn child_process_on_a_full_disk() {
    let Ok(dir) = std::env::var("EXTRACT_FULL_DISK_DIR") else { return };
    let path = Path::new(&dir).join("run.db");
    let model = Reader::default();
    // Every reply's commit adds pages to the WAL, until the filesystem is full.
    let set: Vec<Document> = (0..300)
        .map(|i| Document::text(format!("amounts {i} 1 total {}", i + 1)).with_id(format!("d{i:04}")))
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let err = runtime
        .block_on(
            Bulk::new(Extractor::new(model.clone()))
                .concurrency(1)
                .journal(&path)
                .unwrap()
                .run::<Invoice>(set),
        )
        .expect_err("a journal on a full disk ends the run");
    let said = err.to_string();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    let cause = std::error::Error::source(&err).and_then(|e| e.downcast_ref::<std::io::Error>()).unwrap();
    assert_eq!(cause.kind(), std::io::ErrorKind::StorageFull, "{err:?}");
    assert!(said.contains("the run stops, and this reply of document"), "{said}");
    assert!(said.contains("is not recorded: {"), "the reply in hand is in the error: {said}");
    let recorded = invoices::journal_replies(&path);
    assert!(recorded >= 3, "some replies were committed before the disk filled: {recorded}");
    assert_eq!(model.calls(), recorded + 1, "no model call after the failed write ({said})");
    println!("CHILD-OK recorded={recorded} calls={}", model.calls());
}

/// The child of the full-disk test with 4 documents in flight: every reply
/// the model answered is either in the journal or named in the error, and
/// no document starts after the first failed write (so at most the 4 in
/// flight then go unrecorded). Does nothing when run as an ordinary test.
#[test]
fn child_process_on_a_full_disk_at_concurrency_4() {
    let Ok(dir) = std::env::var("EXTRACT_FULL_DISK_DIR") else { return };
    let path = Path::new(&dir).join("run.db");
    let model = Reader { latency: std::time::Duration::from_millis(5), ..Reader::default() };
    let set: Vec<Document> = (0..400)
        .map(|i| Document::text(format!("amounts {i} 1 total {}", i + 1)).with_id(format!("d{i:04}")))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let err = runtime
        .block_on(
            Bulk::new(Extractor::new(model.clone()))
                .concurrency(4)
                .journal(&path)
                .unwrap()
                .run::<Invoice>(set),
        )
        .expect_err("a journal on a full disk ends the run");
    let said = err.to_string();
    let cause = std::error::Error::source(&err).and_then(|e| e.downcast_ref::<std::io::Error>()).unwrap();
    assert_eq!(cause.kind(), std::io::ErrorKind::StorageFull, "{err:?}");
    let unrecorded = said.matches("reply of document").count();
    let recorded = invoices::journal_replies(&path);
    assert!(recorded >= 3, "some replies were committed before the disk filled: {recorded}");
    assert_eq!(model.calls(), recorded + unrecorded, "every paid reply is recorded or in the error: {said}");
    assert!(
        (1..=4).contains(&unrecorded),
        "only the documents in flight go unrecorded: {unrecorded} ({said})"
    );
    println!("CHILD-OK recorded={recorded} unrecorded={unrecorded} calls={}", model.calls());
}

/// Runs the test `child` of this binary in a mount namespace of its own
/// with a tmpfs of `size` mounted on `dir` (`unshare -m`, as root), and
/// returns its standard output once it succeeded. `None` (with the reason
/// printed) only where `unshare` is missing or refused and CI is not set:
/// CI runs as root, where it must really run.
pub fn in_a_small_tmpfs(dir: &Path, size: &str, child: &str) -> Option<String> {
    let script = format!("mount -t tmpfs -o size={size} tmpfs '{}' && exec \"$0\" \"$@\"", dir.display());
    let output = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .arg(std::env::current_exe().unwrap())
        .args([child, "--exact", "--test-threads=1", "--nocapture"])
        .env("EXTRACT_FULL_DISK_DIR", dir)
        .output();
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let output = match output {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !in_ci => {
            println!("skipped: `unshare` is not installed here ({e})");
            return None;
        }
        other => other.unwrap(),
    };
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    if !output.status.success() && stderr.contains("unshare failed") && !in_ci {
        println!("skipped: this user cannot make a mount namespace: {stderr}");
        return None;
    }
    assert!(output.status.success() && stdout.contains("CHILD-OK"), "{stdout}\n{stderr}");
    println!("{}", stdout.lines().find(|l| l.contains("CHILD-OK")).unwrap_or_default());
    Some(stdout.into_owned())
}

#[test]
fn a_journal_on_a_full_filesystem_ends_the_run_and_no_model_call_follows() {
    let dir = temp_dir("full-disk");
    in_a_small_tmpfs(&dir, "256k", "journal::child_process_on_a_full_disk");
}

#[test]
fn on_a_full_filesystem_every_paid_reply_is_recorded_or_in_the_error_at_concurrency_4() {
    let dir = temp_dir("full-disk-4");
    in_a_small_tmpfs(&dir, "256k", "journal::child_process_on_a_full_disk_at_concurrency_4");
}
