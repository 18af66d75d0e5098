//! What an extraction costs, in US dollars: each reply priced at its
//! model's rate, summed into the outcome, its packet, `Stats` and a bulk
//! report; the cost budget that ends a document like the token budget; and
//! a model without a price, whose cost is unknown rather than zero.

use extract::cost::{PriceTable, Prices};
use extract::model::Reply;
use extract::testing::Scripted;
use extract::{Bulk, Document, ErrorKind, Extractable, Extractor, Outcome, Reason, Retries, Stats, Usage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Record a receipt's total.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(total > 0)]
struct Receipt {
    total: f64,
}

/// $3 input, $15 output, $0.30 cache read, $3.75 cache write, per million tokens.
fn prices() -> PriceTable {
    PriceTable::new().with("scripted", Prices::per_million(3.0, 15.0, 0.30, 3.75))
}

fn reply(total: f64, usage: Usage) -> Reply {
    Reply::tool_call(json!({ "total": total })).with_usage(usage)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn each_attempt_is_priced_by_its_tokens_and_the_outcome_carries_the_sum() {
    let first = Usage::new(1_000, 100).with_cache(0, 2_000);
    let second = Usage::new(500, 120).with_cache(2_000, 0);
    let model = Scripted::new([reply(-1.0, first), reply(12.5, second)]);
    let outcome = Extractor::new(model).prices(prices()).extract_blocking::<Receipt>("Total 12.50").unwrap();
    // (1000×3 + 100×15 + 2000×3.75) + (500×3 + 120×15 + 2000×0.30), per million.
    let expected = (3_000.0 + 1_500.0 + 7_500.0 + 1_500.0 + 1_800.0 + 600.0) / 1e6;
    assert_eq!(outcome.attempts(), 2);
    assert!(close(outcome.cost().unwrap(), expected), "{:?} {expected}", outcome.cost());
    let packet = serde_json::to_value(&outcome).unwrap();
    assert!(close(packet["cost"].as_f64().unwrap(), expected), "{packet}");
}

#[test]
fn an_escalation_costs_what_its_attempts_cost() {
    let usage = Usage::new(1_000, 100);
    let model = Scripted::new([reply(-1.0, usage), reply(-2.0, usage)]);
    let outcome = Extractor::new(model)
        .prices(prices())
        .retries(Retries::new(1).unwrap())
        .extract_blocking::<Receipt>("Total 12.50")
        .unwrap();
    let Outcome::Escalated(escalation) = &outcome else { panic!("{outcome:?}") };
    assert!(close(escalation.cost.unwrap(), 2.0 * 4_500.0 / 1e6));
    assert_eq!(serde_json::to_value(&outcome).unwrap()["cost"], json!(escalation.cost.unwrap()));
    // And each entry of its error chain, what it cost.
    let packet = serde_json::to_value(&outcome).unwrap();
    let costs: Vec<&Value> = packet["error_chain"].as_array().unwrap().iter().map(|a| &a["cost"]).collect();
    assert_eq!(costs, [&json!(4_500.0 / 1e6), &json!(4_500.0 / 1e6)]);
}

#[test]
fn a_model_without_a_price_has_an_unknown_cost_not_a_zero_one() {
    let model = Scripted::new([reply(12.5, Usage::new(1_000, 100))]);
    // The default table is Claude's: the scripted model is not in it.
    let outcome = Extractor::new(model).extract_blocking::<Receipt>("Total 12.50").unwrap();
    assert_eq!(outcome.cost(), None);
    assert_eq!(serde_json::to_value(&outcome).unwrap()["cost"], Value::Null);
    let mut stats = Stats::new();
    stats.record(&outcome);
    assert_eq!(stats.cost(), None);
    assert!(stats.to_string().contains("cost: unknown"), "{stats}");
    assert_eq!(serde_json::to_value(&stats).unwrap()["cost"], Value::Null);
}

#[test]
fn the_cost_budget_ends_a_document_that_would_spend_past_it() {
    // Each attempt costs $0.0045: a second one would pass a budget of $0.008.
    let usage = Usage::new(1_000, 100);
    let model = Scripted::new([reply(-1.0, usage), reply(12.5, usage)]);
    let outcome = Extractor::new(model.clone())
        .prices(prices())
        .cost_budget(0.008)
        .extract_blocking::<Receipt>("Total 12.50")
        .unwrap();
    let Outcome::Escalated(escalation) = &outcome else { panic!("{outcome:?}") };
    assert_eq!(escalation.reason, Reason::BudgetExhausted);
    let hint = escalation.fix_hint.as_deref().unwrap();
    assert!(hint.contains("cost budget of $0.008"), "{hint}");
    assert_eq!(model.calls(), 1, "no second call");

    // A budget the second attempt fits in lets it run.
    let model = Scripted::new([reply(-1.0, usage), reply(12.5, usage)]);
    let outcome = Extractor::new(model)
        .prices(prices())
        .cost_budget(0.009)
        .extract_blocking::<Receipt>("Total 12.50")
        .unwrap();
    assert!(outcome.is_valid(), "{outcome:?}");
}

#[test]
fn a_cost_budget_without_a_price_is_refused_naming_the_model() {
    let model = Scripted::new([reply(12.5, Usage::new(1_000, 100))]);
    let error = Extractor::new(model.clone())
        .cost_budget(0.01)
        .extract_blocking::<Receipt>("Total 12.50")
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Configuration);
    assert!(error.to_string().contains("\"scripted\""), "{error}");
    assert_eq!(model.calls(), 0, "refused before any call");
}

#[tokio::test]
async fn a_bulk_report_and_its_stats_total_the_costs() {
    let usage = Usage::new(2_000, 200);
    let model = Scripted::new([reply(1.0, usage), reply(2.0, usage), reply(3.0, usage)]);
    let documents = (1..=3).map(|i| Document::text(format!("Total {i}")).with_id(format!("r-{i}")));
    let report = Bulk::new(Extractor::new(model).prices(prices()))
        .concurrency(1)
        .run::<Receipt>(documents)
        .await
        .unwrap();
    let each = (2_000.0 * 3.0 + 200.0 * 15.0) / 1e6;
    assert!(close(report.cost().unwrap(), 3.0 * each), "{:?}", report.cost());
    assert!(report.stats.to_string().contains(&format!("cost: ${:.4}", 3.0 * each)), "{}", report.stats);
    assert!(close(serde_json::to_value(&report.stats).unwrap()["cost"].as_f64().unwrap(), 3.0 * each));
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn a_journal_keeps_each_outcomes_cost_for_its_summary_and_a_resumed_run() {
    let path = crate::support::invoices::temp_journal("cost", "journal");
    let usage = Usage::new(2_000, 200);
    let documents = || (1..=2).map(|i| Document::text(format!("Total {i}")).with_id(format!("r-{i}")));
    let model = Scripted::new([reply(1.0, usage), reply(2.0, usage)]);
    let bulk = Bulk::new(Extractor::new(model).prices(prices())).journal(&path).unwrap();
    let report = bulk.run::<Receipt>(documents()).await.unwrap();
    let each = (2_000.0 * 3.0 + 200.0 * 15.0) / 1e6;
    assert!(close(report.cost().unwrap(), 2.0 * each));

    let summary = extract::Journal::sqlite(&path).summary().unwrap();
    assert!(close(summary.stats.cost().unwrap(), 2.0 * each), "{:?}", summary.stats.cost());
    // Resumed with no reply left to give: the recorded replies are priced again.
    let again = Bulk::new(Extractor::new(Scripted::new(Vec::<Reply>::new())).prices(prices()))
        .journal(&path)
        .unwrap()
        .run::<Receipt>(documents())
        .await
        .unwrap();
    assert!(close(again.cost().unwrap(), 2.0 * each), "{:?}", again.cost());
}

#[test]
fn stats_say_what_share_of_the_input_was_read_from_the_cache() {
    let model = Scripted::new([
        reply(-1.0, Usage::new(1_000, 100).with_cache(0, 3_000)),
        reply(12.5, Usage::new(1_000, 100).with_cache(3_000, 0)),
    ]);
    let outcome = Extractor::new(model).extract_blocking::<Receipt>("Total 12.50").unwrap();
    let mut stats = Stats::new();
    stats.record(&outcome);
    // 3,000 of 8,000 input tokens were read from the cache.
    assert!((stats.cache_read_share() - 0.375).abs() < 1e-12, "{}", stats.cache_read_share());
    assert!(stats.to_string().contains("(37.5% of input read from the cache)"), "{stats}");
    assert_eq!(serde_json::to_value(&stats).unwrap()["cache_read_share"], 0.375);
}
