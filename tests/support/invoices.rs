//! What the bulk and batches tests share: the invoice type both extract,
//! its packets for comparing two runs, and a fresh journal path.

use std::path::{Path, PathBuf};

use extract::{BulkReport, Document, Extractable};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An invoice whose items must sum to its total.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
pub struct Invoice {
    pub line_items: Vec<Item>,
    pub total: f64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
pub struct Item {
    pub amount: f64,
}

/// `count` invoices in the text the tests' scripted readers parse
/// (`amounts {i} 1 2 total {i + 3}`), with ids `inv-00`, `inv-01`, ... (three
/// digits past 100 invoices, so the ids sort as the invoices are numbered).
/// Every `every`-th one, from the first, ends with `mark`: " wrong" (the
/// reader's first answer breaks the sum), " stuck" (every answer does).
pub fn marked_invoices(count: usize, every: usize, mark: &str) -> Vec<Document> {
    let width = if count > 100 { 3 } else { 2 };
    (0..count)
        .map(|i| {
            let marked = if i.is_multiple_of(every) { mark } else { "" };
            Document::text(format!("amounts {i} 1 2 total {}{marked}", i + 3))
                .with_id(format!("inv-{i:0width$}"))
        })
        .collect()
}

/// Every outcome of a report as JSON, by document id: two runs that agree
/// give equal packets.
pub fn packets<T: Serialize>(report: &BulkReport<T>) -> Vec<String> {
    report.outcomes.values().map(|o| serde_json::to_string(o).unwrap()).collect()
}

/// A journal path of its own for test `name` of `suite`, in an empty directory.
pub fn temp_journal(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("extract-{suite}-{}-{name}", std::process::id()));
    // A directory of its own, empty: an earlier process with the same id
    // (ids are reused) may have left files in it.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("run.db")
}

/// The replies a journal holds (0 when there is no journal yet), read as
/// the `sqlite3` shell would, without the run's lock.
/// Kills `child` (SIGKILL) once the journal at `path` holds `at_least`
/// replies: a run stopped at the worst moment, mid-run.
pub fn kill_once_journalled(mut child: std::process::Child, path: &Path, at_least: usize) {
    let started = std::time::Instant::now();
    while journal_replies(path) < at_least {
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the child journalled nothing");
        assert!(child.try_wait().unwrap().is_none(), "the child ended before it was killed");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

pub fn journal_replies(path: &Path) -> usize {
    journal_count(path, "SELECT count(*) FROM replies")
}

/// The number `query` (a `SELECT count(*)`) gives on the journal at `path`;
/// 0 when there is no journal yet.
pub fn journal_count(path: &Path, query: &str) -> usize {
    if !path.exists() {
        return 0;
    }
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let Ok(db) = rusqlite::Connection::open_with_flags(path, flags) else { return 0 };
    let _ = db.busy_timeout(std::time::Duration::from_secs(5));
    db.query_row(query, [], |row| row.get::<_, i64>(0)).map_or(0, |n| n as usize)
}
