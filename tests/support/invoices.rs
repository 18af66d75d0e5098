//! What the bulk and batches tests share: the invoice type both extract,
//! its packets for comparing two runs, and a fresh journal path.

use std::path::{Path, PathBuf};

use extract::{BulkReport, Extractable};
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

/// Every outcome of a report as JSON, by document id: two runs that agree
/// give equal packets.
pub fn packets<T: Serialize>(report: &BulkReport<T>) -> Vec<String> {
    report.outcomes.values().map(|o| serde_json::to_string(o).unwrap()).collect()
}

/// A journal path of its own for test `name` of `suite`, with no file yet.
pub fn temp_journal(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("extract-{suite}-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.journal");
    let _ = std::fs::remove_file(&path);
    path
}

/// The replies a journal holds: its `call` records (tool calls) and its
/// `reply` records (any other answer).
pub fn journal_replies(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.matches("\"record\":\"call\"").count() + text.matches("\"record\":\"reply\"").count()
}
