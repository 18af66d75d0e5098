//! Corrections as patches (`Corrections::Patch`) and Claude's JSON outputs
//! (`anthropic::Mode::JsonSchema`), over real sockets: the Claude and
//! OpenAI clients against the stand-in servers on 127.0.0.1, and `Bulk`
//! with a journal that a second run replays.

#![cfg(all(feature = "anthropic", feature = "openai"))]

use std::time::Duration;

use extract::anthropic::{Client, Mode};
use extract::testing::Scripted;
use extract::{Bulk, Corrections, Document, Error, Extractable, Extractor, Outcome, Reason, Retries, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::support::server::{self as common, Server, Step};

/// Record one invoice exactly as printed.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
struct Invoice {
    number: String,
    line_items: Vec<Line>,
    total: f64,
}

/// One billed line.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
struct Line {
    description: String,
    amount: f64,
}

/// A document of `n` lines of 10.00 each, and its right output.
fn invoice(n: usize) -> (String, Value) {
    let mut text = String::from("INVOICE INV-9\n");
    let mut items = Vec::new();
    for i in 0..n {
        text.push_str(&format!("Line {i:04}    10.00\n"));
        items.push(json!({"description": format!("Line {i:04}"), "amount": 10.0}));
    }
    text.push_str(&format!("TOTAL {}.00\n", n * 10));
    (text, json!({"number": "INV-9", "line_items": items, "total": (n * 10) as f64}))
}

/// The right output with item `i`'s amount wrong.
fn one_wrong(right: &Value, i: usize) -> Value {
    let mut wrong = right.clone();
    wrong["line_items"][i]["amount"] = json!(100.0);
    wrong
}

fn fix(i: usize) -> Value {
    json!({"patch": [{"op": "replace", "path": format!("/line_items/{i}/amount"), "value": 10.0}]})
}

// ---------------------------------------------------------------------------
// Messages API stand-in

fn message(content: Value, stop_reason: &str) -> Step {
    let body = json!({
        "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-haiku-5-5",
        "content": content, "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}
    });
    common::reply(200, &[], body.to_string())
}

fn tool_use(name: &str, input: Value) -> Step {
    message(json!([{"type": "tool_use", "id": "toolu_1", "name": name, "input": input}]), "tool_use")
}

fn text(text: &str, stop_reason: &str) -> Step {
    message(json!([{"type": "text", "text": text}]), stop_reason)
}

fn claude(server: &Server, model: &str, mode: Mode) -> Client {
    Client::builder()
        .api_key("test-key")
        .base_url(&server.base_url)
        .model(model)
        .mode(mode)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

fn patching<M: extract::model::Model>(model: M, retries: u32) -> Extractor<M> {
    Extractor::new(model).retries(Retries::new(retries).unwrap()).corrections(Corrections::Patch)
}

#[tokio::test]
async fn a_patch_fixes_one_item_of_100_over_the_messages_api() {
    let (document, right) = invoice(100);
    let server = Server::start(vec![
        tool_use("record_invoice", one_wrong(&right, 57)),
        tool_use("patch_output", fix(57)),
    ])
    .await;
    let outcome = patching(claude(&server, "claude-haiku-5-5", Mode::Tool), 2)
        .extract::<Invoice>(document.as_str())
        .await
        .unwrap();
    let Outcome::Valid(valid) = outcome else { panic!("{outcome:?}") };
    assert_eq!(valid.attempts(), 2);
    assert_eq!(valid.value().line_items.len(), 100, "the validated result is the whole object");
    assert_eq!(valid.value().line_items[57].amount, 10.0);
    assert_eq!(serde_json::to_value(valid.value()).unwrap(), right);

    let bodies = server.bodies();
    assert_eq!(bodies[0]["tools"][0]["name"], "record_invoice");
    let correction = &bodies[1];
    assert_eq!(correction["tools"].as_array().unwrap().len(), 1, "only the patch tool is offered");
    assert_eq!(correction["tools"][0]["name"], "patch_output");
    assert_eq!(correction["tool_choice"]["type"], "any", "forced where the model allows");
    assert_eq!(correction["system"], bodies[0]["system"], "the system names no tool: the same");
    assert!(correction["system"].as_str().unwrap().contains("Answer only through the tool"));
    let texts: Vec<&str> = correction["messages"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    let all = texts.join("\n");
    assert!(all.contains("\"description\":\"Line 0099\""), "the previous output is shown whole");
    assert!(all.contains("check failed: sum(line_items.amount) == total"), "{all}");
    assert!(all.contains("Call `patch_output`"), "{all}");
}

#[tokio::test]
async fn the_strict_fallback_sends_the_patch_tool_without_strict() {
    let (document, right) = invoice(3);
    let server = Server::start(vec![
        tool_use("record_invoice", one_wrong(&right, 1)),
        tool_use("patch_output", fix(1)),
    ])
    .await;
    let outcome = patching(claude(&server, "claude-opus-5-5", Mode::Tool), 2)
        .extract::<Invoice>(document.as_str())
        .await
        .unwrap();
    assert!(outcome.is_valid(), "{outcome:?}");
    let bodies = server.bodies();
    assert_eq!(bodies[0]["tools"][0]["strict"], true);
    assert_eq!(bodies[1]["tools"][0]["name"], "patch_output");
    assert!(bodies[1]["tools"][0].get("strict").is_none(), "{}", bodies[1]["tools"][0]);
}

#[tokio::test]
async fn an_invalid_patch_is_retried_naming_the_pointer() {
    let (document, right) = invoice(100);
    let bad = json!({"patch": [{"op": "replace", "path": "/line_items/100/amount", "value": 10.0}]});
    let server = Server::start(vec![
        tool_use("record_invoice", one_wrong(&right, 3)),
        tool_use("patch_output", bad.clone()),
        tool_use("patch_output", fix(3)),
    ])
    .await;
    let outcome = patching(claude(&server, "claude-haiku-5-5", Mode::Tool), 2)
        .extract::<Invoice>(document.as_str())
        .await
        .unwrap();
    let Outcome::Valid(valid) = outcome else { panic!("{outcome:?}") };
    assert_eq!(valid.attempts(), 3);
    let failed = valid.failed_attempts();
    assert_eq!(failed[1].violations[0].code, "invalid_patch");
    assert!(failed[1].violations[0].recoverable);
    let message = &failed[1].violations[0].message;
    assert!(message.contains("\"/line_items/100/amount\""), "{message}");
    assert!(message.contains("`/line_items` has 100 items, so index 100 is past the end"), "{message}");
    assert_eq!(failed[1].patch.as_ref(), Some(&bad["patch"]));
    let packet = serde_json::to_value(&failed[1]).unwrap();
    assert_eq!(packet["patch"], bad["patch"], "the error chain keeps the patch under \"patch\"");
    assert!(serde_json::to_value(&failed[0]).unwrap().get("patch").is_none());

    // The third prompt shows the unchanged object, which the pointers address, and the error.
    let third = &server.bodies()[2];
    let all = third["messages"][0]["content"].to_string();
    assert!(all.contains("index 100 is past the end"), "{all}");
    assert!(all.contains("\\\"amount\\\":100.0"), "the base is unchanged: {all}");
}

#[tokio::test]
async fn a_full_answer_to_a_patch_request_is_judged_as_usual() {
    let (document, right) = invoice(10);
    let server = Server::start(vec![
        tool_use("record_invoice", one_wrong(&right, 0)),
        tool_use("record_invoice", right.clone()),
    ])
    .await;
    let outcome = patching(claude(&server, "claude-haiku-5-5", Mode::Tool), 1)
        .extract::<Invoice>(document.as_str())
        .await
        .unwrap();
    let Outcome::Valid(valid) = outcome else { panic!("{outcome:?}") };
    assert_eq!(serde_json::to_value(valid.value()).unwrap(), right);
    assert!(valid.failed_attempts()[0].patch.is_none());
}

#[tokio::test]
async fn a_patch_that_fixes_the_shape_but_breaks_a_check_escalates_as_usual() {
    let (document, right) = invoice(10);
    let mut mistyped = right.clone();
    mistyped["line_items"][4]["amount"] = json!("10,00");
    let breaks = json!({"patch": [{"op": "replace", "path": "/line_items/4/amount", "value": 1.0}]});
    let server =
        Server::start(vec![tool_use("record_invoice", mistyped), tool_use("patch_output", breaks.clone())])
            .await;
    let outcome = patching(claude(&server, "claude-haiku-5-5", Mode::Tool), 1)
        .extract::<Invoice>(document.as_str())
        .await
        .unwrap();
    let Outcome::Escalated(escalation) = outcome else { panic!("{outcome:?}") };
    assert_eq!(escalation.reason, Reason::BudgetExhausted);
    assert_eq!(escalation.error_chain[0].violations[0].code, "invalid_type");
    assert_eq!(escalation.error_chain[1].violations[0].code, "check_failed");
    assert_eq!(escalation.error_chain[1].patch.as_ref(), Some(&breaks["patch"]));
    let last = escalation.last_output.as_ref().unwrap();
    assert_eq!(last["line_items"][4]["amount"], 1.0, "the last output is the patched object");
    assert_eq!(last["line_items"].as_array().unwrap().len(), 10);
    assert!(escalation.partial.held.contains_key("number"), "{:?}", escalation.partial);
}

#[tokio::test]
async fn an_empty_patch_changes_nothing_and_the_loop_stops_as_usual() {
    let (document, right) = invoice(5);
    let server = Server::start(vec![
        tool_use("record_invoice", one_wrong(&right, 2)),
        tool_use("patch_output", json!({"patch": []})),
    ])
    .await;
    let outcome = patching(claude(&server, "claude-haiku-5-5", Mode::Tool), 3)
        .extract::<Invoice>(document.as_str())
        .await
        .unwrap();
    let Outcome::Escalated(escalation) = outcome else { panic!("{outcome:?}") };
    assert_eq!(escalation.reason, Reason::Systematic, "the same check failed twice");
    assert_eq!(escalation.last_output.unwrap(), one_wrong(&right, 2));
}

// ---------------------------------------------------------------------------
// Chat Completions stand-in

async fn openai_server(script: Vec<Step>) -> Server {
    Server::start_at(script, "/v1", || common::reply(500, &[("x-should-retry", "false")], "{}".into())).await
}

fn completion(message: Value, finish_reason: &str) -> Step {
    let body = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    });
    common::reply(200, &[], body.to_string())
}

fn function_call(name: &str, input: &Value) -> Step {
    let call = json!({"id": "call_1", "type": "function", "function": {"name": name, "arguments": input.to_string()}});
    completion(json!({"role": "assistant", "content": null, "tool_calls": [call]}), "tool_calls")
}

fn content(input: &Value) -> Step {
    completion(json!({"role": "assistant", "content": input.to_string()}), "stop")
}

fn openai(server: &Server, mode: extract::openai::Mode) -> extract::openai::Client {
    extract::openai::Client::builder()
        .base_url(&server.base_url)
        .model("gpt-test")
        .strict(true)
        .mode(mode)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_patch_over_chat_completions_in_tool_mode_is_sent_non_strict() {
    let (document, right) = invoice(100);
    let server = openai_server(vec![
        function_call("record_invoice", &one_wrong(&right, 99)),
        function_call("patch_output", &fix(99)),
    ])
    .await;
    let outcome = patching(openai(&server, extract::openai::Mode::Tool), 2)
        .extract::<Invoice>(document.as_str())
        .await
        .unwrap();
    let Outcome::Valid(valid) = outcome else { panic!("{outcome:?}") };
    assert_eq!(serde_json::to_value(valid.value()).unwrap(), right);
    let bodies = server.bodies();
    assert_eq!(bodies[0]["tools"][0]["function"]["strict"], true);
    let function = &bodies[1]["tools"][0]["function"];
    assert_eq!(function["name"], "patch_output");
    assert!(function.get("strict").is_none(), "{function}");
    assert_eq!(bodies[1]["tool_choice"]["function"]["name"], "patch_output");
}

#[tokio::test]
async fn a_patch_over_chat_completions_in_json_schema_mode_uses_the_patch_schema() {
    let (document, right) = invoice(10);
    let server = openai_server(vec![content(&one_wrong(&right, 9)), content(&fix(9))]).await;
    let outcome = patching(openai(&server, extract::openai::Mode::JsonSchema), 2)
        .extract::<Invoice>(document.as_str())
        .await
        .unwrap();
    let Outcome::Valid(valid) = outcome else { panic!("{outcome:?}") };
    assert_eq!(serde_json::to_value(valid.value()).unwrap(), right);
    let bodies = server.bodies();
    let format = &bodies[1]["response_format"]["json_schema"];
    assert_eq!(format["name"], "patch_output");
    assert_eq!(format["schema"], extract::run::patch_tool().input_schema);
    assert!(format.get("strict").is_none(), "{format}");
    assert!(bodies[1].get("tools").is_none());
}

// ---------------------------------------------------------------------------
// The journal: the reply as sent, applied again on replay

#[tokio::test]
async fn a_journalled_patch_is_applied_again_on_replay() {
    let (document, right) = invoice(100);
    let path = crate::support::invoices::temp_journal("patch", "replay");
    let model = Scripted::new([
        extract::model::Reply::named_tool_call("record_invoice", one_wrong(&right, 42)),
        extract::model::Reply::named_tool_call("patch_output", fix(42)),
    ]);
    let documents = || vec![Document::text(document.clone()).with_id("inv-9")];
    let first =
        Bulk::new(patching(model.clone(), 2)).journal(&path).unwrap().run::<Invoice>(documents()).await;
    let first = first.unwrap();
    assert!(first.outcomes["inv-9"].is_valid(), "{:?}", first.outcomes);
    // The journal keeps the reply as the model sent it: the patch, not the patched object.
    let db =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let journal: String =
        db.query_row("SELECT reply FROM replies WHERE attempt = 2", [], |row| row.get(0)).unwrap();
    drop(db);
    assert!(journal.contains("patch_output"), "the reply is kept as sent: {journal}");
    assert!(journal.contains("/line_items/42/amount"), "{journal}");

    // A second run sends nothing: the recorded replies are replayed, the patch applied again.
    let silent = Scripted::new(Vec::<Value>::new());
    let second = Bulk::new(patching(silent.clone(), 2))
        .journal(&path)
        .unwrap()
        .run::<Invoice>(documents())
        .await
        .unwrap();
    assert_eq!(silent.calls(), 0);
    let Outcome::Valid(valid) = &second.outcomes["inv-9"] else { panic!("{:?}", second.outcomes) };
    assert_eq!(valid.attempts(), 2);
    assert_eq!(serde_json::to_value(valid.value()).unwrap(), right, "the patched object, whole");
}

// ---------------------------------------------------------------------------
// Claude's JSON outputs

#[tokio::test]
async fn json_outputs_extract_and_correct_end_to_end() {
    let (document, right) = invoice(3);
    let server = Server::start(vec![
        text(&one_wrong(&right, 1).to_string(), "end_turn"),
        text(&right.to_string(), "end_turn"),
    ])
    .await;
    let outcome = Extractor::new(claude(&server, "claude-haiku-5-5", Mode::JsonSchema))
        .extract::<Invoice>(document.as_str())
        .await
        .unwrap();
    let Outcome::Valid(valid) = outcome else { panic!("{outcome:?}") };
    assert_eq!(valid.attempts(), 2);
    assert_eq!(serde_json::to_value(valid.value()).unwrap(), right);
    let bodies = server.bodies();
    for body in &bodies {
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none(), "{body}");
        let format = &body["output_config"]["format"];
        assert_eq!(format["type"], "json_schema");
        assert_eq!(format["schema"], Invoice::tool().strict().unwrap().input_schema);
        assert!(body["system"].as_str().unwrap().contains("No tool is available"));
    }
    let correction = bodies[1]["messages"][0]["content"].to_string();
    assert!(correction.contains("check failed: sum(line_items.amount) == total"), "{correction}");
}

#[tokio::test]
async fn json_outputs_carry_patch_corrections() {
    let (document, right) = invoice(10);
    let server = Server::start(vec![
        text(&one_wrong(&right, 6).to_string(), "end_turn"),
        text(&fix(6).to_string(), "end_turn"),
    ])
    .await;
    let outcome = patching(claude(&server, "claude-haiku-5-5", Mode::JsonSchema), 2)
        .extract::<Invoice>(document.as_str())
        .await
        .unwrap();
    let Outcome::Valid(valid) = outcome else { panic!("{outcome:?}") };
    assert_eq!(serde_json::to_value(valid.value()).unwrap(), right);
    assert_eq!(
        server.bodies()[1]["output_config"]["format"]["schema"],
        extract::run::patch_tool().input_schema
    );
}

#[tokio::test]
async fn json_outputs_read_refusals_and_truncation_as_in_tool_mode() {
    let (document, _) = invoice(2);
    let server = Server::start(vec![text("I can't help with that.", "refusal")]).await;
    let outcome = Extractor::new(claude(&server, "claude-haiku-5-5", Mode::JsonSchema))
        .extract::<Invoice>(document.as_str())
        .await;
    let Outcome::Escalated(e) = outcome.unwrap() else { panic!() };
    assert_eq!((e.reason, e.error_chain[0].violations[0].code.as_str()), (Reason::NotRecoverable, "refusal"));

    let server = Server::start(vec![text("{\"number\": \"INV", "max_tokens")]).await;
    let outcome = Extractor::new(claude(&server, "claude-haiku-5-5", Mode::JsonSchema))
        .extract::<Invoice>(document.as_str())
        .await;
    let Outcome::Escalated(e) = outcome.unwrap() else { panic!() };
    assert_eq!(e.error_chain[0].violations[0].code, "truncated");
}

#[tokio::test]
async fn json_outputs_refuse_a_schema_over_the_limits_before_any_call() {
    let properties: serde_json::Map<String, Value> =
        (0..25).map(|i| (format!("field_{i:02}"), json!({"type": ["string", "null"]}))).collect();
    let tool = Tool {
        name: "record_many".into(),
        description: "Record many optional fields.".into(),
        input_schema: json!({"type": "object", "properties": properties}),
        strict: false,
    };
    let server = Server::start(vec![]).await;
    let error = Extractor::new(claude(&server, "claude-haiku-5-5", Mode::JsonSchema))
        .extract_with(tool, "a document", |_: &Value, _: &str| Ok(()))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Config(_)), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("more than the 24"), "{message}");
    assert!(message.contains("JSON outputs"), "{message}");
    assert!(server.requests().is_empty(), "nothing was sent");
}
