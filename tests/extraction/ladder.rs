//! A ladder of models (`Extractor::then`): a stronger model starts over
//! where a weaker one ended systematic or out of budget, never after a
//! violation that is not recoverable; the outcome, each failed attempt,
//! the packets, `Stats` and a resumed journal name who answered.

use extract::model::{Model, ModelFuture, Prompt, Reply};
use extract::testing::Scripted;
use extract::{Bulk, Document, Extractable, Extractor, Outcome, Reason, Retries, Stats, Usage};
use serde_json::{Value, json};

/// Record one receipt.
#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, Extractable)]
#[check(total > 0)]
struct Receipt {
    #[extract(recoverable = false)]
    number: String,
    total: f64,
}

/// A scripted model with a name of its own.
#[derive(Clone)]
struct Named(&'static str, Scripted);

impl Model for Named {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        self.1.call(prompt)
    }

    fn name(&self) -> &str {
        self.0
    }
}

fn answer(total: f64) -> Reply {
    Reply::tool_call(json!({"number": "R-1", "total": total})).with_usage(Usage::new(1_000, 100))
}

const DOCUMENT: &str = "Receipt R-1\nTotal 7.50";

#[test]
fn a_systematic_failure_climbs_to_a_stronger_model_that_starts_afresh() {
    let small = Named("small", Scripted::new([answer(-7.5), answer(-7.5)]));
    let large = Named("large", Scripted::new([answer(7.5)]));
    let outcome =
        Extractor::new(small.clone()).then(large.clone()).extract_blocking::<Receipt>(DOCUMENT).unwrap();
    let Outcome::Valid(valid) = &outcome else { panic!("{outcome:?}") };
    assert_eq!((valid.model(), valid.rung(), valid.attempts()), (Some("large"), 1, 3));
    let chain: Vec<(u32, Option<&str>)> =
        valid.failed_attempts().iter().map(|a| (a.attempt, a.model.as_deref())).collect();
    assert_eq!(chain, [(1, Some("small")), (2, Some("small"))]);
    assert_eq!(valid.usage(), Usage::new(3_000, 300), "every rung's tokens");
    // The large model's first prompt: no correction of the small one's
    // output, and a note of what it got wrong.
    let first = &large.1.prompts()[0];
    assert!(first.correction.is_none(), "a first attempt of its own");
    assert!(first.system.contains("Another model answered this document before you"), "{}", first.system);
    assert!(first.system.contains("total > 0"), "{}", first.system);
    let packet = serde_json::to_value(&outcome).unwrap();
    assert_eq!(packet["model"], "large");
    let mut stats = Stats::new();
    stats.record(&outcome);
    assert_eq!(stats.settled_by_rung().get(&1), Some(&1));
}

#[test]
fn a_violation_that_is_not_recoverable_goes_to_a_person_at_once() {
    let small = Named("small", Scripted::new([Reply::tool_call(json!({"number": null, "total": 7.5}))]));
    let large = Named("large", Scripted::new([answer(7.5)]));
    let outcome = Extractor::new(small).then(large.clone()).extract_blocking::<Receipt>(DOCUMENT).unwrap();
    let Outcome::Escalated(escalation) = &outcome else { panic!("{outcome:?}") };
    assert_eq!(escalation.reason, Reason::NotRecoverable);
    assert_eq!((escalation.model.as_deref(), escalation.rung), (Some("small"), 0));
    assert_eq!(large.1.calls(), 0, "absent data: a stronger model would only invent it");
}

#[test]
fn every_rung_failing_escalates_with_the_whole_chain_each_entry_naming_its_model() {
    let small = Named("small", Scripted::new([answer(-1.0), answer(-2.0)]));
    let large = Named("large", Scripted::new([answer(-3.0), answer(-4.0)]));
    let outcome = Extractor::new(small)
        .retries(Retries::new(1).unwrap())
        .then(large)
        .extract_blocking::<Receipt>(DOCUMENT)
        .unwrap();
    let Outcome::Escalated(escalation) = &outcome else { panic!("{outcome:?}") };
    // The same check failing twice on each rung: systematic, on the last rung too.
    assert_eq!(escalation.reason, Reason::Systematic);
    assert_eq!(escalation.rung, 1);
    let packet = serde_json::to_value(&outcome).unwrap();
    let models: Vec<&Value> = packet["error_chain"].as_array().unwrap().iter().map(|a| &a["model"]).collect();
    assert_eq!(models, [&json!("small"), &json!("small"), &json!("large"), &json!("large")]);
    assert_eq!(outcome.attempts(), 4);
    // The report's escalation row names the model that answered last.
    let mut stats = Stats::new();
    stats.record(&outcome);
    let html = extract::report::Report::new(&stats).outcome("r-1", &outcome).html();
    assert!(html.contains("last: large"), "{html}");
}

#[test]
fn a_cost_is_priced_rung_by_rung() {
    let prices = extract::cost::PriceTable::new()
        .with("small", extract::cost::Prices::per_million(1.0, 1.0, 0.0, 0.0))
        .with("large", extract::cost::Prices::per_million(10.0, 10.0, 0.0, 0.0));
    let small = Named("small", Scripted::new([answer(-7.5), answer(-7.5)]));
    let large = Named("large", Scripted::new([answer(7.5)]));
    let outcome =
        Extractor::new(small).then(large).prices(prices).extract_blocking::<Receipt>(DOCUMENT).unwrap();
    // Two small calls of 1,100 tokens at $1 per million, one large at $10.
    let expected = (2.0 * 1_100.0 + 11_000.0) / 1e6;
    assert!((outcome.cost().unwrap() - expected).abs() < 1e-12, "{:?}", outcome.cost());
    // Each failed attempt says what it cost.
    let Outcome::Valid(valid) = &outcome else { panic!("{outcome:?}") };
    let costs: Vec<Option<f64>> = valid.failed_attempts().iter().map(|a| a.cost).collect();
    assert_eq!(costs, [Some(1_100.0 / 1e6), Some(1_100.0 / 1e6)]);

    // Stats split the cost by model: what each rung answered, settled and cost.
    let mut stats = Stats::new();
    stats.record(&outcome);
    let by_model = stats.by_model();
    let (small, large) = (&by_model["small"], &by_model["large"]);
    assert_eq!((small.attempts, small.settled, large.attempts, large.settled), (2, 0, 1, 1));
    assert!((small.cost - 2_200.0 / 1e6).abs() < 1e-12, "{small:?}");
    assert!((large.cost - 11_000.0 / 1e6).abs() < 1e-12, "{large:?}");
    assert_eq!(large.usage, Usage::new(1_000, 100));
    assert!(stats.to_string().contains("by model"), "{stats}");
    assert_eq!(serde_json::to_value(&stats).unwrap()["by_model"]["large"]["settled"], 1);

    // The report draws them.
    let html = extract::report::Report::new(&stats).title("ladder").html();
    assert!(html.contains(r#"data-model="small""#) && html.contains(r#"data-model="large""#), "{html}");
    assert!(html.contains("$0.0110"), "the large model's cost");
}

#[tokio::test]
async fn a_journal_replays_every_rung_and_a_resumed_run_calls_no_model() {
    let path = crate::support::invoices::temp_journal("ladder", "resume");
    let documents = || vec![Document::text(DOCUMENT).with_id("r-1")];
    let small = Named("small", Scripted::new([answer(-7.5), answer(-7.5)]));
    let large = Named("large", Scripted::new([answer(7.5)]));
    let extractor = Extractor::new(small).then(large);
    let first = Bulk::new(extractor).journal(&path).unwrap().run::<Receipt>(documents()).await.unwrap();
    assert_eq!((first.outcomes["r-1"].rung(), first.outcomes["r-1"].attempts()), (1, 3));

    // The same run again: every reply replayed from the journal, rung by rung.
    let small = Named("small", Scripted::new(Vec::<Reply>::new()));
    let large = Named("large", Scripted::new(Vec::<Reply>::new()));
    let again = Bulk::new(Extractor::new(small.clone()).then(large.clone()))
        .journal(&path)
        .unwrap()
        .run::<Receipt>(documents())
        .await
        .unwrap();
    let outcome = &again.outcomes["r-1"];
    assert_eq!((outcome.model(), outcome.rung(), outcome.attempts()), (Some("large"), 1, 3));
    assert_eq!((small.1.calls(), large.1.calls()), (0, 0));
    assert_eq!(again.stats.settled_by_rung().get(&1), Some(&1));
    // What each model spent, counted again from the journal alone.
    let summary = extract::Journal::sqlite(&path).summary().unwrap();
    let by_model = summary.stats.by_model();
    assert_eq!((by_model["small"].attempts, by_model["large"].settled), (2, 1), "{by_model:?}");
}

/// Over HTTP, two clients of the Messages API stand-in on 127.0.0.1: the
/// small model drops a line item every time, the large one reads it whole;
/// the ladder's outcome is the large model's, priced at each model's
/// `PriceTable::claude()` price.
#[cfg(feature = "anthropic")]
#[tokio::test]
async fn over_http_the_ladder_climbs_from_a_small_model_to_a_large_one() {
    use crate::support::invoices::Invoice;
    use crate::support::rate_limited::{Metering, RateLimited, invoice_answer};
    use std::sync::{Arc, Mutex};

    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = asked.clone();
    let server = RateLimited::start(Metering::unmetered(move |body: &Value| {
        let mut answer = invoice_answer(body);
        record.lock().unwrap().push(body["model"].as_str().unwrap().to_string());
        if body["model"] == "claude-haiku-5-5" {
            answer["line_items"].as_array_mut().unwrap().pop();
        }
        answer
    }))
    .await;
    let client = |model: &str| {
        extract::anthropic::Client::builder()
            .api_key("k")
            .base_url(&server.base_url)
            .model(model)
            .build()
            .unwrap()
    };
    let outcome = Extractor::new(client("claude-haiku-5-5"))
        .then(client("claude-sonnet-5-5"))
        .extract::<Invoice>("amounts 4 1 2 total 7")
        .await
        .unwrap();
    let Outcome::Valid(valid) = &outcome else { panic!("{outcome:?}") };
    assert_eq!(valid.value().line_items.len(), 3);
    assert_eq!((valid.model(), valid.rung()), (Some("claude-sonnet-5-5"), 1));
    assert_eq!(*asked.lock().unwrap(), ["claude-haiku-5-5", "claude-haiku-5-5", "claude-sonnet-5-5"]);
    let mut stats = Stats::new();
    stats.record(&outcome);
    let (small, large) = (&stats.by_model()["claude-haiku-5-5"], &stats.by_model()["claude-sonnet-5-5"]);
    assert_eq!((small.attempts, large.attempts, large.settled), (2, 1, 1));
    // Sonnet 5.5 costs twenty times Haiku 5.5 per token; its one call has
    // about the tokens of each of Haiku's two.
    assert!(large.cost > 5.0 * small.cost && small.cost > 0.0, "{small:?} {large:?}");
}
