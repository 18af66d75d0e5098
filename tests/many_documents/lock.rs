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
use extract::{Bulk, BulkReport, Document, Error, Extractor};
use serde_json::json;
use tokio::task::JoinHandle;

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

/// A run through `journal` of one document, `id`, once its model was
/// called (so it holds the journal), and its model, which answers once
/// released.
///
/// The lock of a run that just ended is let go as its run returns, but a
/// child process that another test of this binary spawns at that moment
/// holds a copy of the lock's descriptor (an `flock` is the open file's,
/// which a child shares) until it executes its program: while the journal
/// is in use, starting is tried again for a moment.
async fn hold(journal: &Path, id: &str) -> (Held, JoinHandle<Result<BulkReport<Invoice>, Error>>) {
    let started = Instant::now();
    loop {
        let model = Held::holding();
        let running = {
            let bulk = bulk(&model, journal);
            let documents = documents(id);
            tokio::spawn(async move { bulk.run::<Invoice>(documents).await })
        };
        while model.calls() == 0 && !running.is_finished() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the run through {} never began",
                journal.display()
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        if model.calls() > 0 {
            return (model, running);
        }
        match running.await.unwrap() {
            Err(Error::Journal { problem: JournalProblem::InUse, .. })
                if started.elapsed() < Duration::from_secs(5) =>
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            ended => {
                panic!("the run through {} ended before its model was called: {ended:?}", journal.display())
            }
        }
    }
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
        let (model, running) = hold(&spellings[holder], &format!("held-{holder}")).await;
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
    // Never outlive a parent that died before it could kill this process.
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(120));
        std::process::exit(1);
    });
    let model = Held { called: Some(called.into()), ..Held::holding() };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let _ = runtime.block_on(bulk(&model, Path::new(&journal)).run::<Invoice>(documents("child")));
    unreachable!("the parent kills this process while its model waits");
}

/// A child process, killed when the test ends however it ends (its model
/// never answers).
struct Child(std::process::Child);

impl Child {
    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_another_process_holds_is_refused_through_every_spelling_and_free_once_it_dies() {
    let path = invoices::temp_journal("lock", "two-processes");
    let dir = path.parent().unwrap().to_path_buf();
    let spellings = spellings(&dir);
    let called = dir.join("child-called");
    let _ = std::fs::remove_file(&called);
    // The child takes the journal through a link, before the journal exists.
    let mut child = Child(
        Command::new(std::env::current_exe().unwrap())
            .args(["lock::child_process_holding_a_journal", "--exact", "--test-threads=1"])
            .env("EXTRACT_LOCK_CHILD_JOURNAL", &spellings[1])
            .env("EXTRACT_LOCK_CHILD_CALLED", &called)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    while !called.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "the child never called its model");
        assert!(child.0.try_wait().unwrap().is_none(), "the child ended before it held the journal");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for other in spellings.iter().filter(|s| **s != spellings[1]) {
        refused_in_use(other).await;
    }
    child.kill();
    // Its lock died with it: the journal opens again, through any spelling.
    let (model, running) = hold(&spellings[6], "child").await;
    model.released.store(true, Ordering::SeqCst);
    let report = running.await.unwrap().unwrap();
    assert_eq!((report.outcomes.len(), model.calls()), (1, 1), "the child's document, asked again");
}

/// The POSIX (`fcntl`) locks this process holds on the file at `path`, as
/// `/proc/locks` lists them.
fn posix_locks_of_this_process(path: &Path) -> usize {
    use std::os::unix::fs::MetadataExt;
    let inode = format!(":{}", std::fs::metadata(path).unwrap().ino());
    let pid = std::process::id().to_string();
    std::fs::read_to_string("/proc/locks")
        .unwrap()
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() > 5 && f[1] == "POSIX" && f[4] == pid && f[5].ends_with(&inode))
        .count()
}

/// The child of the readers' test: opens the journal the parent names,
/// reads it and closes it, as `sqlite3 run.db` or a reader of the library
/// (`Journal::summary`) in another process would. Does nothing when run as
/// an ordinary test.
#[test]
fn child_process_reading_a_journal() {
    let Ok(journal) = std::env::var("EXTRACT_LOCK_READER_JOURNAL") else { return };
    let db = rusqlite::Connection::open(journal).unwrap();
    db.busy_timeout(Duration::from_secs(5)).unwrap();
    let _: i64 = db.query_row("SELECT count(*) FROM replies", [], |row| row.get(0)).unwrap();
}

/// Whether the journal's write-ahead log is still there after another
/// process opened the journal, read it and closed it.
fn wal_survives_another_reader(path: &Path) -> bool {
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["lock::child_process_reading_a_journal", "--exact", "--test-threads=1"])
        .env("EXTRACT_LOCK_READER_JOURNAL", path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    path.with_extension("db-wal").exists()
}

/// A run's first look at a journal must not cost a reader of the same
/// process its locks. It did (issue 34's unconfirmed suspicion, confirmed):
/// `Sqlite::open_for_run` read the file's first bytes through a
/// `std::fs::File` of its own and closed it (`look_at`), and closing any descriptor of a file drops every POSIX lock
/// the process holds on it, SQLite's included. A reader of the process (the
/// desk, a summary, the caller's own connection) loses its shared lock on
/// the database file while SQLite still counts it, so the next process that
/// closes the journal finds itself alone: it checkpoints and deletes the
/// write-ahead log and the shared memory under the reader (and under the
/// run). `open_for_reading` already avoids opening the file; `look_at` could
/// read the header through SQLite (`metadata` for a missing or empty file)
/// and read the first bytes itself only of a file SQLite calls no database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_opens_a_journal_keeps_the_locks_a_reader_of_this_process_holds_on_it() {
    let path = invoices::temp_journal("lock", "readers-locks");
    bulk(&Held::released(), &path).run::<Invoice>(documents("first")).await.unwrap();
    // A reader of this process, in a read transaction.
    let reader =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    reader.execute_batch("BEGIN").unwrap();
    let replies: i64 = reader.query_row("SELECT count(*) FROM replies", [], |row| row.get(0)).unwrap();
    assert_eq!(replies, 1);
    let held = posix_locks_of_this_process(&path);
    assert!(held > 0, "the reader holds a shared lock on the database file");
    assert!(wal_survives_another_reader(&path), "while it does, another process leaves the log alone");

    bulk(&Held::released(), &path).run::<Invoice>(documents("second")).await.unwrap();
    assert!(wal_survives_another_reader(&path), "another process deleted the log under the reader");
    assert_eq!(
        posix_locks_of_this_process(&path),
        held,
        "a run of this process opened the journal: the reader's locks are gone"
    );
    drop(reader);
}
