//! Whole extractions through the derive and the retry runtime, with a
//! scripted model: the scenarios `examples/invoice.rs` walks, asserted.

use extract::testing::Scripted;
use extract::{Extractable, Extractor, Layer, Outcome, Reason, Retries, Stats};
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
    vendor: String,
    department: Option<String>,
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

const DOCUMENT_A: &str = "\
INVOICE INV-2024-0117
Vendor: Northwind Office Supply
PO: PO-88213
Department: Facilities

Ergonomic chairs (3)        150.00
Standing desks (2)          300.00
Delivery                     50.00

TOTAL DUE                   500.00 EUR";

const DOCUMENT_B: &str = "\
INVOICE INV-2024-0231
Vendor: Globex Cleaning
(no purchase order referenced)

Office cleaning, March      820.00

TOTAL DUE                   820.00 EUR";

fn items(amounts: &[(&str, f64)]) -> Value {
    amounts.iter().map(|(d, a)| json!({"description": d, "amount": a})).collect()
}

/// The first, wrong answer for document A: it misses the delivery line.
fn a_missing_delivery() -> Value {
    json!({
        "invoice_number": "INV-2024-0117",
        "purchase_order": "PO-88213",
        "vendor": "Northwind Office Supply",
        "department": "Facilities",
        "line_items": items(&[("Ergonomic chairs (3)", 150.0), ("Standing desks (2)", 300.0)]),
        "total": 500.0
    })
}

fn a_corrected() -> Value {
    let mut output = a_missing_delivery();
    output["line_items"] =
        items(&[("Ergonomic chairs (3)", 150.0), ("Standing desks (2)", 300.0), ("Delivery", 50.0)]);
    output
}

fn b_without_po() -> Value {
    json!({
        "invoice_number": "INV-2024-0231",
        "purchase_order": null,
        "vendor": "Globex Cleaning",
        "department": null,
        "line_items": items(&[("Office cleaning, March", 820.0)]),
        "total": 820.0
    })
}

const SUM_MESSAGE: &str = "check failed: sum(line_items.amount) == total (tolerance 0.01): \
                           sum(line_items.amount) = 450.00, total = 500.00";

fn retries(n: u32) -> Retries {
    Retries::new(n).unwrap()
}

#[tokio::test]
async fn document_a_is_corrected_with_exact_feedback_on_the_second_attempt() {
    let model = Scripted::new([a_missing_delivery(), a_corrected()]);
    let outcome =
        Extractor::new(model.clone()).retries(retries(2)).extract::<Invoice>(DOCUMENT_A).await.unwrap();

    let Outcome::Valid(valid) = outcome else { panic!("expected Valid, got {outcome:?}") };
    assert_eq!(valid.attempts(), 2);
    assert_eq!(valid.value().line_items.len(), 3);
    assert_eq!(valid.failed_attempts().len(), 1);
    assert_eq!(valid.failed_attempts()[0].violations[0].message, SUM_MESSAGE);

    let prompts = model.prompts();
    assert_eq!(prompts.len(), 2);
    assert!(prompts[0].correction.is_none());
    let second = &prompts[1];
    assert_eq!(second.attempt, 2);
    assert_eq!(second.document, DOCUMENT_A, "the document travels byte for byte");
    assert_eq!(second.system, prompts[0].system);
    let correction = second.correction.as_ref().expect("the second prompt is a correction");
    // A parsed tool input is rendered as compact JSON: the first output, every value as sent.
    let first_output = a_missing_delivery().to_string();
    assert_eq!(correction.previous_output, first_output, "the first output, verbatim");
    assert_eq!(correction.violations, format!("- line_items: {SUM_MESSAGE}"));
    assert!(
        correction.instruction.contains("fix only what VALIDATION ERRORS name"),
        "{}",
        correction.instruction
    );

    // The flattened text the model reads holds all three, in order.
    let text = second.to_string();
    let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle:?} not in:\n{text}"));
    assert!(at(DOCUMENT_A) < at(&first_output));
    assert!(at(&first_output) < at(SUM_MESSAGE));
    assert!(text.contains("sum(line_items.amount) = 450.00") && text.contains("total = 500.00"));
    assert!(!text.contains("stated_total"), "the model sees JSON names only");
}

#[tokio::test]
async fn document_b_escalates_at_once_when_an_unrecoverable_field_is_absent() {
    // A second reply is queued: the runtime must not ask for it.
    let model = Scripted::new([b_without_po(), b_without_po()]);
    let outcome =
        Extractor::new(model.clone()).retries(retries(3)).extract::<Invoice>(DOCUMENT_B).await.unwrap();

    assert_eq!(model.calls(), 1, "a datum absent from the source is never retried");
    assert_eq!(model.remaining(), 1);
    let Outcome::Escalated(escalation) = outcome else { panic!("expected an escalation") };
    assert_eq!(escalation.reason, Reason::NotRecoverable);
    assert_eq!(escalation.error_chain.len(), 1);
    assert_eq!(escalation.error_chain[0].attempt, 1);
    let violations = &escalation.error_chain[0].violations;
    assert_eq!(violations.len(), 1, "{violations}");
    let v = &violations[0];
    assert_eq!(
        (v.layer, v.code.as_str(), v.path.to_string(), v.recoverable),
        (Layer::Structure, "missing_field", "purchase_order".to_string(), false)
    );
    assert_eq!(escalation.last_output, Some(b_without_po()));
    let hint = escalation.fix_hint.as_deref().unwrap();
    assert!(hint.contains("`purchase_order`") && hint.contains("recoverable = false"), "{hint}");
}

#[tokio::test]
async fn the_same_violation_twice_is_systematic_and_the_hint_uses_json_names() {
    let model = Scripted::new([a_missing_delivery(), a_missing_delivery(), a_corrected(), a_corrected()]);
    let outcome =
        Extractor::new(model.clone()).retries(retries(3)).extract::<Invoice>(DOCUMENT_A).await.unwrap();

    assert_eq!(model.calls(), 2, "a repeated fingerprint stops the run");
    let Outcome::Escalated(escalation) = outcome else { panic!("expected an escalation") };
    assert_eq!(escalation.reason, Reason::Systematic);
    assert_eq!(escalation.attempts(), 2);
    let attempts: Vec<u32> = escalation.error_chain.iter().map(|a| a.attempt).collect();
    assert_eq!(attempts, [1, 2]);
    let hint = escalation.fix_hint.as_deref().unwrap();
    assert!(hint.contains("`line_items`"), "{hint}");
    assert!(hint.contains("sum(line_items.amount) == total"), "{hint}");
    assert!(!hint.contains("stated_total"), "the hint names the JSON field: {hint}");
}

/// A lookup that is broken for one vendor: it panics instead of answering.
fn vendor_known(invoice: &Guarded) -> Result<(), String> {
    if invoice.vendor == "Initech" {
        panic!("vendor table is not loaded");
    }
    Ok(())
}

/// Record one invoice, checked against the vendor table.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(with = vendor_known)]
struct Guarded {
    vendor: String,
}

#[tokio::test]
async fn a_panicking_check_escalates_and_the_caller_carries_on() {
    let model = Scripted::new([json!({"vendor": "Initech"})]);
    let outcome = Extractor::new(model.clone()).extract::<Guarded>("Vendor: Initech").await.unwrap();

    assert_eq!(model.calls(), 1);
    let escalation = outcome.escalation().expect("a panic is an escalation");
    assert_eq!(escalation.reason, Reason::NotRecoverable);
    let v = &escalation.last_violations().unwrap()[0];
    assert_eq!(v.code, "validator_panicked");
    assert!(!v.recoverable);
    assert!(v.message.contains("vendor table is not loaded"), "{}", v.message);

    // The process carries on: the next extraction runs normally.
    let outcome = Extractor::new(Scripted::new([json!({"vendor": "Acme"})]))
        .extract::<Guarded>("Vendor: Acme")
        .await
        .unwrap();
    assert_eq!(outcome.valid().map(|v| v.value().vendor.as_str()), Some("Acme"));
}

#[tokio::test]
async fn packets_serialize_exactly_as_the_design_shows() {
    let model = Scripted::new([a_missing_delivery(), a_corrected()]);
    let outcome = Extractor::new(model).extract::<Invoice>(DOCUMENT_A).await.unwrap();
    // The model that answered is named; the scripted model has no price: its cost is present, and null.
    let expected_ok = format!(
        r#"{{"status":"ok","output":{},"attempts":2,"model":"scripted","cost":null}}"#,
        a_corrected_in_field_order()
    );
    assert_eq!(serde_json::to_string(&outcome).unwrap(), expected_ok);

    let outcome =
        Extractor::new(Scripted::new([b_without_po()])).extract::<Invoice>(DOCUMENT_B).await.unwrap();
    let packet = serde_json::to_string(&outcome).unwrap();
    // The packet's own keys, in the order it writes them (an error-chain
    // entry names its model too, so the keys are read off the top level).
    let top: Value = serde_json::from_str(&packet).unwrap();
    let keys: Vec<&str> = top.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["status", "reason", "error_chain", "last_output", "fix_hint", "model", "cost", "partial"],
        "key order: {packet}"
    );
    assert!(
        packet
            .starts_with(r#"{"status":"escalated","reason":"not_recoverable","error_chain":[{"attempt":1,"#)
    );

    let value: Value = serde_json::from_str(&packet).unwrap();
    let object = value.as_object().unwrap();
    assert_eq!(object.len(), 8, "{packet}");
    assert_eq!(value["cost"], Value::Null);
    // The partial result: the purchase order failed, everything the output gave is held.
    assert_eq!(
        value["partial"]["failed"]["purchase_order"][0],
        value["error_chain"][0]["violations"][0]["message"]
    );
    assert_eq!(value["partial"]["held"]["vendor"], b_without_po()["vendor"]);
    assert_eq!(value["last_output"], b_without_po());
    assert!(value["fix_hint"].as_str().unwrap().contains("purchase_order"));
    let violation = &value["error_chain"][0]["violations"][0];
    assert_eq!(violation["code"], "missing_field");
    assert_eq!(violation["path"], "purchase_order");
    assert_eq!(violation["recoverable"], false);

    // Empty optional parts are present as null, not left out.
    let outcome = Extractor::new(Scripted::new([extract::model::Reply::refusal("")]))
        .extract::<Invoice>(DOCUMENT_B)
        .await
        .unwrap();
    let value = serde_json::to_value(&outcome).unwrap();
    assert_eq!(value["status"], "escalated");
    assert!(value.as_object().unwrap().contains_key("last_output"), "{value}");
}

/// The corrected output of document A as `Invoice` serializes it: fields in
/// declaration order, `stated_total` under its JSON name.
fn a_corrected_in_field_order() -> String {
    concat!(
        r#"{"invoice_number":"INV-2024-0117","purchase_order":"PO-88213","vendor":"Northwind Office Supply","#,
        r#""department":"Facilities","line_items":[{"description":"Ergonomic chairs (3)","amount":150.0},"#,
        r#"{"description":"Standing desks (2)","amount":300.0},{"description":"Delivery","amount":50.0}],"#,
        r#""total":500.0}"#
    )
    .to_string()
}

/// An expense report whose `department` is required: most documents do not
/// state one, which is a schema defect no retry can fix.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Expense {
    employee: String,
    department: String,
    amount: f64,
}

#[tokio::test]
async fn stats_over_a_corpus_name_the_dominant_fingerprint_and_its_fix() {
    let without_department = json!({"employee": "R. Osei", "department": null, "amount": 42.0});
    let with_department = json!({"employee": "L. Park", "department": "Sales", "amount": 18.5});
    let bad_amount = json!({"employee": "L. Park", "department": "Sales", "amount": "18,50"});
    // Six documents: four never state a department (systematic), one is fixed
    // after a type error, one is valid at once.
    let scripts: Vec<Vec<Value>> = vec![
        vec![without_department.clone(), without_department.clone()],
        vec![without_department.clone(), without_department.clone()],
        vec![without_department.clone(), without_department.clone()],
        vec![without_department.clone(), without_department.clone()],
        vec![bad_amount, with_department.clone()],
        vec![with_department],
    ];
    let mut stats = Stats::new();
    for script in scripts {
        let outcome = Extractor::new(Scripted::new(script))
            .retries(retries(2))
            .extract::<Expense>("receipt")
            .await
            .unwrap();
        stats.record(&outcome);
    }

    assert_eq!(stats.extractions(), 6);
    assert_eq!(stats.valid(), 2);
    assert_eq!(stats.first_attempt_valid(), 1);
    assert_eq!(stats.escalations(Reason::Systematic), 4);
    assert_eq!(stats.failed_attempts(), 9);
    let dominant = stats.dominant().expect("one fingerprint dominates");
    assert_eq!(dominant.fingerprint.code, "missing_field");
    assert_eq!(dominant.fingerprint.path, "department");
    assert_eq!(dominant.count, 8);
    assert!((dominant.share - 8.0 / 9.0).abs() < 1e-9);
    assert!(dominant.fix.contains("`department`") && dominant.fix.contains("optional"), "{}", dominant.fix);
    assert!(dominant.fix.contains("retry budget will not fix"), "{}", dominant.fix);

    let table = stats.to_string();
    assert!(table.contains("dominant failure: "), "{table}");
    let json = serde_json::to_value(&stats).unwrap();
    assert_eq!(json["dominant"]["fingerprint"]["path"], "department");
    assert_eq!(json["escalations"]["systematic"], 4);
}

#[tokio::test]
async fn two_failures_tied_for_the_most_are_not_called_dominant() {
    let mut stats = Stats::new();
    let without_department = json!({"employee": "R. Osei", "department": null, "amount": 42.0});
    let bad_amount = json!({"employee": "L. Park", "department": "Sales", "amount": "18,50"});
    for reply in [without_department, bad_amount] {
        let outcome = Extractor::new(Scripted::new([reply.clone(), reply]))
            .retries(retries(1))
            .extract::<Expense>("receipt")
            .await
            .unwrap();
        stats.record(&outcome);
    }
    assert_eq!(stats.failed_attempts(), 4);
    assert_eq!(stats.violations().len(), 2);
    assert!(stats.violations().iter().all(|(_, n)| *n == 2));
    assert_eq!(stats.dominant(), None, "a 50/50 tie has no dominant fingerprint");
    assert!(!stats.to_string().contains("dominant failure"), "{stats}");
}
