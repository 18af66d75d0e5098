//! What a failed quote means (DESIGN.md, "Provenance"): "absent from the
//! source" only when the document holds neither the quote nor the value; a
//! value the document shows, under a quote too short or mistyped, is a
//! rendering error the retry fixes, whatever the field's tag. The value must
//! occur in its quote for every kind of value (numbers and dates as
//! written), and messages say what the model claimed, never what only the
//! model said of the document.

use extract::testing::Scripted;
use extract::{Extractable, Extractor, Outcome, Reason, Retries, Sourced};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const DOCUMENT: &str =
    "ACME Corp\nInvoice INV-1040\nIssued: 1 March 2026\nTotal due: 140.00 EUR\nPaid: 41.50";

/// The real model's case: a tagged number, and a total with its quote.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Invoice {
    #[extract(recoverable = false)]
    invoice_number: Sourced<String>,
    #[extract(recoverable = false)]
    total: Sourced<f64>,
}

fn invoice(number: Value, total: Value) -> Value {
    json!({"invoice_number": number, "total": total})
}

fn right() -> Value {
    invoice(
        json!({"value": "INV-1040", "quote": "Invoice INV-1040"}),
        json!({"value": 140.0, "quote": "Total due: 140.00 EUR"}),
    )
}

fn run(replies: Vec<Value>) -> (Outcome<Invoice>, Scripted) {
    let model = Scripted::new(replies);
    let outcome = Extractor::new(model.clone())
        .retries(Retries::new(2).unwrap())
        .extract_blocking::<Invoice>(DOCUMENT)
        .unwrap();
    (outcome, model)
}

#[test]
fn a_quote_too_short_for_a_value_the_document_shows_is_retried_not_escalated() {
    // SmolLM2's answer: the right value, a quote that holds only its digits.
    let short = invoice(
        json!({"value": "INV-1040", "quote": "1040"}),
        json!({"value": 140.0, "quote": "Total due: 140.00 EUR"}),
    );
    let (outcome, model) = run(vec![short, right()]);
    let valid = outcome.valid().expect("fixed on the retry");
    assert_eq!(valid.attempts(), 2);
    let violation = &valid.failed_attempts()[0].violations[0];
    assert_eq!(
        (violation.code.as_str(), violation.path.to_string().as_str()),
        ("quote_not_found", "invoice_number.quote")
    );
    assert!(violation.recoverable, "the tag does not make a rendering error final");
    assert!(
        violation
            .message
            .contains("the document does show the value \"INV-1040\": quote the passage that shows it"),
        "{}",
        violation.message
    );
    // The correction asks for the passage.
    let correction = model.prompts()[1].correction.clone().unwrap();
    assert!(correction.violations.contains("quote the passage that shows it"), "{}", correction.violations);
}

#[test]
fn a_mistyped_quote_of_a_value_the_document_shows_is_retried() {
    let mistyped = invoice(
        json!({"value": "INV-1040", "quote": "Invoice: INV 1040"}),
        json!({"value": 140.0, "quote": "Total due: 140.00 EUR"}),
    );
    let (outcome, _) = run(vec![mistyped, right()]);
    let valid = outcome.valid().expect("fixed on the retry");
    let violation = &valid.failed_attempts()[0].violations[0];
    assert!(
        violation.message.starts_with("quote \"Invoice: INV 1040\" does not occur in the document"),
        "{}",
        violation.message
    );
    assert!(violation.recoverable);
}

#[test]
fn neither_quote_nor_value_in_the_document_takes_the_fields_tag_and_says_so() {
    let invented = invoice(
        json!({"value": "INV-2077", "quote": "Invoice INV-2077"}),
        json!({"value": 140.0, "quote": "Total due: 140.00 EUR"}),
    );
    let (outcome, model) = run(vec![invented, right()]);
    let escalation = outcome.escalation().expect("escalated at once");
    assert_eq!((escalation.reason, model.calls()), (Reason::NotRecoverable, 1));
    let violation = &escalation.last_violations().unwrap()[0];
    assert!(!violation.recoverable);
    assert!(
        violation.message.contains("the value \"INV-2077\" occurs nowhere in the document"),
        "{}",
        violation.message
    );
    let hint = escalation.fix_hint.as_deref().unwrap();
    assert!(hint.contains("neither the model's quote nor its value occurs in the document"), "{hint}");
}

#[test]
fn a_number_must_occur_in_its_quote_as_written() {
    // The gap the real model's run found: a quote from the document around an invented number.
    let invented = invoice(
        json!({"value": "INV-1040", "quote": "Invoice INV-1040"}),
        json!({"value": 9999, "quote": "Paid: 41.50"}),
    );
    let (outcome, _) = run(vec![invented]);
    let escalation = outcome.escalation().expect("9999 is in neither the quote nor the document");
    let violation = &escalation.last_violations().unwrap()[0];
    assert_eq!(violation.path.to_string(), "total.quote");
    assert!(
        violation.message.starts_with("value 9999 does not occur in its quote \"Paid: 41.50\""),
        "{}",
        violation.message
    );
    assert!(!violation.recoverable);

    // 140.0 against a printed "140.00" holds.
    let (outcome, _) = run(vec![right()]);
    assert!(outcome.is_valid());

    // A number the document shows elsewhere: recoverable whatever the tag.
    let elsewhere = invoice(
        json!({"value": "INV-1040", "quote": "Invoice INV-1040"}),
        json!({"value": 140, "quote": "Paid: 41.50"}),
    );
    let (outcome, _) = run(vec![elsewhere, right()]);
    let valid = outcome.valid().expect("fixed on the retry");
    assert!(valid.failed_attempts()[0].violations[0].recoverable);
}

#[cfg(feature = "chrono")]
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Dated {
    issued: Sourced<chrono::NaiveDate>,
}

#[cfg(feature = "chrono")]
#[test]
fn a_date_must_occur_in_its_quote_as_written() {
    let check = |value: &str, quote: &str| {
        extract::validate::<Dated>(&json!({"issued": {"value": value, "quote": quote}}), DOCUMENT)
    };
    assert!(check("2026-03-01", "Issued: 1 March 2026").is_ok());
    let wrong = check("2026-03-02", "Issued: 1 March 2026").unwrap_err();
    assert!(
        wrong[0].message.starts_with("value 2026-03-02 does not occur in its quote"),
        "{}",
        wrong[0].message
    );
    assert!(wrong[0].recoverable, "untagged: a retry may fix it");
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Numbered {
    #[extract(recoverable = false)]
    invoice_number: String,
}

#[test]
fn a_null_answer_is_reported_as_the_models_claim() {
    let outcome = Extractor::new(Scripted::new([json!({"invoice_number": null})]))
        .extract_blocking::<Numbered>(DOCUMENT)
        .unwrap();
    let escalation = outcome.escalation().expect("escalated");
    let message = &escalation.last_violations().unwrap()[0].message;
    assert!(message.contains("the model answered null"), "{message}");
    let hint = escalation.fix_hint.as_deref().unwrap();
    assert!(hint.contains("the model gave no value for it"), "{hint}");
    for text in [message.as_str(), hint] {
        assert!(
            !text.contains("does not state") && !text.contains("does not hold"),
            "asserts of the document: {text}"
        );
    }
}
