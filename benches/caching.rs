//! The prompt cache over a run with corrections, full against patch: 200
//! invoices through `Bulk` against a Messages API stand-in on 127.0.0.1
//! that bills input as the API does (`tests/support/prompt_cache.rs`: a
//! read only of a prefix unchanged byte for byte, tools first, the tool
//! choice before the messages, nothing under 1,024 tokens), one invoice in
//! four answered first with an amount wrong and then corrected. Invoices of
//! 20 line items (one page) and of 150. For each: the share of input tokens
//! read from the cache (`Stats::cache_read_share`), and what an average
//! correction is billed: input (uncached, read, written), output, and its
//! cost at Claude Sonnet 5.5's prices.
//!
//! `cargo bench --bench caching`

use extract::anthropic::Client;
use extract::cost::PriceTable;
use extract::{Bulk, Corrections, Document, Extractor, Outcome, Usage};
use serde_json::Value;

mod stand_ins;

use stand_ins::cached_invoices::{self, Invoice};
use stand_ins::rate_limited::{Metering, RateLimited};

const DOCUMENTS: usize = 200;
const WRONG_EVERY: usize = 4;
const MODEL: &str = "claude-sonnet-5-5";

struct Figures {
    cache_share: f64,
    corrections: usize,
    correction: Usage,
    correction_cost: f64,
    run_cost: f64,
}

async fn measure(items: usize, corrections: Corrections) -> Figures {
    let answer = move |body: &Value| cached_invoices::answer(body, items, WRONG_EVERY);
    let server = RateLimited::start(Metering::unmetered(answer).with_cache()).await;
    let client = Client::builder().api_key("bench").base_url(&server.base_url).model(MODEL).build().unwrap();
    let documents: Vec<Document> = (0..DOCUMENTS)
        .map(|i| Document::text(cached_invoices::invoice(i, items).0).with_id(format!("inv-{i:03}")))
        .collect();
    let report = Bulk::new(Extractor::new(client).corrections(corrections))
        .concurrency(8)
        .run::<Invoice>(documents)
        .await
        .unwrap();
    assert_eq!(report.stats.valid() as usize, DOCUMENTS, "{}", report.stats);
    let rate = PriceTable::claude().rate(MODEL).unwrap();
    let corrected: Vec<Usage> = report
        .outcomes
        .values()
        .filter_map(|outcome| match outcome {
            Outcome::Valid(valid) if valid.attempts() == 2 => Some(valid.attempt_usage()[1]),
            _ => None,
        })
        .collect();
    let n = corrected.len().max(1) as u64;
    let sum: Usage = corrected.iter().copied().sum();
    let correction = Usage::new(sum.input_tokens / n, sum.output_tokens / n)
        .with_cache(sum.cache_read_tokens / n, sum.cache_write_tokens / n);
    Figures {
        cache_share: report.stats.cache_read_share(),
        corrections: corrected.len(),
        correction,
        correction_cost: rate.cost(correction),
        run_cost: report.stats.cost().unwrap(),
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    println!("{DOCUMENTS} invoices, one in {WRONG_EVERY} corrected once; {MODEL} prices\n");
    println!(
        "| items | corrections | cache read share | corrections run | a correction: input / read / written / output | its cost | run cost |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|");
    let patch_tool = serde_json::to_string(&extract::run::patch_tool()).unwrap().len() / 4;
    let record_tool = serde_json::to_string(&<Invoice as extract::Extractable>::tool()).unwrap().len() / 4;
    println!(
        "the invoice's tool: {record_tool} tokens; the patch tool: {patch_tool} tokens (a quarter of their JSON's bytes)\n"
    );
    for items in [20, 150] {
        for (name, corrections) in [("full", Corrections::Full), ("patch", Corrections::Patch)] {
            let f = runtime.block_on(measure(items, corrections));
            let c = f.correction;
            println!(
                "| {items} | {name} | {:.1}% | {} | {} / {} / {} / {} | ${:.5} | ${:.4} |",
                100.0 * f.cache_share,
                f.corrections,
                c.input_tokens,
                c.cache_read_tokens,
                c.cache_write_tokens,
                c.output_tokens,
                f.correction_cost,
                f.run_cost
            );
        }
    }
}
