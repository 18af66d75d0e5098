//! Whole extractions over HTTP: the derive, the retry runtime and the Claude
//! client against a real HTTP server on 127.0.0.1 that this file starts (the
//! scripted server of the client's own tests). The server reads each request
//! (head and body), records it and answers with the next scripted response,
//! one request per connection.

#![cfg(feature = "anthropic")]

use std::time::Duration;

use extract::anthropic::Client;
use extract::{Extractable, Extractor, Outcome, Retries, Usage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Record one invoice exactly as the document states it.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
struct Invoice {
    /// Invoice number exactly as printed.
    #[extract(recoverable = false)]
    invoice_number: String,
    line_items: Vec<LineItem>,
    #[serde(rename = "total")]
    stated_total: f64,
}

/// One billed line.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct LineItem {
    description: String,
    amount: f64,
}

/// Quotes, a backslash, non-ASCII text and CRLF: all must arrive unchanged.
const DOCUMENT: &str = "INVOICE \"INV-7\"\r\nVendor: Zoë's Café \\ Bäckerei\n\
                        Catering         150.00\nRoom hire        300.00\nService fee       50.00\n\
                        TOTAL            500.00 €\n";

fn first_output() -> Value {
    json!({
        "invoice_number": "INV-7",
        "line_items": [{"description": "Catering", "amount": 150.0}, {"description": "Room hire", "amount": 300.0}],
        "total": 500.0
    })
}

fn corrected_output() -> Value {
    let mut output = first_output();
    output["line_items"].as_array_mut().unwrap().push(json!({"description": "Service fee", "amount": 50.0}));
    output
}

// ---------------------------------------------------------------------------
// The server: the scripted server the client's own tests use.

use crate::support::server as common;
use common::{Server, Step};

/// A response as the Messages API sends it, with a request id.
fn response(status: u16, body: String) -> Step {
    common::reply(status, &[("request-id", "req_test")], body)
}

/// A 200 whose message calls `record_invoice` with `input` and spent `usage`.
fn tool_use(input: Value, usage: Usage) -> Step {
    let body = json!({
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-5-5",
        "content": [{"type": "tool_use", "id": "toolu_test", "name": "record_invoice", "input": input}],
        "stop_reason": "tool_use",
        "stop_sequence": null,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_creation_input_tokens": usage.cache_write_tokens,
            "cache_read_input_tokens": usage.cache_read_tokens
        }
    });
    response(200, body.to_string())
}

fn client(server: &Server) -> Client {
    Client::builder()
        .api_key("test-key")
        .base_url(&server.base_url)
        .document_blocks(true)
        .timeout(Duration::from_secs(10))
        .retry_backoff(Duration::from_millis(5), Duration::from_millis(20))
        .build()
        .unwrap()
}

// ---------------------------------------------------------------------------
// Tests

#[tokio::test]
async fn one_correction_attempt_over_http_carries_document_output_and_error() {
    let first_usage = Usage::new(1200, 90).with_cache(0, 1100);
    let second_usage = Usage::new(310, 95).with_cache(1100, 0);
    let server = Server::start(vec![
        tool_use(first_output(), first_usage),
        tool_use(corrected_output(), second_usage),
    ])
    .await;

    let outcome = Extractor::new(client(&server))
        .retries(Retries::new(2).unwrap())
        .extract::<Invoice>(DOCUMENT)
        .await
        .unwrap();

    let Outcome::Valid(valid) = outcome else { panic!("expected Valid, got {outcome:?}") };
    assert_eq!(valid.attempts(), 2);
    assert_eq!(valid.value().line_items.len(), 3);
    assert_eq!(
        valid.usage(),
        Usage { input_tokens: 1510, output_tokens: 185, cache_read_tokens: 1100, cache_write_tokens: 1100 }
    );
    assert_eq!(valid.attempt_usage(), [first_usage, second_usage]);
    // Priced from Claude's table by the client's model (claude-haiku-5-5:
    // $0.10 input, $0.50 output, $0.01 cache read, $0.125 cache write):
    // (1510×0.10 + 185×0.50 + 1100×0.01 + 1100×0.125) per million.
    let cost = valid.cost().expect("the default model has a price");
    assert!((cost - 392.0 / 1e6).abs() < 1e-12, "{cost}");

    let bodies = server.raw_bodies();
    assert_eq!(bodies.len(), 2, "one request per attempt, no transport retry");
    let first: Value = serde_json::from_slice(&bodies[0]).unwrap();
    let second: Value = serde_json::from_slice(&bodies[1]).unwrap();

    // The tool is the same in both requests (the prompt is too short for the
    // API to cache, so it carries no cache marker).
    assert_eq!(second["tools"][0]["name"], "record_invoice");
    assert!(second["tools"][0].get("cache_control").is_none());
    assert_eq!(first["tools"], second["tools"]);

    let content = second["messages"][0]["content"].as_array().unwrap();
    let document = &content[0];
    assert_eq!(document["type"], "document");
    assert_eq!(document["source"]["data"].as_str().unwrap().as_bytes(), DOCUMENT.as_bytes());
    assert_eq!(document, &first["messages"][0]["content"][0], "the prefix is stable");

    let texts: Vec<&str> = content[1..].iter().filter_map(|b| b["text"].as_str()).collect();
    assert_eq!(texts.len(), 1, "the correction is one text: {content:#?}");
    let failed_output = first_output().to_string();
    // Each correction block is labelled and fenced, as the prompt's text shows it.
    let blocks: Vec<&str> = texts[0].split("\n\n### ").collect();
    assert_eq!(blocks.len(), 3, "{}", texts[0]);
    assert_eq!(
        blocks[0],
        format!("### PREVIOUS OUTPUT\n```\n{failed_output}\n```"),
        "the failed output, verbatim"
    );
    assert_eq!(
        blocks[1],
        "VALIDATION ERRORS\n```\n- line_items: check failed: sum(line_items.amount) == total \
         (tolerance 0.01): sum(line_items.amount) = 450.00, total = 500.00\n```",
        "the exact error"
    );
    assert!(blocks[2].starts_with("INSTRUCTION\n") && blocks[2].contains("record_invoice"), "{}", blocks[2]);
}

#[tokio::test]
async fn a_500_then_success_does_not_spend_a_validation_attempt() {
    let overloaded =
        json!({"type": "error", "error": {"type": "api_error", "message": "Internal server error"}});
    let server = Server::start(vec![
        response(500, overloaded.to_string()),
        tool_use(corrected_output(), Usage::new(1000, 80)),
    ])
    .await;

    let outcome = Extractor::new(client(&server)).extract::<Invoice>(DOCUMENT).await.unwrap();

    assert!(outcome.is_valid(), "{outcome:?}");
    assert_eq!(outcome.attempts(), 1, "a transport retry is not a validation attempt");
    assert_eq!(server.raw_bodies().len(), 2, "the server saw the failed request and its retry");
    assert_eq!(server.raw_bodies()[0], server.raw_bodies()[1], "the retry resends the same request");
    assert_eq!(outcome.usage(), Usage::new(1000, 80));
}

#[tokio::test]
async fn a_transport_failure_after_an_attempt_keeps_the_attempt_and_its_tokens() {
    let unauthorized =
        json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}});
    let server = Server::start(vec![
        tool_use(first_output(), Usage::new(1000, 80)),
        response(401, unauthorized.to_string()),
    ])
    .await;

    let err = Extractor::new(client(&server)).extract::<Invoice>(DOCUMENT).await.unwrap_err();

    assert!(matches!(err.root(), extract::Error::Api { status: 401, .. }), "{err:?}");
    assert_eq!(err.attempts().len(), 1, "the failed attempt is kept");
    assert_eq!(err.attempts()[0].violations[0].code, "check_failed");
    assert_eq!(err.usage(), Usage::new(1000, 80), "the tokens it spent are reported");
    assert!(err.to_string().contains("1080 tokens"), "{err}");
}

/// The child process of the `from_env` test: an extractor over whatever
/// backend its environment names. Does nothing when run as an ordinary test.
#[test]
fn child_process_extracts_with_the_backend_the_environment_names() {
    if std::env::var("EXTRACT_FROM_ENV_CHILD").is_err() {
        return;
    }
    use extract::model::FromEnv;
    let extractor = Extractor::from_env().unwrap();
    assert_eq!(extractor.model().name(), "claude-sonnet-5-5");
    let outcome = extractor.extract_blocking::<Invoice>(DOCUMENT).unwrap();
    assert!(outcome.is_valid(), "{outcome:?}");
    // Claude's table prices it: (1000 × $2 + 100 × $10) per million.
    assert!((outcome.cost().unwrap() - 0.003).abs() < 1e-12, "{:?}", outcome.cost());
}

#[tokio::test]
async fn from_env_runs_against_the_backend_the_environment_names_anthropic_first() {
    let server = Server::start(vec![tool_use(corrected_output(), Usage::new(1000, 100))]).await;
    let base = server.base_url.clone();
    let child = tokio::task::spawn_blocking(move || {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args(["over_http::child_process_extracts_with_the_backend_the_environment_names", "--exact"])
            .env("EXTRACT_FROM_ENV_CHILD", "1")
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", base)
            .env("ANTHROPIC_MODEL", "claude-sonnet-5-5")
            // Both configured: Claude wins, so this server is never asked.
            .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
            .env("OPENAI_MODEL", "unused")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let said = String::from_utf8_lossy(&child.stdout).into_owned() + &String::from_utf8_lossy(&child.stderr);
    assert!(child.status.success(), "{said}");
    assert!(said.contains("1 passed"), "the child ran the test: {said}");
    let bodies = server.raw_bodies();
    assert_eq!(bodies.len(), 1);
    let request: Value = serde_json::from_slice(&bodies[0]).unwrap();
    assert_eq!(request["model"], "claude-sonnet-5-5");
}
