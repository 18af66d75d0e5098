//! The seeds' check-language cases, end to end through `extract::validate`.

use extract::{Extractable, Layer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
struct Invoice {
    line_items: Vec<LineItem>,
    #[serde(rename = "total")]
    stated_total: f64,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
struct LineItem {
    description: String,
    amount: f64,
}

#[test]
fn items_that_do_not_add_up_give_one_recoverable_violation_naming_both_fields() {
    let output = json!({
        "line_items": [{"description": "a", "amount": 150.0}, {"description": "b", "amount": 300.0}],
        "total": 500.0
    });
    let violations = extract::validate::<Invoice>(&output, "").unwrap_err();
    assert_eq!(violations.len(), 1, "{violations}");
    let v = &violations[0];
    assert_eq!(v.layer, Layer::Semantic);
    assert_eq!(v.code, "check_failed");
    assert!(v.recoverable);
    let fields: Vec<String> = v.fields.iter().map(|f| f.to_string()).collect();
    assert_eq!(fields, ["line_items", "total"]);
    assert_eq!(
        v.message,
        "check failed: sum(line_items.amount) == total (tolerance 0.01): sum(line_items.amount) = 450.00, total = 500.00"
    );
}

#[test]
fn items_that_add_up_within_tolerance_are_valid() {
    let output = json!({
        "line_items": [{"description": "a", "amount": 150.004}, {"description": "b", "amount": 350.0}],
        "total": 500.0
    });
    let invoice = extract::validate::<Invoice>(&output, "").unwrap();
    assert_eq!(invoice.line_items.len(), 2);
}

#[test]
fn a_negative_amount_in_the_fourth_item_is_reported_at_its_index() {
    let output = json!({
        "line_items": [
            {"description": "a", "amount": 1.0},
            {"description": "b", "amount": 1.0},
            {"description": "c", "amount": 1.0},
            {"description": "d", "amount": -3.0}
        ],
        "total": 0.0
    });
    let violations = extract::validate::<Invoice>(&output, "").unwrap_err();
    let paths: Vec<String> = violations.iter().map(|v| v.path.to_string()).collect();
    assert!(paths.contains(&"line_items[3].amount".to_string()), "{violations}");
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(total_discrepancy == (abs(calculated_total - stated_total) > 0.01))]
struct Totals {
    calculated_total: f64,
    stated_total: f64,
    total_discrepancy: bool,
}

#[test]
fn self_correction_fields() {
    let check = |c: f64, s: f64, flag: bool| {
        extract::validate::<Totals>(
            &json!({"calculated_total": c, "stated_total": s, "total_discrepancy": flag}),
            "",
        )
        .is_ok()
    };
    assert!(!check(720.0, 720.0, true));
    assert!(check(720.0, 720.0, false));
    assert!(check(450.0, 500.0, true));
    assert!(!check(450.0, 500.0, false));
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(conflict_detected == (is_some(payment_due_days) && is_some(payment_terms_days) && payment_due_days != payment_terms_days))]
struct Terms {
    payment_due_days: Option<u32>,
    payment_terms_days: Option<u32>,
    conflict_detected: bool,
}

#[test]
fn conflict_flag() {
    let check = |due: Option<u32>, terms: Option<u32>, flag: bool| {
        extract::validate::<Terms>(
            &json!({"payment_due_days": due, "payment_terms_days": terms, "conflict_detected": flag}),
            "",
        )
        .is_ok()
    };
    assert!(!check(Some(30), Some(60), false));
    assert!(check(Some(30), Some(60), true));
    assert!(check(Some(30), Some(30), false));
    assert!(check(None, Some(60), false));
    assert!(!check(None, Some(60), true));
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(quantity * unit_price == amount)]
struct PricedLine {
    quantity: u32,
    unit_price: f64,
    amount: f64,
}

#[test]
fn integers_promote_to_the_float_they_meet() {
    let ok = json!({"quantity": 3, "unit_price": 2.5, "amount": 7.5});
    assert!(extract::validate::<PricedLine>(&ok, "").is_ok());
    let bad = json!({"quantity": 3, "unit_price": 2.5, "amount": 8.0});
    let v = extract::validate::<PricedLine>(&bad, "").unwrap_err();
    assert_eq!(
        v[0].message,
        "check failed: quantity * unit_price == amount: quantity = 3, unit_price = 2.50, amount = 8.00"
    );
}

/// The seeds' open category: an enum of the expected values with an
/// `Other`, a free-text detail beside it, and a check that demands the
/// detail exactly when the category is `Other` (`examples/open_category.rs`).
mod open_category {
    use extract::Extractable;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema, Extractable)]
    #[serde(rename_all = "snake_case")]
    enum Category {
        Travel,
        Meals,
        Other,
    }

    #[derive(Debug, Deserialize, JsonSchema, Extractable)]
    #[check(
        (category == Category::Other && is_some(category_detail))
            || (category != Category::Other && is_none(category_detail)),
        code = "category_detail"
    )]
    struct Expense {
        category: Category,
        category_detail: Option<String>,
        amount: f64,
    }

    fn judged(category: &str, detail: Option<&str>) -> Result<Expense, extract::Violations> {
        extract::validate::<Expense>(
            &json!({"category": category, "category_detail": detail, "amount": 1.0}),
            "",
        )
    }

    #[test]
    fn the_detail_is_demanded_exactly_when_the_category_is_other() {
        assert!(judged("other", Some("booth rental")).is_ok());
        assert!(judged("travel", None).is_ok());
        for (category, detail) in [("other", None), ("meals", Some("lunch"))] {
            let found = judged(category, detail).expect_err("the detail contradicts the category");
            assert_eq!(found.len(), 1, "{found}");
            assert_eq!((found[0].code.to_string(), found[0].recoverable), ("category_detail".into(), true));
            assert_eq!(found[0].fields, ["category", "category_detail"], "{found}");
        }
        let found = judged("unknown", None).expect_err("not a category");
        assert_eq!(found[0].layer, extract::Layer::Structure);
    }
}
