//! Long documents gathered window by window (issue 36), measured on the
//! long corpus of `examples/long/` (statements and invoices of 5 to 40
//! pages, 20 to 800 items) against its stand-in model
//! (`examples/common/long_stand_in.rs`) with a real model's mistakes: at
//! most 60 items an answer, an item skipped in one window answer in five,
//! the next page's first items added in one in three. The stand-in bills
//! the prompt cache as the API does: a hit only when tools, tool choice,
//! system and document are unchanged.
//!
//! For each setting (no windows; windows of 1, 2, 4 and 8 pages), over
//! every document and several seeds: item recall (items of the final
//! output, the valid one or the escalation's last, equal to the truth's),
//! duplicate items, documents valid, wrong outputs accepted, calls and
//! output tokens per document, and the share of the prompt's prefix
//! (tools, system, document) read from the cache on every call after a
//! document's first.
//!
//! `cargo bench --bench windows`

#[path = "../examples/common/dice.rs"]
mod dice;
#[path = "../examples/common/long_documents.rs"]
#[allow(dead_code)]
mod long_documents;
#[path = "../examples/common/long_stand_in.rs"]
#[allow(dead_code)]
mod long_stand_in;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use extract::model::{Model, ModelFuture, Prompt};
use extract::{Extractable, Extractor, Outcome, Usage, Windows};
use serde::Serialize;
use serde_json::Value;

use long_documents::{LongDocument, LongInvoice, LongKind, Statement, long_corpus};
use long_stand_in::{Faults, LongStandIn};

const SEEDS: u64 = 5;

/// The stand-in, with each call's usage kept.
#[derive(Clone)]
struct Metered {
    inner: LongStandIn,
    usage: Arc<Mutex<Vec<Usage>>>,
}

impl Model for Metered {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            let reply = self.inner.call(prompt).await?;
            self.usage.lock().unwrap().push(reply.usage);
            Ok(reply)
        })
    }

    fn name(&self) -> &str {
        "long-stand-in"
    }
}

/// What one setting measured, summed over documents and seeds.
#[derive(Default)]
struct Tally {
    documents: u64,
    truth_items: u64,
    recalled: u64,
    duplicates: u64,
    valid: u64,
    wrong_accepted: u64,
    calls: u64,
    output_tokens: u64,
    cache_read: u64,
    prefix_after_first: u64,
}

/// The final output of `outcome` as JSON, and whether it is valid.
fn output<T: Serialize>(outcome: &Outcome<T>) -> (Value, bool) {
    match outcome {
        Outcome::Valid(valid) => (serde_json::to_value(valid.value()).unwrap(), true),
        Outcome::Escalated(escalation) => (escalation.last_output.clone().unwrap_or_default(), false),
    }
}

async fn extract_one<T: Extractable + Serialize + Send + 'static>(
    model: Metered,
    document: &LongDocument,
    windows: Option<Windows>,
) -> (Value, bool) {
    let mut extractor = Extractor::new(model);
    if let Some(windows) = windows {
        extractor = extractor.windows(windows);
    }
    output(&extractor.extract::<T>(document.text.as_str()).await.expect("no transport in a stand-in"))
}

fn measure(document: &LongDocument, windows: Option<Windows>, seed: u64, tally: &mut Tally) {
    let model = Metered { inner: LongStandIn::of(Faults::realistic(seed), document), usage: Arc::default() };
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let (output, valid) = runtime.block_on(async {
        match document.kind {
            LongKind::Statement => extract_one::<Statement>(model.clone(), document, windows).await,
            LongKind::Invoice => extract_one::<LongInvoice>(model.clone(), document, windows).await,
        }
    });
    let list = document.kind.list();
    let truth = document.items();
    let answered: &[Value] = output[list].as_array().map(Vec::as_slice).unwrap_or_default();
    // Items as the truth has them, counted: recall and duplicates by multiset.
    let key = |item: &Value| item.to_string();
    let mut wanted: HashMap<String, i64> = HashMap::new();
    for item in truth {
        *wanted.entry(key(item)).or_default() += 1;
    }
    let mut recalled = 0;
    let mut duplicates = 0;
    let quotes: HashMap<&str, usize> = truth
        .iter()
        .map(|item| (item[document.kind.anchor()]["quote"].as_str().unwrap_or_default(), 0))
        .collect();
    for item in answered {
        match wanted.get_mut(&key(item)) {
            Some(left) if *left > 0 => {
                *left -= 1;
                recalled += 1;
            }
            // An item of the truth once more than the truth has it.
            _ if quotes.contains_key(item[document.kind.anchor()]["quote"].as_str().unwrap_or_default()) => {
                duplicates += 1;
            }
            _ => {}
        }
    }
    let usage = model.usage.lock().unwrap().clone();
    tally.documents += 1;
    tally.truth_items += truth.len() as u64;
    tally.recalled += recalled;
    tally.duplicates += duplicates;
    tally.valid += u64::from(valid);
    tally.wrong_accepted += u64::from(valid && output[list].as_array().map(Vec::as_slice) != Some(truth));
    tally.calls += usage.len() as u64;
    tally.output_tokens += usage.iter().map(|u| u.output_tokens).sum::<u64>();
    for later in usage.iter().skip(1) {
        tally.cache_read += later.cache_read_tokens;
        tally.prefix_after_first += later.cache_read_tokens + later.cache_write_tokens;
    }
}

fn main() {
    let corpus = long_corpus();
    let settings: [(&str, Option<Windows>); 5] = [
        ("no windows", None),
        ("pages(1)", Some(Windows::pages(1))),
        ("pages(2)", Some(Windows::pages(2))),
        ("pages(4)", Some(Windows::pages(4))),
        ("pages(8)", Some(Windows::pages(8))),
    ];
    let items: usize = corpus.iter().map(|d| d.items().len()).sum();
    println!(
        "{} documents ({} items), {SEEDS} seeds each, against the stand-in with Faults::realistic\n",
        corpus.len(),
        items
    );
    println!(
        "| setting | item recall | duplicates | valid | wrong accepted | calls / doc | output tokens / doc | cache share after the first call |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (name, windows) in settings {
        let mut tally = Tally::default();
        for document in &corpus {
            for seed in 0..SEEDS {
                measure(document, windows, seed, &mut tally);
            }
        }
        let per_doc = |n: u64| n as f64 / tally.documents as f64;
        println!(
            "| {name} | {:.4} | {} | {}/{} | {} | {:.1} | {:.0} | {:.1}% |",
            tally.recalled as f64 / tally.truth_items as f64,
            tally.duplicates,
            tally.valid,
            tally.documents,
            tally.wrong_accepted,
            per_doc(tally.calls),
            per_doc(tally.output_tokens),
            100.0 * tally.cache_read as f64 / tally.prefix_after_first.max(1) as f64,
        );
    }
}
