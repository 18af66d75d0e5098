//! What extract's telemetry costs per model call: one extraction (one call,
//! an offline model with no latency) with no subscriber, with
//! `tracing-opentelemetry` exporting every span to the SDK's in-memory
//! exporter, and with the metrics layer beside it; then a zero-latency
//! `Bulk` run with and without. Rounds alternate the setups, so one run's
//! ratios share the machine's state; the cost per call is set against a
//! 200 ms model call.
//!
//! `cargo bench --bench telemetry` (about half a minute).

use std::time::{Duration, Instant};

use extract::model::{Model, ModelFuture, Prompt, Reply};
use extract::{Bulk, Document, Extractable, Extractor};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
#[check(total > 0)]
struct Receipt {
    #[allow(dead_code)]
    vendor: String,
    total: f64,
}

/// Answers at once, correctly.
#[derive(Clone)]
struct Offline;

impl Model for Offline {
    fn call<'a>(&'a self, _prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async { Ok(Reply::tool_call(json!({"vendor": "ACME", "total": 7.5}))) })
    }
}

/// Which subscriber a round runs under.
#[derive(Clone, Copy, Debug)]
enum Setup {
    None,
    Traces,
    TracesAndMetrics,
}

const CALLS: usize = 5_000;
const DOCUMENTS: usize = 5_000;
const ROUNDS: usize = 5;

/// Seconds per extraction, over `CALLS` of them, under `setup`.
fn extractions(setup: Setup) -> f64 {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let extractor = Extractor::new(Offline);
    let work = || {
        let started = Instant::now();
        for _ in 0..CALLS {
            let outcome = runtime.block_on(extractor.extract::<Receipt>("ACME, total 7.50")).unwrap();
            assert!(outcome.is_valid());
        }
        started.elapsed().as_secs_f64() / CALLS as f64
    };
    under(setup, work)
}

/// Documents per second of a zero-latency `Bulk` run under `setup`.
fn bulk(setup: Setup) -> f64 {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let work = || {
        let documents: Vec<Document> = (0..DOCUMENTS)
            .map(|i| Document::text(format!("ACME {i}, total 7.50")).with_id(format!("d-{i}")))
            .collect();
        let started = Instant::now();
        let report = runtime
            .block_on(Bulk::new(Extractor::new(Offline)).concurrency(16).run::<Receipt>(documents))
            .unwrap();
        assert_eq!(report.stats.valid(), DOCUMENTS as u64);
        DOCUMENTS as f64 / started.elapsed().as_secs_f64()
    };
    under(setup, work)
}

/// `work` under `setup`'s subscriber (the exporters kept in memory).
fn under(setup: Setup, work: impl FnOnce() -> f64) -> f64 {
    let spans = InMemorySpanExporter::default();
    let tracer = SdkTracerProvider::builder().with_simple_exporter(spans.clone()).build();
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
        .build();
    let traces = tracing_opentelemetry::layer().with_tracer(tracer.tracer("bench"));
    let took = match setup {
        Setup::None => work(),
        Setup::Traces => tracing::subscriber::with_default(tracing_subscriber::registry().with(traces), work),
        Setup::TracesAndMetrics => {
            let subscriber = tracing_subscriber::registry()
                .with(traces)
                .with(tracing_opentelemetry::MetricsLayer::new(meter.clone()));
            tracing::subscriber::with_default(subscriber, work)
        }
    };
    let _ = tracer.shutdown();
    let _ = meter.shutdown();
    took
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let setups = [Setup::None, Setup::Traces, Setup::TracesAndMetrics];
    let mut per_call: Vec<Vec<f64>> = vec![Vec::new(); setups.len()];
    let mut per_second: Vec<Vec<f64>> = vec![Vec::new(); setups.len()];
    for _ in 0..ROUNDS {
        for (i, setup) in setups.iter().enumerate() {
            per_call[i].push(extractions(*setup));
            per_second[i].push(bulk(*setup));
        }
    }
    let base = median(per_call[0].clone());
    let call = Duration::from_millis(200).as_secs_f64();
    println!("one extraction (one call), median of {ROUNDS} rounds of {CALLS}:");
    for (i, setup) in setups.iter().enumerate() {
        let took = median(per_call[i].clone());
        let added = took - base;
        println!(
            "  {:<17} {:>7.1} µs per call; spans add {:>6.1} µs = {:.4}% of a 200 ms call",
            format!("{setup:?}"),
            took * 1e6,
            added * 1e6,
            100.0 * added / call
        );
    }
    let base = median(per_second[0].clone());
    println!("Bulk, zero latency, concurrency 16, {DOCUMENTS} documents, median of {ROUNDS}:");
    for (i, setup) in setups.iter().enumerate() {
        let rate = median(per_second[i].clone());
        println!("  {:<17} {:>8.0} documents/s ({:.2}x of none)", format!("{setup:?}"), rate, rate / base);
    }
}
