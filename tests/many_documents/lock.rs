//! The SQLite journal's run lock belongs to the database file, not to the
//! spelling of its path: while a run holds a journal, a run through a
//! symbolic link to it, a relative path, `a/../run.db`, a linked directory
//! is refused as `JournalProblem::InUse`, in the same process and from
//! another one, and whether the journal existed when the first run took it
//! or not.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use extract::journal::JournalProblem;
use extract::model::{Model, ModelFuture, Prompt, Reply};
use extract::{Bulk, Document, Error, Extractor};
use serde_json::json;

use crate::support::invoices::{self, Invoice};

/// A model that answers every invoice `amounts 1 total 1` rightly, once
/// `released` (at once by default), counting its calls; `called`, when
/// set, is a file it creates at its first call.
#[derive(Clone)]
struct Held {
    calls: Arc<AtomicUsize>,
    released: Arc<AtomicBool>,
    called: Option<PathBuf>,
}

impl Held {
    fn released() -> Held {
        Held { calls: Arc::default(), released: Arc::new(AtomicBool::new(true)), called: None }
    }

    fn holding() -> Held {
        Held { released: Arc::new(AtomicBool::new(false)), ..Held::released() }
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Model for Held {
    fn call<'a>(&'a self, _prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if let Some(called) = &self.called {
                std::fs::write(called, b"called").unwrap();
            }
            while !self.released.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Ok(Reply::tool_call(json!({"line_items": [{"amount": 1.0}], "total": 1.0})))
        })
    }
}

/// One invoice, `id`.
fn documents(id: &str) -> Vec<Document> {
    vec![Document::text("amounts 1 total 1").with_id(id)]
}

fn bulk(model: &Held, journal: &Path) -> Bulk<Held> {
    Bulk::new(Extractor::new(model.clone())).journal(journal).unwrap()
}

/// A run on `journal` is refused as in use, before any model call.
async fn refused_in_use(journal: &Path) {
    let model = Held::released();
    let result = bulk(&model, journal).run::<Invoice>(documents("refused")).await;
    let err = match result {
        Ok(report) => panic!("a second run went on through {}: {:?}", journal.display(), report.stats),
        Err(err) => err,
    };
    assert!(
        matches!(&err, Error::Journal { problem: JournalProblem::InUse, .. }),
        "{}: {err:?}",
        journal.display()
    );
    assert!(err.to_string().contains("is in use by another run"), "{err}");
    assert_eq!(model.calls(), 0, "{}: the refused run sent nothing", journal.display());
}

/// `path` (absolute) as a path relative to the current directory.
fn relative(path: &Path) -> PathBuf {
    let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
    let mut relative = PathBuf::new();
    for _ in cwd.components().skip(1) {
        relative.push("..");
    }
    relative.join(path.strip_prefix("/").unwrap())
}

/// The spellings of `dir/run.db` these tests try: a symbolic link beside
/// it, one in another directory (relative to that directory), a linked
/// directory, `a/../`, `./`, and a path relative to the current directory.
/// The links are made here, before the journal exists.
fn spellings(dir: &Path) -> Vec<PathBuf> {
    for sub in ["a", "b"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let link = |target: &str, at: PathBuf| {
        let _ = std::fs::remove_file(&at);
        std::os::unix::fs::symlink(target, &at).unwrap();
        at
    };
    vec![
        dir.join("run.db"),
        link("run.db", dir.join("link.db")),
        link("../run.db", dir.join("b").join("up.db")),
        link(".", dir.join("here")).join("run.db"),
        dir.join("a").join("..").join("run.db"),
        dir.join(".").join("run.db"),
        relative(&dir.join("run.db")),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_in_use_is_refused_through_every_spelling_of_its_path() {
    let path = invoices::temp_journal("lock", "spellings");
    let spellings = spellings(path.parent().unwrap());
    // Each spelling holds the journal in turn (the first through a link to
    // a journal that does not exist yet), with a document of its own, and
    // every other one is refused.
    let holders = [1, 0, 2, 3, 4, 5, 6];
    for holder in holders {
        let model = Held::holding();
        let running = {
            let bulk = bulk(&model, &spellings[holder]);
            let documents = documents(&format!("held-{holder}"));
            tokio::spawn(async move { bulk.run::<Invoice>(documents).await })
        };
        let started = Instant::now();
        while model.calls() == 0 {
            assert!(started.elapsed() < Duration::from_secs(30), "the holding run never called its model");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        for (n, other) in spellings.iter().enumerate() {
            if n != holder {
                refused_in_use(other).await;
            }
        }
        model.released.store(true, Ordering::SeqCst);
        let report = running.await.unwrap().unwrap();
        assert_eq!((report.outcomes.len(), model.calls()), (1, 1));
    }
    assert_eq!(invoices::journal_replies(&path), holders.len(), "one journal, whatever its spelling");
}

/// The child of the two-process test: a run on the journal the parent
/// names, whose model creates the file the parent names and never answers.
/// Does nothing when run as an ordinary test.
#[test]
fn child_process_holding_a_journal() {
    let (Ok(journal), Ok(called)) =
        (std::env::var("EXTRACT_LOCK_CHILD_JOURNAL"), std::env::var("EXTRACT_LOCK_CHILD_CALLED"))
    else {
        return;
    };
    let model = Held { called: Some(called.into()), ..Held::holding() };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let _ = runtime.block_on(bulk(&model, Path::new(&journal)).run::<Invoice>(documents("child")));
    unreachable!("the parent kills this process while its model waits");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_another_process_holds_is_refused_through_every_spelling_and_free_once_it_dies() {
    let path = invoices::temp_journal("lock", "two-processes");
    let dir = path.parent().unwrap().to_path_buf();
    let spellings = spellings(&dir);
    let called = dir.join("child-called");
    let _ = std::fs::remove_file(&called);
    // The child takes the journal through a link, before the journal exists.
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["lock::child_process_holding_a_journal", "--exact", "--test-threads=1"])
        .env("EXTRACT_LOCK_CHILD_JOURNAL", &spellings[1])
        .env("EXTRACT_LOCK_CHILD_CALLED", &called)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !called.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "the child never called its model");
        assert!(child.try_wait().unwrap().is_none(), "the child ended before it held the journal");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for other in spellings.iter().filter(|s| **s != spellings[1]) {
        refused_in_use(other).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // Its lock died with it: the journal opens at once, through any spelling.
    let model = Held::released();
    let report = bulk(&model, &spellings[6]).run::<Invoice>(documents("child")).await.unwrap();
    assert_eq!((report.outcomes.len(), model.calls()), (1, 1), "the child's document, asked again");
}
