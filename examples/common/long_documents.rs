//! The long documents of `examples/long/` (written by
//! `examples/make_long.rs`) and the types their truths are answers of: a
//! bank `Statement` and a `LongInvoice`, each with one list gathered window
//! by window (`#[extract(per_window)]`) whose items are anchored by their
//! description's quote (the item's whole line), and a check over the whole
//! list (the sum) that only the merged output can pass.

use std::path::{Path, PathBuf};

use extract::{Extractable, Sourced};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Record a bank statement: the account, the opening and closing balance,
/// and every transaction exactly as printed (debits negative).
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(sum(transactions.amount) == closing_balance - opening_balance, tolerance = 0.005)]
pub struct Statement {
    pub account: Sourced<String>,
    pub opening_balance: f64,
    pub closing_balance: f64,
    #[extract(per_window)]
    pub transactions: Vec<Transaction>,
}

/// One transaction: its description (quoting its whole line), its date
/// (YYYY-MM-DD) and its amount (negative for a debit).
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
pub struct Transaction {
    pub description: Sourced<String>,
    pub date: String,
    pub amount: f64,
}

/// Record a long invoice: its number, its total, and every line item
/// exactly as printed (credits negative).
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(sum(line_items.amount) == total, tolerance = 0.005)]
pub struct LongInvoice {
    pub invoice_number: Sourced<String>,
    pub total: f64,
    #[extract(per_window)]
    pub line_items: Vec<Line>,
}

/// One line item: its description (quoting its whole line) and amount.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
pub struct Line {
    pub description: Sourced<String>,
    pub amount: f64,
}

/// Which type a long document's truth answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LongKind {
    Statement,
    Invoice,
}

impl LongKind {
    /// The list gathered window by window.
    pub fn list(self) -> &'static str {
        match self {
            LongKind::Statement => "transactions",
            LongKind::Invoice => "line_items",
        }
    }

    /// The field of an item whose quote anchors it.
    pub fn anchor(self) -> &'static str {
        "description"
    }
}

/// One document of `examples/long/`.
#[derive(Debug, Clone)]
pub struct LongDocument {
    /// `statement-40`, `invoice-08`, ...
    pub name: String,
    pub kind: LongKind,
    /// Pages separated by form feeds.
    pub text: String,
    /// The right answer.
    pub truth: Value,
    /// The same document as a PDF whose text layer is `text`, for some.
    pub pdf: Option<Vec<u8>>,
}

impl LongDocument {
    /// The truth's items, in document order.
    pub fn items(&self) -> &[Value] {
        self.truth[self.kind.list()].as_array().map(Vec::as_slice).unwrap_or_default()
    }

    /// The document's pages.
    pub fn pages(&self) -> usize {
        self.text.matches('\u{c}').count() + 1
    }
}

/// Where the corpus lives.
pub fn long_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/long")
}

/// Every document of `examples/long/`, by name.
pub fn long_corpus() -> Vec<LongDocument> {
    let mut names: Vec<String> = std::fs::read_dir(long_dir())
        .expect("examples/long: run `cargo run --example make_long`")
        .filter_map(|entry| {
            entry.ok()?.file_name().into_string().ok()?.strip_suffix(".json").map(str::to_string)
        })
        .collect();
    names.sort();
    names.iter().map(|name| long_document(name)).collect()
}

/// The document `name` of `examples/long/` (`statement-40`).
pub fn long_document(name: &str) -> LongDocument {
    let dir = long_dir();
    let text = std::fs::read_to_string(dir.join(format!("{name}.txt"))).expect("the document's text");
    let truth = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap())
        .expect("the truth's JSON");
    let kind = if name.starts_with("invoice") { LongKind::Invoice } else { LongKind::Statement };
    let pdf = std::fs::read(dir.join(format!("{name}.pdf"))).ok();
    LongDocument { name: name.to_string(), kind, text, truth, pdf }
}
