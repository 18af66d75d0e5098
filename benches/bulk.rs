//! Throughput of `Bulk` over 10,000 generated documents with an offline
//! model, at zero and at 50 ms latency, against concurrency 1, 4, 16 and
//! 64; and the journal's cost per document (bytes, and throughput with and
//! without it) at zero latency.
//!
//! `cargo bench --bench bulk` (all of it; the 50 ms runs take about 11
//! minutes, concurrency 1 alone 500 s), or `cargo bench --bench bulk --
//! quick` for the zero-latency figures and the journal's cost only; add
//! `current-thread` to run on tokio's single-threaded runtime.
//! Wall clock on a shared machine is noisy: the journal's cost is also measured
//! in CPU time per document (every thread, user and kernel), medians of
//! ABBA-ordered runs, and in instructions by `benches/journal_instructions.sh`
//! (which runs this binary's `once with|without` mode under callgrind), the
//! one figure that repeats exactly.

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

/// Runs with and without a journal for its cost, each; a run takes about
/// 50 ms, and more of them steady the medians on a shared machine.
const ROUNDS: usize = 30;

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

/// The CPU time this process has used so far (every thread, user and
/// kernel): unlike wall clock, other programs on a shared machine do not move it.
fn cpu_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec for the call to fill in.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// One run: documents per second of wall clock, CPU microseconds per
/// document, and the journal's size when there is one.
async fn run(latency: Duration, concurrency: usize, journal: Option<PathBuf>) -> (f64, f64, Option<u64>) {
    let extractor = Extractor::new(Offline { latency }).retries(Retries::new(2).unwrap());
    let mut bulk = Bulk::new(extractor).concurrency(concurrency);
    if let Some(path) = &journal {
        bulk = bulk.journal(path).unwrap();
    }
    let docs = documents();
    let started = Instant::now();
    let cpu = cpu_time();
    let report = bulk.run::<Invoice>(docs).await.unwrap();
    let cpu = (cpu_time() - cpu).as_secs_f64();
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(report.stats.valid() as usize, DOCUMENTS);
    let bytes = journal.as_ref().and_then(|p| std::fs::metadata(p).ok()).map(|m| m.len());
    if let Some(path) = journal {
        let _ = std::fs::remove_file(path);
    }
    (DOCUMENTS as f64 / elapsed, cpu * 1e6 / DOCUMENTS as f64, bytes)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    // `current-thread`: the same on tokio's single-threaded runtime, where
    // journal writes never contend.
    let runtime = if std::env::args().any(|a| a == "current-thread") {
        println!("(tokio current-thread runtime)");
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
    };
    runtime.block_on(async {
        // `once with|without`: one zero-latency run at concurrency 16, with
        // or without a journal, for `benches/journal_instructions.sh`.
        if let Some(mode) = std::env::args().skip_while(|a| a != "once").nth(1) {
            run(Duration::ZERO, 16, (mode == "with").then(|| journal_path("once"))).await;
            return;
        }
        println!("Bulk over {DOCUMENTS} documents, offline model, documents per second:");
        println!("{:>12} {:>14} {:>14}", "concurrency", "0 ms latency", "50 ms latency");
        for concurrency in [1, 4, 16, 64] {
            let (zero, _, _) = run(Duration::ZERO, concurrency, None).await;
            let slow = if quick {
                "-".to_string()
            } else {
                format!("{:.0}", run(Duration::from_millis(50), concurrency, None).await.0)
            };
            println!("{concurrency:>12} {zero:>14.0} {slow:>14}");
        }

        // The journal's cost: runs with and without it at concurrency 16,
        // zero latency, in ABBA order (so neither always goes first).
        let (mut with, mut without, mut bytes) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()), 0);
        for round in 0..ROUNDS {
            for journalled in if round % 2 == 0 { [false, true] } else { [true, false] } {
                let journal = journalled.then(|| journal_path(&round.to_string()));
                let (rate, cpu, size) = run(Duration::ZERO, 16, journal).await;
                let into = if journalled { &mut with } else { &mut without };
                into.0.push(rate);
                into.1.push(cpu);
                bytes = size.unwrap_or(bytes);
            }
        }
        let (with_rate, without_rate) = (median(with.0), median(without.0));
        let (with_cpu, without_cpu) = (median(with.1), median(without.1));
        println!("\njournal at concurrency 16, zero latency (medians of {ROUNDS} runs each, ABBA order):");
        println!(
            "  wall clock: without {without_rate:.0} documents/s; with {with_rate:.0} documents/s; cost {:.1}%",
            (1.0 - with_rate / without_rate) * 100.0
        );
        println!(
            "  CPU time:   without {without_cpu:.2} us/document; with {with_cpu:.2} us/document; cost {:.1}% ({:.2} us/document)",
            (with_cpu / without_cpu - 1.0) * 100.0,
            with_cpu - without_cpu
        );
        println!("  journal: {bytes} bytes, {:.0} bytes per document", bytes as f64 / DOCUMENTS as f64);
    });
}
