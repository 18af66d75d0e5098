//! Throughput of `Bulk` over 10,000 generated documents with an offline
//! model, at zero and at 50 ms latency, against concurrency 1, 4, 16 and
//! 64; and the journal's cost per document (bytes, and throughput with and
//! without it) at zero latency.
//!
//! `cargo bench --bench bulk` (all of it; the 50 ms runs take about 11
//! minutes, concurrency 1 alone 500 s), or `cargo bench --bench bulk --
//! quick` for the zero-latency figures and the journal's cost only.
//! Wall clock on a shared machine: the journal's cost is measured as the
//! ratio of medians of alternated runs, which repeats where single timings
//! do not.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use extract::{Bulk, Document, Extractable, Extractor, Model, ModelFuture, Prompt, Reply, Retries};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
struct Invoice {
    #[allow(dead_code)]
    invoice_number: String,
    line_items: Vec<LineItem>,
    total: f64,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
struct LineItem {
    #[allow(dead_code)]
    description: String,
    amount: f64,
}

/// Answers every invoice correctly after `latency`.
#[derive(Clone)]
struct Offline {
    latency: Duration,
}

impl Model for Offline {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            if !self.latency.is_zero() {
                tokio::time::sleep(self.latency).await;
            }
            let text = prompt.document.searchable_text().unwrap_or_default();
            let n: f64 = text.split_whitespace().nth(1).and_then(|w| w.parse().ok()).unwrap_or(0.0);
            Ok(Reply::tool_call(json!({
                "invoice_number": format!("INV-{n}"),
                "line_items": [{"description": "Design", "amount": n}, {"description": "Build", "amount": 2.0}],
                "total": n + 2.0,
            })))
        })
    }
}

const DOCUMENTS: usize = 10_000;

fn documents() -> Vec<Document> {
    (0..DOCUMENTS)
        .map(|i| Document::text(format!("INVOICE {i} Design {i}.00 Build 2.00")).with_id(format!("d{i}")))
        .collect()
}

fn journal_path(tag: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("extract-bench-{}-{tag}.journal", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// Documents per second of one run, and the journal's size when there is one.
async fn run(latency: Duration, concurrency: usize, journal: Option<PathBuf>) -> (f64, Option<u64>) {
    let extractor = Extractor::new(Offline { latency }).retries(Retries::new(2).unwrap());
    let mut bulk = Bulk::new(extractor).concurrency(concurrency);
    if let Some(path) = &journal {
        bulk = bulk.journal(path).unwrap();
    }
    let docs = documents();
    let started = Instant::now();
    let report = bulk.run::<Invoice>(docs).await.unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(report.stats.valid() as usize, DOCUMENTS);
    let bytes = journal.as_ref().and_then(|p| std::fs::metadata(p).ok()).map(|m| m.len());
    if let Some(path) = journal {
        let _ = std::fs::remove_file(path);
    }
    (DOCUMENTS as f64 / elapsed, bytes)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        println!("Bulk over {DOCUMENTS} documents, offline model, documents per second:");
        println!("{:>12} {:>14} {:>14}", "concurrency", "0 ms latency", "50 ms latency");
        for concurrency in [1, 4, 16, 64] {
            let (zero, _) = run(Duration::ZERO, concurrency, None).await;
            let slow = if quick {
                "-".to_string()
            } else {
                format!("{:.0}", run(Duration::from_millis(50), concurrency, None).await.0)
            };
            println!("{concurrency:>12} {zero:>14.0} {slow:>14}");
        }

        // The journal's cost: alternated runs at concurrency 16, zero latency.
        let (mut with, mut without, mut bytes) = (Vec::new(), Vec::new(), 0);
        for round in 0..9 {
            without.push(run(Duration::ZERO, 16, None).await.0);
            let (rate, size) = run(Duration::ZERO, 16, Some(journal_path(&round.to_string()))).await;
            with.push(rate);
            bytes = size.unwrap_or(0);
        }
        let (with, without) = (median(with), median(without));
        println!("\njournal at concurrency 16, zero latency (medians of 9 alternated runs):");
        println!(
            "  without: {without:.0} documents/s; with: {with:.0} documents/s; cost {:.1}%",
            (1.0 - with / without) * 100.0
        );
        println!("  journal: {bytes} bytes, {:.0} bytes per document", bytes as f64 / DOCUMENTS as f64);
    });
}
