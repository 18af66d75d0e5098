//! A run with escalations for the review desk, made offline: five invoices
//! (four text, one PDF without a text layer) through `Bulk` with a journal
//! and `testing::Scripted`, so the journal holds one valid outcome and four
//! escalations of different kinds. The desk's example and its tests use it.
#![allow(dead_code)]

use std::path::Path;

use extract::testing::Scripted;
use extract::{Bulk, Document, Extractable, Extractor, Retries, Sourced};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Record one invoice exactly as printed.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == total.value, tolerance = 0.01)]
#[check(due_date >= issue_date)]
pub struct Invoice {
    /// The invoice number, as printed.
    pub invoice_number: Sourced<String>,
    /// Who sent the invoice.
    pub seller: Sourced<String>,
    pub issue_date: chrono::NaiveDate,
    pub due_date: Option<chrono::NaiveDate>,
    pub currency: Currency,
    /// The buyer's purchase order number, where the invoice gives one.
    pub purchase_order: Option<String>,
    pub line_items: Vec<LineItem>,
    pub total: Sourced<f64>,
}

/// ISO 4217 codes, as invoices print them.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[allow(clippy::upper_case_acronyms)]
pub enum Currency {
    EUR,
    USD,
    GBP,
}

extract::leaf!(Currency);

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
pub struct LineItem {
    pub description: String,
    pub amount: f64,
}

/// The text of invoice `n` (1-based) of the run.
fn text(number: &str, seller: &str, items: &[(&str, &str)], total: &str) -> String {
    let mut text =
        format!("INVOICE {number}\nSeller: {seller}\nIssued 2026-03-02, due 2026-04-01\nPO 4471\n\n");
    for (description, amount) in items {
        text.push_str(&format!("{description:<30}{amount:>10}\n"));
    }
    text.push_str(&format!("\nTotal due{total:>31} EUR\n"));
    text
}

/// A whole answer for an invoice.
fn answer(number: &str, seller: &str, items: &[(&str, f64)], total: (f64, &str)) -> Value {
    json!({
        "invoice_number": {"value": number, "quote": format!("INVOICE {number}")},
        "seller": {"value": seller, "quote": format!("Seller: {seller}")},
        "issue_date": "2026-03-02",
        "due_date": "2026-04-01",
        "currency": "EUR",
        "purchase_order": "4471",
        "line_items": items.iter().map(|(d, a)| json!({"description": d, "amount": a})).collect::<Vec<_>>(),
        "total": {"value": total.0, "quote": total.1},
    })
}

/// The run's documents, in id order: `inv-001` .. `inv-005`.
pub fn documents(pdf: &[u8]) -> Vec<Document> {
    vec![
        Document::text(text(
            "A-1001",
            "Fabrikam GmbH",
            &[("Paper, A4", "40.00"), ("Toner", "100.00")],
            "140.00",
        ))
        .with_id("inv-001")
        .with_title("Fabrikam, March"),
        Document::text(text("A-1002", "Contoso Ltd", &[("Chairs", "300.00")], "300.00")).with_id("inv-002"),
        Document::text(text("A-1003", "Northwind Traders", &[("Coffee", "25.50")], "25.50"))
            .with_id("inv-003"),
        Document::pdf(pdf.to_vec()).with_id("inv-004").with_title("Scanned, no text layer"),
        Document::text(text("A-1005", "Tailspin Toys", &[("Kites", "60.00")], "60.00")).with_id("inv-005"),
    ]
}

/// The model's replies, in the order a run with one worker asks for them:
/// each escalated invoice gets the same wrong answer twice (systematic).
fn replies() -> Vec<Value> {
    // inv-001: the total misread under the right quote (the items sum to 140.00).
    let wrong_total = answer(
        "A-1001",
        "Fabrikam GmbH",
        &[("Paper, A4", 40.0), ("Toner", 100.0)],
        (104.0, "Total due 140.00 EUR"),
    );
    // inv-002: right.
    let right = answer("A-1002", "Contoso Ltd", &[("Chairs", 300.0)], (300.0, "300.00"));
    // inv-003: the seller's quote mistyped, the purchase order made up.
    let mut mistyped = answer("A-1003", "Northwind Traders", &[("Coffee", 25.5)], (25.5, "25.50"));
    mistyped["seller"]["quote"] = json!("Seller: Northwind Trading");
    // inv-004 (a PDF without a text layer): due before issued; its quotes cannot be checked.
    let mut early = answer("A-1004", "Litware Inc", &[("Licences", 612.5)], (612.5, "612.50"));
    early["due_date"] = json!("2026-02-01");
    // inv-005: no issue date, and a currency that is no choice.
    let mut undated = answer("A-1005", "Tailspin Toys", &[("Kites", 60.0)], (60.0, "60.00"));
    undated.as_object_mut().unwrap().remove("issue_date");
    undated["currency"] = json!("euro");
    vec![
        wrong_total.clone(),
        wrong_total,
        right,
        mistyped.clone(),
        mistyped,
        early.clone(),
        early,
        undated.clone(),
        undated,
    ]
}

/// Runs the five invoices into a new journal at `journal` (one worker, so
/// the scripted replies meet their documents in order) and returns the
/// documents. Four escalate.
pub async fn run(journal: &Path, pdf: &[u8]) -> Vec<Document> {
    let documents = documents(pdf);
    let extractor = Extractor::new(Scripted::new(replies())).retries(Retries::new(1).unwrap());
    let report = Bulk::new(extractor)
        .concurrency(1)
        .journal(journal)
        .unwrap()
        .run::<Invoice>(documents.clone())
        .await
        .unwrap();
    assert_eq!(report.stats.escalated(), 4, "{}", report.stats);
    documents
}

/// The PDF the run's fourth invoice is (a real one, without a text layer).
pub fn pdf_bytes() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fixtures/invoice.pdf")).unwrap()
}
