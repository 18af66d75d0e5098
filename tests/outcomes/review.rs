//! Human review: what an escalation holds and fails, field by field, and a
//! reviewer's fix held to the same three layers as a model's answer.

use extract::testing::Scripted;
use extract::{Escalation, Extractable, Extractor, Outcome, Retries, review};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Record one invoice.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
struct Invoice {
    invoice_number: String,
    #[extract(recoverable = false)]
    purchase_order: String,
    line_items: Vec<LineItem>,
    total: f64,
    note: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct LineItem {
    description: String,
    amount: f64,
}

const DOCUMENT: &str = "INVOICE INV-7  PO-1\nDesign 200.00\nBuild 300.00\nTotal 500.00";

fn escalate(replies: Vec<Value>) -> Escalation {
    let retries = Retries::new(replies.len().saturating_sub(1).clamp(1, 3) as u32).unwrap();
    match Extractor::new(Scripted::new(replies))
        .retries(retries)
        .extract_blocking::<Invoice>(DOCUMENT)
        .unwrap()
    {
        Outcome::Escalated(escalation) => escalation,
        Outcome::Valid(v) => panic!("valid: {:?}", v.value()),
    }
}

fn short_sum() -> Value {
    json!({"invoice_number": "INV-7", "purchase_order": "PO-1",
           "line_items": [{"description": "Design", "amount": 150.0}, {"description": "Build", "amount": 300.0}],
           "total": 500.0})
}

#[test]
fn a_sum_failure_holds_the_invoice_number_and_fails_the_items_and_the_total() {
    let escalation = escalate(vec![short_sum(), short_sum()]);
    let partial = &escalation.partial;
    assert_eq!(partial.held["invoice_number"], "INV-7");
    assert_eq!(partial.held["purchase_order"], "PO-1");
    let failed: Vec<&str> = partial.failed.keys().map(String::as_str).collect();
    assert_eq!(failed, ["line_items", "total", "note"], "{partial:?}");
    assert!(partial.failed["line_items"][0].as_str().unwrap().contains("sum(line_items.amount) = 450.00"));
    assert_eq!(partial.failed["total"], partial.failed["line_items"], "one check names both");
    assert_eq!(partial.failed["note"], json!([]), "absent from the output, with no violation of its own");

    let packet = serde_json::to_value(&escalation).unwrap();
    assert_eq!(packet["partial"]["held"]["invoice_number"], "INV-7");
    assert!(packet["partial"]["failed"]["total"].is_array());
}

#[test]
fn an_absent_tagged_field_fails_with_its_message_and_the_rest_is_held() {
    let mut output = short_sum();
    output["purchase_order"] = Value::Null;
    output["line_items"][0]["amount"] = json!(200.0);
    let escalation = escalate(vec![output]);
    let partial = &escalation.partial;
    assert!(partial.failed["purchase_order"][0].as_str().unwrap().contains("the model answered null"));
    assert_eq!(
        partial.held.keys().map(String::as_str).collect::<Vec<_>>(),
        ["invoice_number", "line_items", "total"]
    );
}

#[test]
fn a_structure_failure_holds_the_fields_that_passed_the_structure_layer() {
    let mut output = short_sum();
    output["total"] = json!("five hundred");
    let escalation = escalate(vec![output.clone(), output]);
    let partial = &escalation.partial;
    assert!(partial.failed["total"][0].as_str().unwrap().contains("expected a number"), "{partial:?}");
    // Held, though no semantic check ran on them (the sum is wrong too).
    assert!(partial.held.contains_key("line_items") && partial.held.contains_key("invoice_number"));
}

#[test]
fn a_fix_that_still_fails_is_refused_with_its_violations() {
    let escalation = escalate(vec![short_sum(), short_sum()]);
    let still = review::<Invoice>(&escalation, DOCUMENT, json!({"total": 460.0})).unwrap_err();
    assert_eq!(still[0].code, "check_failed");
    assert!(still.to_string().contains("total = 460.00"), "{still}");
}

#[test]
fn a_correct_fix_is_valid_and_reviewed() {
    let escalation = escalate(vec![short_sum(), short_sum()]);
    let fix = json!({"line_items": [{"description": "Design", "amount": 200.0}, {"description": "Build", "amount": 300.0}]});
    let fixed = review::<Invoice>(&escalation, DOCUMENT, fix).unwrap();
    assert!(fixed.reviewed());
    assert_eq!(fixed.value().line_items[0].amount, 200.0);
    assert_eq!(fixed.value().invoice_number, "INV-7", "the rest of the last output is kept");
    assert_eq!(fixed.failed_attempts().len(), 2, "the model's attempts are kept");
    let packet = serde_json::to_value(&fixed).unwrap();
    assert_eq!(packet["status"], "ok");
    assert_eq!(packet["reviewed"], true);
}

#[test]
fn a_patch_that_deletes_a_required_field_is_missing_field() {
    let escalation = escalate(vec![short_sum(), short_sum()]);
    let removed = review::<Invoice>(&escalation, DOCUMENT, json!({"invoice_number": null})).unwrap_err();
    assert_eq!(removed[0].code, "missing_field");
    assert_eq!(removed[0].path, "invoice_number");
}

#[test]
fn a_model_valid_packet_does_not_say_reviewed() {
    let mut output = short_sum();
    output["line_items"][0]["amount"] = json!(200.0);
    let outcome = Extractor::new(Scripted::new([output])).extract_blocking::<Invoice>(DOCUMENT).unwrap();
    let packet = serde_json::to_value(&outcome).unwrap();
    assert!(packet.get("reviewed").is_none(), "{packet}");
    assert!(!outcome.valid().unwrap().reviewed());
}
