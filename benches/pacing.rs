//! Pacing against a metered server: 200 invoices through `Bulk` at
//! concurrency 32 against the stand-in of `tests/support/rate_limited.rs`
//! (120 requests a minute in a continuous bucket, Anthropic's headers, a
//! `retry-after` of one or two seconds on a 429), paced and reactive
//! (`Bulk::pace(false)`, today's pause on a 429): 429s, documents failed,
//! and the steady throughput after the first bucketful as a share of the
//! limit. A server that states no limits, paced by `Bulk::limits`, too.
//!
//! `cargo bench --bench pacing` (about three minutes: the limit binds).

use std::sync::Arc;
use std::time::{Duration, Instant};

use extract::anthropic::Client;
use extract::bulk::Limits;
use extract::{Bulk, Document, Extractable, Extractor};
use schemars::JsonSchema;
use serde::Deserialize;

mod stand_ins;

use stand_ins::rate_limited::{Metering, RateLimited, invoice_answer};

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
struct Invoice {
    line_items: Vec<Item>,
    total: f64,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Item {
    #[allow(dead_code)]
    amount: f64,
}

const DOCUMENTS: usize = 200;
const CONCURRENCY: usize = 32;
const PER_MINUTE: f64 = 120.0;

fn documents() -> Vec<Document> {
    (0..DOCUMENTS)
        .map(|i| Document::text(format!("amounts {i} 1 2 total {}", i + 3)).with_id(format!("inv-{i:03}")))
        .collect()
}

/// What a run changes on the bulk run it is given.
type Configure = fn(Bulk<Client>) -> Bulk<Client>;

struct Figures {
    refused: usize,
    failed: usize,
    valid: u64,
    steady_share: f64,
    wall: Duration,
}

async fn measure(headers: bool, configure: impl FnOnce(Bulk<Client>) -> Bulk<Client>) -> Figures {
    let server = RateLimited::start(Metering {
        requests_per_minute: PER_MINUTE,
        input_tokens_per_minute: 1e12,
        latency: Duration::from_millis(200),
        headers,
        cache: false,
        answer: Arc::new(invoice_answer),
    })
    .await;
    let client = Client::builder()
        .api_key("bench")
        .base_url(&server.base_url)
        .model("claude-haiku-5-5")
        .build()
        .unwrap();
    let bulk = configure(Bulk::new(Extractor::new(client)).concurrency(CONCURRENCY));
    let started = Instant::now();
    let report = bulk.run::<Invoice>(documents()).await.unwrap();
    let wall = started.elapsed();
    let tally = server.tally();
    // After the first bucketful, the bucket gives PER_MINUTE / 60 a second.
    let after: Vec<Duration> = tally.admitted_at.iter().copied().skip(PER_MINUTE as usize).collect();
    let steady_share = match (after.first(), after.last()) {
        (Some(first), Some(last)) if last > first => {
            ((after.len() - 1) as f64 / (*last - *first).as_secs_f64()) / (PER_MINUTE / 60.0)
        }
        _ => f64::NAN,
    };
    Figures {
        refused: tally.refused,
        failed: report.failed.len(),
        valid: report.stats.valid(),
        steady_share,
        wall,
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    println!(
        "{DOCUMENTS} invoices, concurrency {CONCURRENCY}, {PER_MINUTE} requests a minute, 200 ms a reply\n"
    );
    println!("| run | 429s | failed | valid | steady throughput / limit | wall |");
    println!("|---|---:|---:|---:|---:|---:|");
    let runs: [(&str, bool, Configure); 3] = [
        ("reactive (`pace(false)`)", true, |bulk| bulk.pace(false)),
        ("paced by the headers", true, |bulk| bulk),
        ("paced by `limits` (no headers)", false, |bulk| {
            bulk.limits(Limits::per_minute().requests(PER_MINUTE as u64))
        }),
    ];
    for (name, headers, configure) in runs {
        let f = runtime.block_on(measure(headers, configure));
        println!(
            "| {name} | {} | {} | {} | {:.1}% | {:.1} s |",
            f.refused,
            f.failed,
            f.valid,
            f.steady_share * 100.0,
            f.wall.as_secs_f64()
        );
    }
}
