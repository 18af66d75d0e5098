//! One invoice streamed: each value printed the moment it is complete
//! (finished, and passing every check that reads it), the first attempt
//! stopped as soon as a finished amount fails its check, then the outcome.
//!
//! ```text
//! cargo run --example stream            # offline: a scripted model, streaming in pieces of 7 bytes
//! cargo run --example stream -- --live  # against Claude (needs ANTHROPIC_API_KEY)
//! ```

#[path = "common/live.rs"]
mod live;

use std::collections::BTreeSet;
use std::process::ExitCode;

use extract::model::Model;
use extract::stream::Snapshot;
use extract::testing::Scripted;
use extract::{Event, Extractable, Extractor, Outcome};
use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Record one invoice exactly as the document states it.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
struct Invoice {
    /// Invoice number exactly as printed.
    invoice_number: String,
    /// The company that issued the invoice.
    vendor: String,
    /// The date the invoice was issued, as YYYY-MM-DD.
    issue_date: String,
    /// Every billed line, wherever on the page it is printed.
    line_items: Vec<LineItem>,
    /// The total the invoice states.
    total: f64,
}

/// One billed line.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
struct LineItem {
    description: String,
    amount: f64,
}

const DOCUMENT: &str = include_str!("corpus/inv-002.txt");

/// What the scripted model answers: first with a sign misread on the
/// second line (a check no later output can change), then right.
fn scripted() -> Scripted {
    let right = json!({
        "invoice_number": "INV-1011",
        "vendor": "Oakridge Facility Services Inc.",
        "issue_date": "2026-01-17",
        "line_items": [
            {"description": "Pallet storage, 2 weeks", "amount": 2173.05},
            {"description": "Ergonomic chairs (3)", "amount": 2087.08},
            {"description": "Delivery and packaging", "amount": 93.49}
        ],
        "total": 4353.62
    });
    let mut misread = right.clone();
    misread["line_items"][1]["amount"] = json!(-2087.08);
    Scripted::new([misread, right]).chunked(7)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let model: Box<dyn Model> = match live::live_model(&args, "stream") {
        Ok(Some(model)) => model,
        Ok(None) => Box::new(scripted()),
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::FAILURE;
        }
    };
    let extractor = Extractor::new(model);
    let mut events = extractor.stream::<Invoice>(DOCUMENT);
    let mut view = LiveView::default();
    println!("attempt 1");
    while let Some(event) = events.next().await {
        match event {
            Ok(Event::Partial(snapshot)) => view.show(&snapshot),
            Ok(Event::Retry { attempt, violations }) => {
                println!("  stopped, {} bytes into the output:\n  {violations}", view.bytes);
                println!("attempt {attempt}");
                view = LiveView::default();
            }
            Ok(Event::Restart) => {
                println!("  (the connection was lost and the request sent again)");
                view = LiveView::default();
            }
            Ok(Event::Done(outcome)) => return done(outcome),
            Ok(_) => {}
            Err(error) => {
                eprintln!("error: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::FAILURE
}

/// What a screen shows of one attempt: each value once it is complete.
#[derive(Default)]
struct LiveView {
    printed: BTreeSet<String>,
    bytes: usize,
}

impl LiveView {
    fn show(&mut self, snapshot: &Snapshot) {
        self.bytes = snapshot.json().to_string().len();
        for path in snapshot.complete() {
            let Some(value) = value_at(snapshot.json(), &path.to_string()) else { continue };
            // Scalars only: a complete item or list is shown by its fields.
            if value.is_object() || value.is_array() || !self.printed.insert(path.to_string()) {
                continue;
            }
            println!("  {:<26} {value}", path.to_string());
        }
    }
}

/// The value at a displayed path (`line_items[1].amount`).
fn value_at<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    let pointer: String = path
        .replace('[', ".")
        .replace(']', "")
        .split('.')
        .filter(|step| !step.is_empty())
        .map(|step| format!("/{step}"))
        .collect();
    value.pointer(&pointer)
}

fn done(outcome: Outcome<Invoice>) -> ExitCode {
    match outcome {
        Outcome::Valid(invoice) => {
            let sum: f64 = invoice.value().line_items.iter().map(|line| line.amount).sum();
            println!(
                "valid after {} attempts: {} lines summing to {sum:.2} = total {:.2}",
                invoice.attempts(),
                invoice.value().line_items.len(),
                invoice.value().total,
            );
            for failed in invoice.failed_attempts() {
                println!(
                    "attempt {} was stopped early: {} output tokens (estimated) paid for it",
                    failed.attempt, failed.usage.output_tokens
                );
            }
            ExitCode::SUCCESS
        }
        Outcome::Escalated(escalation) => {
            println!("escalated to a person: {:?}\n{escalation:#?}", escalation.reason);
            ExitCode::FAILURE
        }
    }
}
