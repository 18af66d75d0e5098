//! Scores two configurations on the labelled corpus of `examples/corpus/`
//! (64 invoices, every fourth a PDF; `examples/make_corpus.rs` writes it):
//! A with the built-in instructions, B with two more sentences about dates.
//! Prints each scorecard, the side-by-side table, and writes the HTML report.
//!
//! ```text
//! cargo run --example eval                       # offline: a scripted model that reads like a careless one
//! cargo run --example eval -- --live             # against Claude (needs ANTHROPIC_API_KEY)
//! OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_MODEL=smollm2 \
//!     cargo run --example eval --features openai -- --backend openai [--json-schema] [--limit 12]
//! ```
//!
//! The offline model reads each document as a quick, literal reader would
//! (it parses the corpus's layout), and makes the mistakes such readers
//! make: it overlooks a line item printed apart from the table (until a
//! correction names the sum), copies dates as printed unless told to write
//! them as YYYY-MM-DD, takes a reference number for a missing purchase
//! order, and works the due date out from the payment terms instead of
//! reading the printed one unless told not to. The checks catch the first;
//! the others are accepted, and only the evaluation sees them.

#[path = "common/calendar.rs"]
mod calendar;
#[path = "common/live.rs"]
mod live;

use std::process::ExitCode;

use extract::eval::{self, Comparison, Evaluation, Match, Prices, Rule, Scorecard};
use extract::model::{Model, ModelFuture, Prompt, Reply};
use extract::{Extractable, Extractor, Retries, Stats, Usage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Record one invoice exactly as the document states it.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
struct Invoice {
    /// Invoice number exactly as printed.
    #[extract(recoverable = false)]
    invoice_number: String,
    /// Purchase-order number exactly as printed; null when the invoice has none.
    purchase_order: Option<String>,
    /// The company that issued the invoice.
    vendor: String,
    /// The date the invoice was issued.
    issue_date: String,
    /// The date payment is due, when the invoice states one.
    due_date: Option<String>,
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

/// What configuration B adds to the instructions.
const DATE_INSTRUCTIONS: &str = "Write every date as YYYY-MM-DD, whatever format the invoice prints. \
     The due date is the date printed after \"Due:\", never one computed from payment terms.";

/// Claude Haiku's list prices per million tokens, in dollars (for the cost column).
const PRICES: Prices = Prices { input: 1.0, output: 5.0, cache_read: 0.1, cache_write: 1.25 };

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/corpus");
    let mut cases = match eval::load::<Invoice>(corpus) {
        Ok(cases) => cases,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(limit) = args.iter().position(|a| a == "--limit").and_then(|i| args.get(i + 1)) {
        match limit.parse::<usize>() {
            Ok(limit) => cases.truncate(limit),
            Err(_) => {
                eprintln!("error: --limit takes a number of cases, not {limit:?}");
                return ExitCode::FAILURE;
            }
        }
    }
    let live = match live::live_model(&args, "eval") {
        Ok(model) => model,
        Err(error) => {
            eprintln!("error: cannot run live: {error}");
            return ExitCode::FAILURE;
        }
    };
    let model = || -> Box<dyn Model> {
        match &live {
            Some(_) => Box::new(Shared(&live)),
            None => Box::new(CarelessReader),
        }
    };
    let configure = |extractor: Extractor<Box<dyn Model>>, label: &str| {
        Evaluation::new(extractor.retries(Retries::new(2).expect("2 retries")))
            .label(label)
            .rule("issue_date", Rule::Date)
            .rule("due_date", Rule::Date)
            .rule("vendor", Rule::Text)
            .items("line_items", Match::Position)
            .rule("line_items[].description", Rule::Text)
            .rule("line_items[].amount", Rule::Number { tolerance: 0.005 })
            .rule("total", Rule::Number { tolerance: 0.005 })
            .prices(PRICES)
    };
    println!("{} labelled invoices from {corpus}\n", cases.len());
    let a =
        configure(Extractor::new(model()), "A: built-in instructions").run::<Invoice>(cases.clone()).await;
    let b = configure(Extractor::new(model()).instructions(DATE_INSTRUCTIONS), "B: + date instructions")
        .run::<Invoice>(cases)
        .await;
    let (a, b) = match (a, b) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(error), _) | (_, Err(error)) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("{a}");
    print_reasons(&a);
    println!("{b}");
    print_reasons(&b);
    let comparison = Comparison::new(&a, &b).expect("both ran on the same cases");
    println!("{comparison}");
    print_where_to_look(&a);

    let stats = Stats::new();
    let page = extract::report::Report::new(&stats)
        .title("Evaluation on the labelled corpus")
        .evaluation(&a)
        .evaluation(&b)
        .comparison(&comparison)
        .html();
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/eval-report.html");
    match std::fs::write(&out, page) {
        Ok(()) => println!("\nthe HTML report: {}", out.display()),
        Err(error) => eprintln!("\n(the HTML report was not written to {}: {error})", out.display()),
    }
    ExitCode::SUCCESS
}

/// How many documents escalated, by reason.
fn print_reasons(card: &Scorecard) {
    let mut reasons = std::collections::BTreeMap::new();
    for reason in card.cases.iter().filter_map(|c| c.reason) {
        *reasons.entry(reason.to_string()).or_insert(0) += 1;
    }
    if !reasons.is_empty() {
        let list: Vec<String> = reasons.iter().map(|(reason, n)| format!("{reason} {n}")).collect();
        println!("escalated by reason: {}", list.join(", "));
        let mut causes = std::collections::BTreeMap::new();
        for fingerprint in card.cases.iter().flat_map(|c| &c.fingerprints) {
            *causes.entry(fingerprint.as_str()).or_insert(0) += 1;
        }
        let mut causes: Vec<(&str, usize)> = causes.into_iter().collect();
        causes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        for (fingerprint, n) in causes.iter().take(6) {
            println!("  {n:>3} x {fingerprint}");
        }
    }
    println!();
}

fn print_where_to_look(card: &Scorecard) {
    println!("\nAccepted but wrong under A, most first:");
    for (field, count) in card.wrong_fields() {
        let ids: Vec<&str> = card
            .cases
            .iter()
            .filter(|c| c.fields.get(field).is_some_and(|v| *v == eval::Verdict::WrongAccepted))
            .map(|c| c.id.as_str())
            .take(4)
            .collect();
        println!("  {field:<26} {count:>3}   e.g. {}", ids.join(", "));
    }
}

/// The one live model, lent to both configurations.
struct Shared<'a>(&'a Option<Box<dyn Model>>);

impl Model for Shared<'_> {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        self.0.as_ref().expect("a live model").call(prompt)
    }
}

/// The offline model: reads the corpus's layout as a literal, hurried
/// reader would (see the module documentation for its mistakes).
struct CarelessReader;

impl Model for CarelessReader {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        let text = prompt.document.searchable_text().unwrap_or_default().to_string();
        // A correction that names the sum makes it read the whole page.
        let careful =
            prompt.correction.as_ref().is_some_and(|c| c.violations.contains("sum(line_items.amount)"));
        let told = prompt.system.contains("YYYY-MM-DD");
        // Tokens as a tokenizer would roughly count them (4 bytes each), so
        // that the cost column means something offline.
        let input_tokens = (prompt.to_string().len() / 4) as u64;
        Box::pin(async move {
            let input = read(&text, careful, told);
            let output_tokens = (input.to_string().len() / 4) as u64;
            Ok(Reply::tool_call(input).with_usage(Usage::new(input_tokens, output_tokens)))
        })
    }
}

fn read(text: &str, careful: bool, told_about_dates: bool) -> Value {
    let field = |label: &str| {
        text.lines().find_map(|line| line.strip_prefix(label)).map(|value| value.trim().to_string())
    };
    let date = |printed: Option<String>| {
        printed.map(|printed| if told_about_dates { iso_date(&printed).unwrap_or(printed) } else { printed })
    };
    let issue_date = date(field("Issued:"));
    let mut due_date = date(field("Due:"));
    // It trusts payment terms over the printed date, unless told not to.
    if let (Some(days), false) = (
        field("Terms: payment within ").and_then(|t| t.split(' ').next()?.parse::<u32>().ok()),
        told_about_dates,
    ) && let Some(issued) = issue_date.as_deref().and_then(iso_date)
    {
        due_date = Some(add_days(&issued, days));
    }
    let mut line_items = Vec::new();
    let mut in_table = false;
    let mut apart = false;
    for line in text.lines() {
        if line.starts_with("Description") {
            in_table = true;
            continue;
        }
        if line.starts_with("Additional charges") {
            apart = true;
            continue;
        }
        if line.trim().is_empty() {
            in_table = false;
            continue;
        }
        if (in_table || (apart && careful))
            && let Some((description, amount)) = line.rsplit_once("  ")
            && let Ok(amount) = amount.trim().replace(',', "").parse::<f64>()
        {
            line_items.push(json!({"description": description.trim(), "amount": amount}));
        }
    }
    let total = field("TOTAL DUE")
        .and_then(|t| t.split_whitespace().next().map(|n| n.replace(',', "")))
        .and_then(|n| n.parse::<f64>().ok());
    json!({
        "invoice_number": field("Invoice number:"),
        // A reference number looks enough like a purchase order to it.
        "purchase_order": field("Purchase order:").or_else(|| field("Reference:")),
        "vendor": text.lines().next().unwrap_or_default().trim(),
        "issue_date": issue_date,
        "due_date": due_date,
        "line_items": line_items,
        "total": total,
    })
}

/// A date the corpus prints, as YYYY-MM-DD: "2026-03-01", "1 March 2026",
/// "03/01/2026 (MM/DD/YYYY)", "01.03.2026".
fn iso_date(printed: &str) -> Option<String> {
    let printed = printed.trim();
    if printed.len() == 10 && printed.as_bytes()[4] == b'-' {
        return Some(printed.to_string());
    }
    let (year, month, day): (u32, u32, u32) = if let Some(us) = printed.strip_suffix(" (MM/DD/YYYY)") {
        let mut parts = us.split('/');
        let (m, d, y) = (parts.next()?, parts.next()?, parts.next()?);
        (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?)
    } else if printed.contains('.') {
        let mut parts = printed.split('.');
        let (d, m, y) = (parts.next()?, parts.next()?, parts.next()?);
        (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?)
    } else {
        let mut parts = printed.split_whitespace();
        let (d, m, y) = (parts.next()?, parts.next()?, parts.next()?);
        let month = calendar::MONTHS.iter().position(|name| *name == m)? as u32 + 1;
        (y.parse().ok()?, month, d.parse().ok()?)
    };
    Some(format!("{year:04}-{month:02}-{day:02}"))
}

/// `iso` plus `days`, inside the corpus's 2026.
fn add_days(iso: &str, days: u32) -> String {
    let (month, day) = (iso[5..7].parse().unwrap_or(1), iso[8..10].parse().unwrap_or(1));
    let (month, day) = calendar::add_days((month, day), days);
    format!("{}-{month:02}-{day:02}", &iso[..4])
}
