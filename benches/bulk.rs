//! Throughput of `Bulk` over generated documents with an offline model, at
//! zero and at 50 ms latency, against concurrency 1, 4, 16 and 64; and the
//! journal (SQLite, every reply and outcome committed with an fsync): its
//! share of wall time at 200 ms model latency and concurrency 16, and
//! documents per second at zero latency with every outcome durable.
//!
//! `cargo bench --bench bulk` (all of it; the 50 ms runs take about 3
//! minutes), or `cargo bench --bench bulk -- quick` for the zero-latency
//! table and the journal's figures only; add `current-thread` to run on
//! tokio's single-threaded runtime.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use extract::model::{Model, ModelFuture, Prompt, Reply};
use extract::{Bulk, Document, Extractable, Extractor, Retries};
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

const DOCUMENTS: usize = 2_000;

/// Documents of a journal run at 200 ms latency: 25 waves of 16.
const SLOW_DOCUMENTS: usize = 400;

/// Runs with and without a journal at 200 ms latency, each, in ABBA order.
const ROUNDS: usize = 4;

fn documents(count: usize) -> Vec<Document> {
    (0..count)
        .map(|i| Document::text(format!("INVOICE {i} Design {i}.00 Build 2.00")).with_id(format!("d{i}")))
        .collect()
}

fn journal_path(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("extract-bench-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("run.db")
}

/// One run: documents per second of wall clock, and seconds.
async fn run(latency: Duration, concurrency: usize, count: usize, journal: Option<PathBuf>) -> (f64, f64) {
    let extractor = Extractor::new(Offline { latency }).retries(Retries::new(2).unwrap());
    let mut bulk = Bulk::new(extractor).concurrency(concurrency);
    if let Some(path) = &journal {
        bulk = bulk.journal(path).unwrap();
    }
    let docs = documents(count);
    let started = Instant::now();
    let report = bulk.run::<Invoice>(docs).await.unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(report.stats.valid() as usize, count);
    if let Some(path) = journal {
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
    (count as f64 / elapsed, elapsed)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    // `current-thread`: the same on tokio's single-threaded runtime.
    let runtime = if std::env::args().any(|a| a == "current-thread") {
        println!("(tokio current-thread runtime)");
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
    };
    runtime.block_on(async {
        println!("Bulk over {DOCUMENTS} documents, offline model, no journal, documents per second:");
        println!("{:>12} {:>14} {:>14}", "concurrency", "0 ms latency", "50 ms latency");
        for concurrency in [1, 4, 16, 64] {
            let (zero, _) = run(Duration::ZERO, concurrency, DOCUMENTS, None).await;
            let slow = if quick {
                "-".to_string()
            } else {
                format!("{:.0}", run(Duration::from_millis(50), concurrency, DOCUMENTS / 4, None).await.0)
            };
            println!("{concurrency:>12} {zero:>14.0} {slow:>14}");
        }

        // The journal's share of wall time where it matters: a model that
        // takes 200 ms, 16 documents in flight (ABBA order, medians).
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            for journalled in if round % 2 == 0 { [false, true] } else { [true, false] } {
                let journal = journalled.then(|| journal_path(&format!("slow-{round}")));
                let (_, seconds) = run(Duration::from_millis(200), 16, SLOW_DOCUMENTS, journal).await;
                if journalled { &mut with } else { &mut without }.push(seconds);
            }
        }
        let (with, without) = (median(with), median(without));
        println!("\njournal at 200 ms latency, concurrency 16, {SLOW_DOCUMENTS} documents (medians of {ROUNDS} runs each):");
        println!(
            "  without {without:.3} s; with {with:.3} s; the journal's share of wall time {:.2}%",
            (with - without).max(0.0) / with * 100.0
        );

        // Every outcome durable at zero latency: the commits decide it.
        let (rate, _) = run(Duration::ZERO, 16, DOCUMENTS, Some(journal_path("zero"))).await;
        let (bare, _) = run(Duration::ZERO, 16, DOCUMENTS, None).await;
        println!(
            "journal at zero latency, concurrency 16, {DOCUMENTS} documents: {rate:.0} documents/s, every outcome \
             durable (without a journal: {bare:.0} documents/s)"
        );
    });
}
