//! Three invoices through `extract`: one valid at once, one whose line items
//! do not add up and is fixed on the retry, one whose purchase-order number is
//! absent from the source and goes to a human. Then a PDF invoice, with each
//! value shown beside its quote and the bytes of the text it was read from.
//!
//! ```text
//! cargo run --example invoice            # offline, with a scripted model
//! cargo run --example invoice -- --live  # against Claude (needs ANTHROPIC_API_KEY)
//! # any Chat Completions server: OpenAI, or a local Ollama / llama.cpp / vLLM
//! OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_MODEL=qwen3:8b \
//!     cargo run --example invoice --features openai -- --backend openai [--json-schema]
//! ```
//!
//! With `ANTHROPIC_API_KEY` set it runs live without `--live`, too; with
//! `--backend openai`, so does `OPENAI_API_KEY` or `OPENAI_BASE_URL`.
//! `--json-schema` sends the schema as a `response_format` instead of a tool.

#[path = "common/live.rs"]
mod live;

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use extract::model::{BlockKind, Model, ModelFuture, Prompt, Reply, ReplyContent};
use extract::testing::Scripted;
use extract::{Document, Extractable, Extractor, Outcome};
use extract::{Retries, Sourced, Stats};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Record one invoice exactly as the document states it.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
struct Invoice {
    /// Invoice number exactly as printed.
    invoice_number: String,
    /// Purchase-order number exactly as printed; null when the document has none.
    #[extract(recoverable = false)]
    purchase_order: String,
    /// The company that issued the invoice.
    vendor: String,
    /// The ordering department, when the invoice names one.
    department: Option<String>,
    /// Every billed line, delivery and fees included.
    line_items: Vec<LineItem>,
    /// The total the invoice states.
    #[serde(rename = "total")]
    stated_total: f64,
}

/// One billed line.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
struct LineItem {
    description: String,
    amount: f64,
}

/// Record the header of one invoice, each value with the exact text it was read from.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice_header")]
struct InvoiceHeader {
    /// Invoice number exactly as printed.
    invoice_number: Sourced<String>,
    /// The company that issued the invoice.
    vendor: Sourced<String>,
    /// The total the invoice states.
    total: Sourced<f64>,
}

/// A one-page PDF invoice, and the text of its page (as a PDF-to-text tool
/// gives it): what the quotes are checked against.
const PDF_INVOICE: &[u8] = include_bytes!("fixtures/invoice.pdf");
const PDF_TEXT_LAYER: &str = include_str!("fixtures/invoice.txt");

const INVOICES: [(&str, &str); 3] = [
    (
        "valid at the first attempt",
        "INVOICE INV-2024-0098\nVendor: Contoso Paper Ltd.\nPO: PO-87740\nDepartment: Marketing\n\n\
         A4 paper, 20 boxes           240.00\nToner cartridges (4)         160.00\n\n\
         TOTAL DUE                    400.00 EUR\nPayable within 30 days.",
    ),
    (
        "line items that do not add up, fixed on the retry",
        "INVOICE INV-2024-0117\nVendor: Northwind Office Supply\nPO: PO-88213\nDepartment: Facilities\n\n\
         Ergonomic chairs (3)         150.00\nStanding desks (2)           300.00\n\
         Delivery                      50.00\n\nTOTAL DUE                    500.00 EUR",
    ),
    (
        "a required purchase order absent from the source",
        "INVOICE INV-2024-0231\nVendor: Globex Cleaning\n\n\
         Office cleaning, March       820.00\n\nTOTAL DUE                    820.00 EUR\n\
         Thank you for your business.",
    ),
];

/// What the offline model answers, call after call: invoice 1; invoice 2
/// missing its delivery line, then corrected; invoice 3 with no PO to give.
fn scripted_replies() -> Vec<Value> {
    let item = |description: &str, amount: f64| json!({"description": description, "amount": amount});
    let northwind = |items: Vec<Value>| {
        json!({"invoice_number": "INV-2024-0117", "purchase_order": "PO-88213",
               "vendor": "Northwind Office Supply", "department": "Facilities",
               "line_items": items, "total": 500.0})
    };
    let chairs_and_desks = vec![item("Ergonomic chairs (3)", 150.0), item("Standing desks (2)", 300.0)];
    let mut all_three = chairs_and_desks.clone();
    all_three.push(item("Delivery", 50.0));
    vec![
        json!({"invoice_number": "INV-2024-0098", "purchase_order": "PO-87740",
               "vendor": "Contoso Paper Ltd.", "department": "Marketing",
               "line_items": [item("A4 paper, 20 boxes", 240.0), item("Toner cartridges (4)", 160.0)],
               "total": 400.0}),
        northwind(chairs_and_desks),
        northwind(all_three),
        json!({"invoice_number": "INV-2024-0231", "purchase_order": null, "vendor": "Globex Cleaning",
               "department": null, "line_items": [item("Office cleaning, March", 820.0)], "total": 820.0}),
        json!({"invoice_number": {"value": "INV-2024-0305", "quote": "INVOICE INV-2024-0305"},
               "vendor": {"value": "Fabrikam Print & Copy", "quote": "Vendor: Fabrikam Print & Copy"},
               "total": {"value": 612.5, "quote": "Total due 612.50 EUR"}}),
    ]
}

/// A model that keeps every prompt and reply passing through it, so each
/// attempt can be shown after the run, offline or live.
struct Transcript {
    model: Box<dyn Model>,
    log: Arc<Mutex<Vec<(Prompt, Reply)>>>,
}

impl Model for Transcript {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            let reply = self.model.call(prompt).await?;
            self.log.lock().unwrap().push((prompt.clone(), reply.clone()));
            Ok(reply)
        })
    }
}

fn heading(title: &str) {
    println!("\n{title}\n{}", "=".repeat(title.chars().count()));
}

fn indent(text: &str) -> String {
    text.lines().map(|line| format!("    {line}\n")).collect()
}

/// One line about a reply: for an invoice, what the model read.
fn summary(reply: &Reply) -> String {
    match &reply.content {
        ReplyContent::ToolCall { input, .. } => {
            let items = input["line_items"].as_array().map(Vec::as_slice).unwrap_or_default();
            let sum: f64 = items.iter().filter_map(|i| i["amount"].as_f64()).sum();
            let plural = if items.len() == 1 { "" } else { "s" };
            format!(
                "record_invoice: invoice {}, PO {}, {} line item{plural} summing to {sum:.2}, total {:.2}",
                input["invoice_number"],
                input["purchase_order"],
                items.len(),
                input["total"].as_f64().unwrap_or(f64::NAN)
            )
        }
        ReplyContent::Text(text) => format!("text instead of a tool call: {text}"),
        other => format!("{other:?}"),
    }
}

/// Prints every attempt of one extraction and its outcome packet.
fn report(attempts: &[(Prompt, Reply)], outcome: &Outcome<Invoice>) {
    let failed = match outcome {
        Outcome::Valid(v) => v.failed_attempts(),
        Outcome::Escalated(e) => &e.error_chain[..],
    };
    for (prompt, reply) in attempts {
        println!("\n--- attempt {} ---", prompt.attempt);
        if prompt.correction.is_some() {
            println!("feedback the model was given (after its previous output, verbatim):");
            for block in prompt.blocks() {
                if matches!(block.kind, BlockKind::Violations | BlockKind::Instruction) {
                    print!("  [{}]\n{}", block.kind.label(), indent(&block.text));
                }
            }
        }
        println!("reply: {}", summary(reply));
        match failed.iter().find(|f| f.attempt == prompt.attempt) {
            Some(f) => print!("violations:\n{}", indent(&f.violations.to_string())),
            None => println!("valid"),
        }
    }
    println!("\noutcome packet:");
    println!("{}", serde_json::to_string_pretty(outcome).expect("packets serialize"));
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let model: Box<dyn Model> = match live::live_model(&args, "invoice") {
        Ok(Some(model)) => model,
        Ok(None) => Box::new(Scripted::new(scripted_replies())),
        Err(error) => {
            eprintln!("error: cannot run live: {error}");
            eprintln!("(run without --live, --backend openai and the keys for the offline walk-through)");
            return ExitCode::FAILURE;
        }
    };
    let log = Arc::new(Mutex::new(Vec::new()));
    let extractor = Extractor::new(Transcript { model, log: log.clone() }).retries(Retries::default());

    heading("The tool the model fills in");
    println!("{}", serde_json::to_string_pretty(&Invoice::tool()).expect("tools serialize"));

    let mut stats = Stats::new();
    for (i, (title, document)) in INVOICES.iter().enumerate() {
        heading(&format!("Invoice {} of {}: {title}", i + 1, INVOICES.len()));
        print!("{}", indent(document));
        let outcome = match extractor.extract::<Invoice>(document).await {
            Ok(outcome) => outcome,
            Err(error) => {
                eprintln!("error: the model could not be reached: {error}");
                return ExitCode::FAILURE;
            }
        };
        let attempts = std::mem::take(&mut *log.lock().unwrap());
        report(&attempts, &outcome);
        stats.record(&outcome);
    }

    heading("Statistics over the three outcomes");
    println!("{stats}");

    heading("A PDF invoice, and where each value came from");
    let scan = Document::pdf(PDF_INVOICE)
        .with_id("INV-2024-0305")
        .with_title("Fabrikam invoice")
        .with_text_layer(PDF_TEXT_LAYER);
    println!("{scan:?}");
    let header = match extractor.extract::<InvoiceHeader>(scan).await {
        Ok(Outcome::Valid(header)) => header,
        Ok(Outcome::Escalated(escalation)) => {
            eprintln!("the PDF invoice escalated: {escalation}");
            return ExitCode::FAILURE;
        }
        Err(error) => {
            eprintln!("error: the model could not be reached: {error}");
            return ExitCode::FAILURE;
        }
    };
    let value = |path: &str| match path {
        "invoice_number" => header.value().invoice_number.value.clone(),
        "vendor" => header.value().vendor.value.clone(),
        _ => format!("{:.2}", header.value().total.value),
    };
    for source in header.sources() {
        let at = match &source.span {
            Some(span) => format!(
                "bytes {}..{} of the text layer: {:?}",
                span.start,
                span.end,
                &PDF_TEXT_LAYER[span.clone()]
            ),
            None => "not verified (no text layer)".to_string(),
        };
        println!(
            "{:<15} {:<24} quote {:?}, {at}",
            source.path.to_string(),
            value(&source.path.to_string()),
            source.quote
        );
    }
    ExitCode::SUCCESS
}
