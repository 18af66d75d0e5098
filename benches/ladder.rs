//! A ladder of models against one model alone: 200 invoices through `Bulk`
//! against a Messages API stand-in on 127.0.0.1 that serves two models, a
//! small one (`claude-haiku-5-5`) that drops an invoice's last line item
//! on 15% of the documents, every time it is asked (its sum check fails
//! twice: systematic), and a large one (`claude-sonnet-5-5`) that is always
//! right. Small alone, large alone and the ladder (small, then large):
//! accuracy (valid and equal to the truth), wrong accepted (valid and not
//! equal), escalated, calls to each model, and cost at `PriceTable::claude()`
//! prices (the stand-in counts a quarter of a request's bytes as its input
//! tokens, and a quarter of its answer's as output tokens).
//!
//! `cargo bench --bench ladder`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use extract::anthropic::Client;
use extract::{Bulk, Document, Extractable, Extractor, Outcome};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod stand_ins;

use stand_ins::rate_limited::{Metering, RateLimited, invoice_answer};

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
struct Invoice {
    line_items: Vec<Item>,
    total: f64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Item {
    amount: f64,
}

const DOCUMENTS: usize = 200;
const SMALL: &str = "claude-haiku-5-5";
const LARGE: &str = "claude-sonnet-5-5";

/// Whether the small model gets document `i` wrong: 3 in 20.
fn small_misreads(i: u64) -> bool {
    matches!(i % 20, 0 | 7 | 13)
}

/// The document's number, from its text in the request (`amounts {i} 1 2 ...`).
fn document_number(body: &Value) -> u64 {
    invoice_answer(body)["line_items"][0]["amount"].as_f64().unwrap() as u64
}

fn documents() -> Vec<Document> {
    (0..DOCUMENTS)
        .map(|i| Document::text(format!("amounts {i} 1 2 total {}", i + 3)).with_id(format!("inv-{i:03}")))
        .collect()
}

fn truth(i: usize) -> Value {
    json!({"line_items": [{"amount": i as f64}, {"amount": 1.0}, {"amount": 2.0}], "total": (i + 3) as f64})
}

fn client(base: &str, model: &str) -> Client {
    Client::builder().api_key("bench").base_url(base).model(model).build().unwrap()
}

struct Figures {
    right: usize,
    wrong_accepted: usize,
    escalated: u64,
    cost: f64,
}

async fn measure(base: &str, ladder: &[&str]) -> Figures {
    let mut extractor = Extractor::new(client(base, ladder[0]));
    for model in &ladder[1..] {
        extractor = extractor.then(client(base, model));
    }
    let report = Bulk::new(extractor).concurrency(16).run::<Invoice>(documents()).await.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let (mut right, mut wrong_accepted) = (0, 0);
    for (id, outcome) in &report.outcomes {
        let i: usize = id.trim_start_matches("inv-").parse().unwrap();
        if let Outcome::Valid(valid) = outcome {
            if serde_json::to_value(valid.value()).unwrap() == truth(i) {
                right += 1;
            } else {
                wrong_accepted += 1;
            }
        }
    }
    Figures { right, wrong_accepted, escalated: report.stats.escalated(), cost: report.stats.cost().unwrap() }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let calls: Arc<[AtomicUsize; 2]> = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let counted = calls.clone();
    let server = runtime.block_on(RateLimited::start(Metering::unmetered(move |body: &Value| {
        let mut answer = invoice_answer(body);
        let small = body["model"] == SMALL;
        counted[usize::from(!small)].fetch_add(1, Ordering::Relaxed);
        if small && small_misreads(document_number(body)) {
            answer["line_items"].as_array_mut().unwrap().pop();
        }
        answer
    })));
    println!("{DOCUMENTS} invoices; {SMALL} misreads 15% of them, every time; {LARGE} reads all\n");
    println!(
        "| run | accuracy | wrong accepted | escalated | calls small / large | cost | cost / large alone |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let mut large_cost = None;
    for (name, ladder) in
        [("large alone", vec![LARGE]), ("small alone", vec![SMALL]), ("ladder", vec![SMALL, LARGE])]
    {
        for count in calls.iter() {
            count.store(0, Ordering::Relaxed);
        }
        let f = runtime.block_on(measure(&server.base_url, &ladder));
        let large = *large_cost.get_or_insert(f.cost);
        println!(
            "| {name} | {:.1}% | {} | {} | {} / {} | ${:.4} | {:.1}% |",
            100.0 * f.right as f64 / DOCUMENTS as f64,
            f.wrong_accepted,
            f.escalated,
            calls[0].load(Ordering::Relaxed),
            calls[1].load(Ordering::Relaxed),
            f.cost,
            100.0 * f.cost / large
        );
    }
}
