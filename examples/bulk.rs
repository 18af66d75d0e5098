//! A folder of invoices through `extract::Bulk`, offline, with a journal:
//! the run is killed half way (a real process, killed), then resumed on the
//! same journal, with a progress bar, and nothing already answered is asked
//! again.
//!
//! ```text
//! cargo run --example bulk
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use extract::model::{Model, ModelFuture, Prompt, Reply};
use extract::{Bulk, Document, Error, Extractable, Extractor, Journal, Retries};
use indicatif::{ProgressBar, ProgressStyle};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Record one invoice.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
struct Invoice {
    /// Invoice number exactly as printed.
    invoice_number: String,
    line_items: Vec<LineItem>,
    total: f64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
struct LineItem {
    description: String,
    amount: f64,
}

const INVOICES: usize = 120;

/// An offline model that reads the invoice it is shown (a stand-in for
/// Claude): every fifth invoice it first reads without its last line, and
/// fixes that when the correction names the sum.
#[derive(Clone, Default)]
struct Reader {
    latency: Duration,
    calls: Arc<AtomicUsize>,
}

impl Model for Reader {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(self.latency).await;
            let text = prompt.document.searchable_text().unwrap_or_default();
            let mut lines = text.lines();
            let number = lines.next().unwrap_or_default().trim_start_matches("INVOICE ").to_string();
            let mut items = Vec::new();
            let mut total = 0.0;
            for line in lines {
                if let Some(amount) = line.strip_prefix("TOTAL ") {
                    total = amount.trim().parse().unwrap_or(0.0);
                } else if let Some((description, amount)) = line.rsplit_once(' ') {
                    items.push(json!({"description": description.trim(), "amount": amount.parse::<f64>().unwrap_or(0.0)}));
                }
            }
            if (number.ends_with('0') || number.ends_with('5')) && prompt.attempt == 1 {
                items.pop();
            }
            Ok(Reply::tool_call(json!({"invoice_number": number, "line_items": items, "total": total})))
        })
    }
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target").join("bulk-example")
}

/// Writes the folder of invoices once.
fn generate(folder: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(folder)?;
    for i in 0..INVOICES {
        let amounts = [120.0 + i as f64, 35.5, 14.25 * (i % 7) as f64];
        let lines: Vec<String> =
            amounts.iter().enumerate().map(|(k, a)| format!("Service {} {a:.2}", k + 1)).collect();
        let total: f64 = amounts.iter().sum();
        let text = format!("INVOICE INV-{i:04}\n{}\nTOTAL {total:.2}\n", lines.join("\n"));
        std::fs::write(folder.join(format!("INV-{i:04}.txt")), text)?;
    }
    Ok(())
}

fn documents(folder: &Path) -> std::io::Result<Vec<Document>> {
    let mut paths: Vec<PathBuf> =
        std::fs::read_dir(folder)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let id = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
            Ok(Document::text(std::fs::read_to_string(&path)?).with_id(id))
        })
        .collect()
}

fn bulk(model: Reader, journal: &Path) -> Result<Bulk<Reader>, Error> {
    let retries = Retries::new(2).map_err(Error::config)?;
    Bulk::new(Extractor::new(model).retries(retries)).concurrency(8).journal(journal)
}

/// The documents the journal holds an outcome of, read from its JSON-lines
/// export (a reader: it takes no lock, so it reads a journal a run has open).
fn finished(journal: &Path) -> usize {
    if !journal.exists() {
        return 0;
    }
    let mut lines = Vec::new();
    match Journal::sqlite(journal).export_jsonl(&mut lines) {
        Ok(_) => String::from_utf8_lossy(&lines).lines().filter(|l| !l.contains("\"outcome\":null")).count(),
        Err(_) => 0,
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let folder = workspace().join("invoices");
    let journal = workspace().join("march.db");
    let child = std::env::args().any(|a| a == "--child");
    if child {
        // The first run: slow, and killed by the parent half way.
        let report = bulk(Reader { latency: Duration::from_millis(25), ..Reader::default() }, &journal)
            .expect("a journal path")
            .run::<Invoice>(documents(&folder).expect("the folder"))
            .await;
        return if report.is_ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE };
    }

    if let Err(error) = generate(&folder) {
        eprintln!("error: cannot write {}: {error}", folder.display());
        return ExitCode::FAILURE;
    }
    for leftover in ["march.db", "march.db-wal", "march.db-shm"] {
        let _ = std::fs::remove_file(workspace().join(leftover));
    }
    println!("{INVOICES} invoices in {}", folder.display());

    // 1. Run in a child process, and kill it half way.
    let mut process = match Command::new(std::env::current_exe().expect("this program"))
        .arg("--child")
        .stdout(Stdio::null())
        .spawn()
    {
        Ok(process) => process,
        Err(error) => {
            eprintln!("error: cannot start the first run: {error}");
            return ExitCode::FAILURE;
        }
    };
    let started = Instant::now();
    while finished(&journal) < INVOICES / 2 && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = process.kill();
    let _ = process.wait();
    let recorded = finished(&journal);
    println!("first run killed after {recorded} outcomes were journalled in {}", journal.display());

    // 2. Resume on the same journal, with a progress bar.
    let model = Reader::default();
    let bar = ProgressBar::new(INVOICES as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
            .expect("a valid template")
            .progress_chars("##-"),
    );
    let shown = bar.clone();
    let resumed = match bulk(model.clone(), &journal) {
        Ok(bulk) => bulk.on_progress(move |p| {
            shown.set_position(p.done as u64);
            shown.set_message(format!("{} valid, {} escalated, {} failed", p.valid, p.escalated, p.failed));
        }),
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let report = match resumed.run::<Invoice>(documents(&folder).expect("the folder")).await {
        Ok(report) => report,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    bar.finish();
    println!(
        "resumed: {} outcomes, {} model calls this run (the journalled replies were replayed, not asked again)",
        report.outcomes.len(),
        model.calls.load(Ordering::SeqCst)
    );
    println!("\n{}", report.stats);
    println!(
        "the journal is an SQLite database: sqlite3 -readonly {} \"SELECT state, count(*) FROM documents GROUP BY state\"",
        journal.display()
    );

    // The run report: one self-contained HTML file.
    let mut page = extract::report::Report::new(&report.stats).title("March invoices: run report");
    for (id, outcome) in &report.outcomes {
        page = page.outcome(id, outcome);
    }
    let path = workspace().join("report.html");
    match std::fs::write(&path, page.html()) {
        Ok(()) => println!("run report: {}", path.display()),
        Err(error) => {
            eprintln!("error: cannot write {}: {error}", path.display());
            return ExitCode::FAILURE;
        }
    }
    if report.outcomes.len() == INVOICES && report.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
