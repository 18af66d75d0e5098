//! The Claude client against a real HTTP server on 127.0.0.1: the scripted
//! server of `tests/support/server.rs` (tokio `TcpListener`, HTTP/1.1 written by hand), which
//! answers each request with the next scripted step and records every request
//! it received, headers and body.

// Shared with the facade's tests; each test crate uses part of it.
#[allow(dead_code)]
#[path = "../../tests/support/server.rs"]
mod server;
#[path = "../../tests/support/tracing_capture.rs"]
mod tracing_capture;

use crate::server::{Server, Step, reply};
use crate::tracing_capture::Capture;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use extract::anthropic::{API_VERSION, Client, ClientBuilder, DEFAULT_MODEL, Mode};
use extract::model::{Model, Prompt, Reply, ReplyContent, Truncation};
use extract::run::Correction;
use extract::{Document, Error, Extractor, Outcome, Reason, Retries, Tool, Usage, Violations};
use serde_json::{Value, json};
use tokio::net::TcpListener;

const KEY: &str = "sk-ant-api03-TEST-SECRET-0123456789abcdef";

// ---------------------------------------------------------------------------
// Script helpers

fn message(content: Value, stop_reason: &str) -> String {
    json!({
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": DEFAULT_MODEL,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": 12,
            "output_tokens": 34,
            "cache_creation_input_tokens": 56,
            "cache_read_input_tokens": 78
        }
    })
    .to_string()
}

fn tool_use(input: Value) -> String {
    message(
        json!([{"type": "tool_use", "id": "toolu_01", "name": "record_invoice", "input": input}]),
        "tool_use",
    )
}

fn ok(input: Value) -> Step {
    reply(200, &[], tool_use(input))
}

fn api_error(kind: &str, message: &str) -> String {
    json!({"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_body"})
        .to_string()
}

fn error_step(status: u16, kind: &str, message: &str) -> Step {
    reply(status, &[("request-id", "req_header_01")], api_error(kind, message))
}

fn tool() -> Tool {
    Tool {
        name: "record_invoice".into(),
        description: "Record one invoice.".into(),
        input_schema: json!({
            "type": "object",
            "properties": {"total": {"type": "number"}},
            "required": ["total"],
            "additionalProperties": false
        }),
        strict: false,
    }
}

fn prompt(document: &str) -> Prompt {
    let mut prompt = Prompt::new(tool(), document);
    prompt.system = "You extract data. Answer only through the tool.".into();
    prompt
}

/// A client of the local server, sending `document` blocks as to Anthropic's
/// own API (a local base URL would get text blocks by default).
fn builder(server: &Server) -> ClientBuilder {
    Client::builder()
        .api_key(KEY)
        .base_url(&server.base_url)
        .document_blocks(true)
        .timeout(Duration::from_secs(5))
        .retry_backoff(Duration::from_millis(5), Duration::from_millis(20))
}

/// The error's text, checked to carry no trace of the API key.
fn checked(err: &Error) -> String {
    let text = format!("{err} {err:?}");
    assert!(!text.contains(KEY) && !text.contains("TEST-SECRET"), "the API key leaked: {text}");
    err.to_string()
}

/// Every object key anywhere in `value`.
fn keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                keys(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

fn assert_no_sampling_parameters(body: &Value) {
    let mut all = Vec::new();
    keys(body, &mut all);
    for banned in ["temperature", "top_p", "top_k"] {
        assert!(!all.iter().any(|k| k == banned), "request carries `{banned}`: {body}");
    }
}

fn forced() -> Value {
    // One tool is offered: `any` forces it.
    json!({"type": "any", "disable_parallel_tool_use": true})
}

fn auto() -> Value {
    json!({"type": "auto", "disable_parallel_tool_use": true})
}

// ---------------------------------------------------------------------------
// Requests

#[tokio::test]
async fn request_headers_and_body_field_by_field() {
    let server = Server::start(vec![ok(json!({"total": 500.0}))]).await;
    let client = builder(&server).max_tokens(1234).build().unwrap();
    let document = "INVOICE 7\nTotal: 500.00";

    let reply = client.call(&prompt(document)).await.unwrap();

    assert_eq!(
        reply,
        Reply::named_tool_call("record_invoice", json!({"total": 500.0}))
            .with_usage(Usage {
                input_tokens: 12,
                output_tokens: 34,
                cache_read_tokens: 78,
                cache_write_tokens: 56,
            })
            // What the response said of itself: its id, the model, why it stopped.
            .with_response(Some("msg_01".into()), Some(DEFAULT_MODEL.into()), Some("tool_use".into()))
    );
    assert_eq!(client.name(), "claude-haiku-5-5", "the model requests name");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2026-10-21"));
    assert_eq!(API_VERSION, "2026-10-21");
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("authorization"), None);

    let body = request.json();
    let mut top: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
    top.sort_unstable();
    assert_eq!(top, ["max_tokens", "messages", "model", "system", "tool_choice", "tools"]);
    assert_eq!(body["model"], "claude-haiku-5-5");
    assert_eq!(body["max_tokens"], 1234);
    assert_eq!(body["system"], "You extract data. Answer only through the tool.");
    assert_eq!(
        body["tools"],
        json!([{
            "name": "record_invoice",
            "description": "Record one invoice.",
            "input_schema": tool().input_schema
        }])
    );
    assert_eq!(body["tool_choice"], forced());
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["role"], "user");
    // The first attempt's message is the document alone, and a prompt this
    // short carries no cache markers (the API would cache nothing).
    let content = messages[0]["content"].as_array().unwrap();
    assert_eq!(
        content,
        &[json!({
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": document}
        })]
    );
    assert_no_sampling_parameters(&body);
}

#[tokio::test]
async fn the_document_travels_byte_for_byte() {
    let document = "Vendor: \"ACME\" <acme@example.com>\r\n\tLine\\1: 5 €\n\
                    日本語 テキスト, emoji 🧾, combining é, nul-free \u{2028} separator\n\
                    </document> ```fence``` {\"json\": true}\n   trailing spaces   ";
    let server = Server::start(vec![ok(json!({"total": 5.0}))]).await;
    let client = builder(&server).build().unwrap();

    client.call(&prompt(document)).await.unwrap();

    let body = server.bodies().remove(0);
    let block = &body["messages"][0]["content"][0];
    assert_eq!(block["type"], "document");
    assert_eq!(block["source"]["data"].as_str().unwrap().as_bytes(), document.as_bytes());
    // The document is sent once, in its own block, and nowhere else.
    let raw = String::from_utf8(server.requests()[0].body.clone()).unwrap();
    assert_eq!(raw.matches("trailing spaces").count(), 1);
    assert_no_sampling_parameters(&body);
}

#[tokio::test]
async fn a_correction_attempt_maps_to_labelled_blocks_behind_the_cached_prefix() {
    let server = Server::start(vec![ok(json!({"total": 450.0})), ok(json!({"total": 500.0}))]).await;
    let client = builder(&server).build().unwrap();
    // Long enough for the API to cache the prefix, so the blocks carry markers.
    let document =
        format!("INVOICE 7\n{}Line A 450.00\nLine B 50.00\nTotal: 500.00", "Terms and notes.\n".repeat(100));
    let document = document.as_str();
    let first = prompt(document);
    let mut second = prompt(document);
    second.attempt = 2;
    second.correction = Some(Correction {
        previous_output: "{\"total\":450.0}".into(),
        violations: "total: check failed: sum(line_items.amount) == total: 500.00 != 450.00".into(),
        instruction: "Fix only the fields above and keep everything else.".into(),
    });

    client.call(&first).await.unwrap();
    let reply = client.call(&second).await.unwrap();
    assert_eq!(
        reply.content,
        ReplyContent::ToolCall { name: Some("record_invoice".into()), input: json!({"total": 500.0}) }
    );

    let bodies = server.bodies();
    let (one, two) = (&bodies[0], &bodies[1]);
    // The cached prefix (tools, system, document block) is identical across attempts.
    assert_eq!(one["tools"], two["tools"]);
    assert_eq!(one["system"], two["system"]);
    assert_eq!(one["tool_choice"], two["tool_choice"]);
    assert_eq!(one["messages"][0]["content"][0], two["messages"][0]["content"][0]);
    assert_eq!(two["messages"][0]["content"][0]["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(two["tools"][0]["cache_control"], json!({"type": "ephemeral"}));

    let content = two["messages"][0]["content"].as_array().unwrap();
    assert_eq!(content.len(), 2, "{content:#?}");
    assert!(content[1]["type"] == "text" && content[1].get("cache_control").is_none());
    // Each correction block is labelled and fenced as the prompt's text shows it.
    assert_eq!(
        content[1]["text"],
        "### PREVIOUS OUTPUT\n```\n{\"total\":450.0}\n```\n\n\
         ### VALIDATION ERRORS\n```\ntotal: check failed: sum(line_items.amount) == total: 500.00 != 450.00\n```\n\n\
         ### INSTRUCTION\n```\nFix only the fields above and keep everything else.\n```"
    );
    assert_eq!(two["messages"].as_array().unwrap().len(), 1);
    assert_no_sampling_parameters(two);
}

// ---------------------------------------------------------------------------
// Transport retries

#[tokio::test]
async fn a_429_with_retry_after_one_second_is_waited_out_then_succeeds() {
    let server = Server::start(vec![
        reply(429, &[("retry-after", "1")], api_error("rate_limit_error", "Number of requests exceeded")),
        ok(json!({"total": 1.0})),
    ])
    .await;
    let client = builder(&server).build().unwrap();

    let started = Instant::now();
    let reply = client.call(&prompt("doc")).await.unwrap();

    assert!(matches!(reply.content, ReplyContent::ToolCall { .. }));
    assert_eq!(server.requests().len(), 2);
    // The backoff is 5 ms here, so a wait of a second is the server's retry-after.
    assert!(started.elapsed() >= Duration::from_millis(950), "waited only {:?}", started.elapsed());
}

#[tokio::test]
async fn a_retry_after_of_u64_max_seconds_with_huge_backoff_settings_neither_panics_nor_waits() {
    let forever = u64::MAX.to_string();
    let server = Server::start(vec![reply(
        429,
        &[("retry-after", &forever), ("retry-after-ms", &forever)],
        api_error("rate_limit_error", "come back never"),
    )])
    .await;
    // The pause every clone shares is set from the backoff: here `Duration::MAX`.
    let client =
        builder(&server).retry_backoff(Duration::MAX, Duration::MAX).transport_retries(0).build().unwrap();
    let started = Instant::now();
    let err = client.call(&prompt("doc")).await.unwrap_err();
    assert!(matches!(err, Error::Api { status: 429, .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

/// A reply whose usage claims `input_tokens` (as JSON text, so it may be past `u64::MAX`).
fn claiming(input_tokens: &str, total: &str) -> Step {
    let body = format!(
        r#"{{"id":"msg_01","type":"message","role":"assistant","model":"m","stop_reason":"tool_use",
            "content":[{{"type":"tool_use","id":"toolu_01","name":"record_invoice","input":{{"total":{total}}}}}],
            "usage":{{"input_tokens":{input_tokens},"output_tokens":7,"cache_read_input_tokens":{input_tokens}}}}}"#
    );
    reply(200, &[], body)
}

fn needs_total_of_two(output: &Value, _: &str) -> Result<f64, Violations> {
    match output["total"].as_f64() {
        Some(total) if total == 2.0 => Ok(total),
        _ => Err(Violations::one(extract::Violation::new(
            extract::Layer::Semantic,
            extract::Code::CHECK_FAILED,
            extract::FieldPath::root().key("total"),
            "the total is 2",
        ))),
    }
}

#[tokio::test]
async fn token_counts_past_u64_max_saturate_when_read_and_when_summed() {
    let server = Server::start(vec![
        claiming("18446744073709551615", "1"),
        // Past u64::MAX: read as the most there is, not a broken reply.
        claiming("18446744073709551616", "2"),
    ])
    .await;
    let extractor = Extractor::new(builder(&server).build().unwrap()).retries(Retries::new(1).unwrap());
    let outcome = extractor.extract_with(tool(), "Total: 2", needs_total_of_two).await.unwrap();
    let Outcome::Valid(valid) = outcome else { panic!("{outcome:?}") };
    assert_eq!(valid.attempts(), 2);
    let usage = valid.usage();
    assert_eq!(usage, Usage::new(u64::MAX, 14).with_cache(u64::MAX, 0), "{usage:?}");
    assert_eq!(usage.total(), u64::MAX);
}

#[tokio::test]
async fn a_reply_claiming_u64_max_tokens_spends_the_budget_instead_of_wrapping_it() {
    let server =
        Server::start(vec![claiming("18446744073709551615", "1"), claiming("18446744073709551615", "2")])
            .await;
    let extractor = Extractor::new(builder(&server).build().unwrap())
        .retries(Retries::new(2).unwrap())
        .token_budget(1_000);
    let outcome = extractor.extract_with(tool(), "Total: 2", needs_total_of_two).await.unwrap();
    let Outcome::Escalated(escalation) = outcome else { panic!("{outcome:?}") };
    assert_eq!(escalation.reason, Reason::BudgetExhausted);
    assert_eq!(escalation.attempts(), 1, "no second call once the budget is spent");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn retry_after_ms_is_preferred_to_retry_after() {
    let server = Server::start(vec![
        reply(503, &[("retry-after-ms", "300"), ("retry-after", "30")], api_error("api_error", "busy")),
        ok(json!({"total": 1.0})),
    ])
    .await;
    let client = builder(&server).build().unwrap();

    let started = Instant::now();
    client.call(&prompt("doc")).await.unwrap();
    let waited = started.elapsed();

    assert_eq!(server.requests().len(), 2);
    assert!(waited >= Duration::from_millis(290) && waited < Duration::from_secs(10), "{waited:?}");
}

#[tokio::test]
async fn a_529_twice_then_success() {
    let overloaded = || error_step(529, "overloaded_error", "Overloaded");
    let server = Server::start(vec![overloaded(), overloaded(), ok(json!({"total": 2.0}))]).await;
    let client = builder(&server).build().unwrap();

    let reply = client.call(&prompt("doc")).await.unwrap();

    assert_eq!(
        reply.content,
        ReplyContent::ToolCall { name: Some("record_invoice".into()), input: json!({"total": 2.0}) }
    );
    assert_eq!(server.requests().len(), 3, "two retries by default");
    // Every retry resends the same request.
    let bodies = server.bodies();
    assert!(bodies.iter().all(|b| *b == bodies[0]));
}

#[tokio::test]
async fn a_500_on_every_try_gives_err_after_the_configured_retries() {
    let failing =
        || (0..8).map(|_| error_step(500, "api_error", "Internal server error")).collect::<Vec<_>>();

    let server = Server::start(failing()).await;
    let client = builder(&server).transport_retries(3).build().unwrap();
    let err = client.call(&prompt("doc")).await.unwrap_err();
    assert_eq!(server.requests().len(), 4, "1 request + 3 retries");
    match &err {
        Error::Api { status, error_type, message, request_id } => {
            assert_eq!(*status, 500);
            assert_eq!(error_type, "api_error");
            assert_eq!(message, "Internal server error");
            assert_eq!(request_id.as_deref(), Some("req_header_01"));
        }
        other => panic!("expected an API error, got {other:?}"),
    }
    checked(&err);

    let server = Server::start(failing()).await;
    let client = builder(&server).build().unwrap();
    assert!(client.call(&prompt("doc")).await.is_err());
    assert_eq!(server.requests().len(), 3, "default: 2 transport retries");

    let server = Server::start(failing()).await;
    let client = builder(&server).transport_retries(0).build().unwrap();
    assert!(client.call(&prompt("doc")).await.is_err());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn x_should_retry_is_obeyed_both_ways() {
    let server = Server::start(vec![
        reply(500, &[("x-should-retry", "false")], api_error("api_error", "do not retry")),
        ok(json!({"total": 1.0})),
    ])
    .await;
    let client = builder(&server).build().unwrap();
    let err = client.call(&prompt("doc")).await.unwrap_err();
    assert!(matches!(err, Error::Api { status: 500, .. }), "{err:?}");
    assert_eq!(server.requests().len(), 1);
    checked(&err);

    let server = Server::start(vec![
        reply(400, &[("x-should-retry", "true")], api_error("invalid_request_error", "transient")),
        ok(json!({"total": 1.0})),
    ])
    .await;
    let client = builder(&server).build().unwrap();
    client.call(&prompt("doc")).await.unwrap();
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_carry_type_message_and_request_id() {
    let cases = [
        (400, "invalid_request_error", "messages: text content blocks must be non-empty"),
        (401, "authentication_error", "invalid x-api-key"),
        (403, "permission_error", "Your API key does not have permission to use the specified resource."),
        (404, "not_found_error", "model: claude-nonexistent"),
        (413, "request_too_large", "Request exceeds the maximum allowed number of bytes."),
    ];
    for (status, kind, text) in cases {
        let server = Server::start(vec![error_step(status, kind, text), ok(json!({"total": 1.0}))]).await;
        let client = builder(&server).build().unwrap();

        let err = client.call(&prompt("doc")).await.unwrap_err();

        assert_eq!(server.requests().len(), 1, "{status} must not be retried");
        match &err {
            Error::Api { status: got, error_type, message, request_id } => {
                assert_eq!(*got, status);
                assert_eq!(error_type, kind);
                assert_eq!(message, text);
                assert_eq!(request_id.as_deref(), Some("req_header_01"));
            }
            other => panic!("{status}: expected an API error, got {other:?}"),
        }
        let shown = checked(&err);
        assert!(shown.contains(kind) && shown.contains(text) && shown.contains("req_header_01"), "{shown}");
    }
}

#[tokio::test]
async fn the_request_id_falls_back_to_the_body() {
    let server =
        Server::start(vec![reply(401, &[], api_error("authentication_error", "invalid x-api-key"))]).await;
    let err = builder(&server).build().unwrap().call(&prompt("doc")).await.unwrap_err();
    assert!(matches!(&err, Error::Api { request_id: Some(id), .. } if id == "req_body"), "{err:?}");
}

#[tokio::test]
async fn a_429_for_an_exhausted_spend_limit_is_not_retried() {
    let body = json!({
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "You have reached your monthly spend limit.",
            "details": {"error_code": "enforced_spend_limit_reached"}
        },
        "request_id": "req_spend"
    })
    .to_string();
    let server =
        Server::start(vec![reply(429, &[("retry-after", "1")], body), ok(json!({"total": 1.0}))]).await;
    let client = builder(&server).build().unwrap();

    let err = client.call(&prompt("doc")).await.unwrap_err();

    assert_eq!(server.requests().len(), 1);
    assert!(
        matches!(&err, Error::Api { status: 429, error_type, .. } if error_type == "rate_limit_error"),
        "{err:?}"
    );
    assert!(checked(&err).contains("spend limit"));
}

// ---------------------------------------------------------------------------
// Tool choice

#[tokio::test]
async fn a_rejected_forced_tool_choice_falls_back_to_auto_and_strict_and_is_remembered() {
    let server = Server::start(vec![
        error_step(
            400,
            "invalid_request_error",
            "tool_choice: forcing a tool call with {\"type\": \"any\"} is not supported for this model",
        ),
        ok(json!({"total": 1.0})),
        ok(json!({"total": 2.0})),
    ])
    .await;
    let client = builder(&server).transport_retries(0).build().unwrap();
    let shared = client.clone();
    assert!(client.forces_tool_choice());

    let first = client.call(&prompt("doc one")).await.unwrap();
    assert_eq!(
        first.content,
        ReplyContent::ToolCall { name: Some("record_invoice".into()), input: json!({"total": 1.0}) }
    );
    assert!(!client.forces_tool_choice());
    assert!(!shared.forces_tool_choice(), "clones share what the client learned");

    let second = shared.call(&prompt("doc two")).await.unwrap();
    assert_eq!(
        second.content,
        ReplyContent::ToolCall { name: Some("record_invoice".into()), input: json!({"total": 2.0}) }
    );

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 3, "the fallback resend is one extra request, not a transport retry");
    assert_eq!(bodies[0]["tool_choice"], forced());
    assert!(bodies[0]["tools"][0].get("strict").is_none());
    for body in &bodies[1..] {
        assert_eq!(body["tool_choice"], auto());
        assert_eq!(body["tools"][0]["strict"], true);
        let system = body["system"].as_str().unwrap();
        assert!(system.starts_with("You extract data. Answer only through the tool."), "{system}");
        // The caller's system already says it: not said twice.
        assert_eq!(system.matches("Answer only through the tool").count(), 1, "{system}");
        assert_no_sampling_parameters(body);
    }
    assert_eq!(bodies[1]["messages"][0]["content"][0]["source"]["data"], "doc one");
    assert_eq!(bodies[2]["messages"][0]["content"][0]["source"]["data"], "doc two");
}

#[tokio::test]
async fn a_400_about_something_else_does_not_switch_the_tool_choice() {
    let server = Server::start(vec![
        error_step(400, "invalid_request_error", "max_tokens: 999999 > 128000, the maximum allowed"),
        ok(json!({"total": 1.0})),
    ])
    .await;
    let client = builder(&server).build().unwrap();

    let err = client.call(&prompt("doc")).await.unwrap_err();

    assert!(matches!(err, Error::Api { status: 400, .. }), "{err:?}");
    assert_eq!(server.requests().len(), 1);
    assert!(client.forces_tool_choice());
}

#[tokio::test]
async fn models_documented_to_refuse_forced_tool_use_get_auto_and_strict_from_the_first_request() {
    for model in ["claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1"] {
        let server = Server::start(vec![ok(json!({"total": 1.0}))]).await;
        let client = builder(&server).model(model).build().unwrap();
        assert!(!client.forces_tool_choice(), "{model}");

        client.call(&prompt("doc")).await.unwrap();

        let bodies = server.bodies();
        assert_eq!(bodies.len(), 1, "{model}");
        let body = &bodies[0];
        assert_eq!(body["model"], model);
        assert_eq!(body["tool_choice"], auto(), "{model}");
        assert_eq!(body["tools"][0]["strict"], true, "{model}");
        assert!(body["system"].as_str().unwrap().contains("Answer only through the tool"));
        assert_no_sampling_parameters(body);
    }
}

// ---------------------------------------------------------------------------
// Replies

#[tokio::test]
async fn stop_reasons_and_text_map_to_reply_kinds() {
    let refusal = json!({
        "id": "msg_r", "type": "message", "role": "assistant", "model": DEFAULT_MODEL,
        "content": [{"type": "text", "text": "I can't help with that."}],
        "stop_reason": "refusal",
        "stop_details": {"type": "refusal", "category": "cyber", "explanation": "policy"},
        "usage": {"input_tokens": 5, "output_tokens": 0}
    })
    .to_string();
    let server = Server::start(vec![
        reply(200, &[], refusal),
        reply(200, &[], message(json!([{"type": "text", "text": "{\"total\": 1"}]), "max_tokens")),
        reply(200, &[], message(json!([]), "model_context_window_exceeded")),
        reply(
            200,
            &[],
            message(
                json!([
                    {"type": "thinking", "thinking": "", "signature": "sig"},
                    {"type": "text", "text": "The total is 5."}
                ]),
                "end_turn",
            ),
        ),
    ])
    .await;
    let client = builder(&server).build().unwrap();
    let p = prompt("doc");

    let refused = client.call(&p).await.unwrap();
    assert_eq!(
        refused.content,
        ReplyContent::Refusal {
            text: "I can't help with that.".into(),
            details: Some(json!({"type": "refusal", "category": "cyber", "explanation": "policy"})),
        }
    );
    assert_eq!(refused.usage, Usage::new(5, 0));
    assert_eq!(
        client.call(&p).await.unwrap().content,
        ReplyContent::Truncated { limit: Truncation::MaxTokens, partial: Some("{\"total\": 1".into()) }
    );
    assert_eq!(
        client.call(&p).await.unwrap().content,
        ReplyContent::Truncated { limit: Truncation::ContextWindow, partial: None }
    );
    assert_eq!(client.call(&p).await.unwrap().content, ReplyContent::Text("The total is 5.".into()));
    assert_eq!(server.requests().len(), 4);
}

// ---------------------------------------------------------------------------
// Broken transports

#[tokio::test]
async fn a_body_that_is_not_json_is_a_clear_error() {
    let server =
        Server::start(vec![reply(200, &[], "<html><body>Gateway says hi</body></html>".into())]).await;
    let client = builder(&server).build().unwrap();

    let err = client.call(&prompt("doc")).await.unwrap_err();

    assert!(matches!(err, Error::InvalidResponse(_)), "{err:?}");
    let shown = checked(&err);
    assert!(shown.contains("not a message") && shown.contains("<html><body>Gateway says hi"), "{shown}");
    assert_eq!(server.requests().len(), 1, "a well-delivered bad body is not retried");
}

#[tokio::test]
async fn an_error_status_with_a_non_json_body_keeps_the_status() {
    let server = Server::start(vec![reply(404, &[], "<h1>no such route</h1>".into())]).await;
    let err = builder(&server).build().unwrap().call(&prompt("doc")).await.unwrap_err();
    match &err {
        Error::Api { status: 404, error_type, message, .. } => {
            assert_eq!(error_type, "http_error");
            assert!(message.contains("<h1>no such route</h1>"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    checked(&err);
}

#[tokio::test]
async fn a_truncated_body_is_a_clear_transport_error() {
    let partial = tool_use(json!({"total": 1.0}));
    let partial = partial[..partial.len() / 2].to_owned();
    let server = Server::start(vec![Step::Truncated(partial.clone()), Step::Truncated(partial)]).await;
    let client = builder(&server).transport_retries(1).build().unwrap();

    let err = client.call(&prompt("doc")).await.unwrap_err();

    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    let shown = checked(&err);
    assert!(shown.contains("response body") && shown.contains("after 2 attempts"), "{shown}");
    assert_eq!(server.requests().len(), 2, "a cut-short body is retried like a dropped connection");
}

#[tokio::test]
async fn a_connection_reset_is_a_clear_transport_error_and_is_retried() {
    let server = Server::start(vec![Step::Reset]).await;
    let client = builder(&server).transport_retries(0).build().unwrap();
    let err = client.call(&prompt("doc")).await.unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    let shown = checked(&err);
    assert!(shown.contains(&server.base_url), "{shown}");
    assert_eq!(server.requests().len(), 1);

    let server = Server::start(vec![Step::Reset, ok(json!({"total": 3.0}))]).await;
    let client = builder(&server).build().unwrap();
    let reply = client.call(&prompt("doc")).await.unwrap();
    assert_eq!(
        reply.content,
        ReplyContent::ToolCall { name: Some("record_invoice".into()), input: json!({"total": 3.0}) }
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_server_slower_than_the_timeout_is_a_clear_timeout_error() {
    let slow = || Step::Slow(Duration::from_secs(3), Box::new(ok(json!({"total": 1.0}))));
    let server = Server::start(vec![slow(), slow()]).await;
    let client = builder(&server).timeout(Duration::from_millis(250)).transport_retries(1).build().unwrap();

    let started = Instant::now();
    let err = client.call(&prompt("doc")).await.unwrap_err();

    assert!(started.elapsed() < Duration::from_secs(2), "the client waited {:?}", started.elapsed());
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    let shown = checked(&err);
    assert!(shown.contains("timeout") && shown.contains("250ms"), "{shown}");
    assert_eq!(server.requests().len(), 2, "a timeout is retried");
}

#[tokio::test]
async fn an_unreachable_server_is_a_clear_transport_error() {
    // Bind then drop a listener so the port is closed.
    let port = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap().port();
    let client = Client::builder()
        .api_key(KEY)
        .base_url(format!("http://127.0.0.1:{port}"))
        .transport_retries(1)
        .retry_backoff(Duration::from_millis(1), Duration::from_millis(2))
        .build()
        .unwrap();
    let err = client.call(&prompt("doc")).await.unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    assert!(checked(&err).contains("could not connect"), "{err}");
}

// ---------------------------------------------------------------------------
// Secrecy and configuration

#[tokio::test]
async fn the_api_key_is_absent_from_debug_errors_and_tracing() {
    let client = Client::builder().api_key(KEY).build().unwrap();
    let shown = format!("{client:?} {client:#?}");
    assert!(!shown.contains(KEY) && !shown.contains("TEST-SECRET"), "{shown}");
    assert!(shown.contains("[redacted]") && shown.contains("claude-haiku-5-5"), "{shown}");
    let builder_shown = format!("{:?}", Client::builder().api_key(KEY));
    assert!(
        !builder_shown.contains("TEST-SECRET") && builder_shown.contains("[redacted]"),
        "{builder_shown}"
    );

    let log = Arc::new(Mutex::new(String::new()));
    let _guard = tracing::subscriber::set_default(Capture(log.clone()));
    // A callsite another test registered meanwhile may be cached as of no interest.
    tracing::callsite::rebuild_interest_cache();
    let server = Server::start(vec![
        error_step(529, "overloaded_error", "Overloaded"),
        error_step(400, "invalid_request_error", "tool_choice: forced tool use is not supported"),
        ok(json!({"total": 1.0})),
        error_step(401, "authentication_error", "invalid x-api-key"),
    ])
    .await;
    let client = builder(&server).build().unwrap();
    client.call(&prompt("doc")).await.unwrap();
    let err = client.call(&prompt("doc")).await.unwrap_err();
    checked(&err);

    let log = log.lock().unwrap().clone();
    assert!(log.contains("retrying the Messages API request"), "{log}");
    assert!(log.contains("refused a forced tool_choice"), "{log}");
    assert!(!log.contains(KEY) && !log.contains("TEST-SECRET"), "the key leaked into tracing: {log}");
    // And the key went where it belongs: the x-api-key header of every request.
    assert!(server.requests().iter().all(|r| r.header("x-api-key") == Some(KEY)));
}

#[test]
fn from_env_reads_the_key_base_url_and_model() {
    // The variables, read through `from_vars` (what `from_env` calls with
    // the process environment), so no test mutates the environment.
    let vars = std::cell::RefCell::new(std::collections::HashMap::<&str, &str>::new());
    let from_env = || Client::from_vars(|name| vars.borrow().get(name).map(|v| v.to_string()));
    let set_var = |name: &'static str, value: &'static str| {
        vars.borrow_mut().insert(name, value);
    };
    let err = from_env().unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");

    set_var("ANTHROPIC_API_KEY", KEY);
    let client = from_env().unwrap();
    assert_eq!(client.model(), DEFAULT_MODEL);
    assert_eq!(client.base_url(), "https://api.anthropic.com");
    assert_eq!(client.transport_retries(), 2);
    assert!(client.document_blocks(), "Anthropic's own API reads document blocks");

    set_var("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/proxy/");
    set_var("ANTHROPIC_MODEL", "claude-sonnet-5-5");
    let client = from_env().unwrap();
    assert_eq!(client.base_url(), "http://127.0.0.1:9/proxy");
    assert_eq!(client.model(), "claude-sonnet-5-5");
    assert!(!client.forces_tool_choice());
    assert!(!format!("{client:?}").contains("TEST-SECRET"));
    assert!(!client.document_blocks(), "another server gets the document as text");

    set_var("ANTHROPIC_DOCUMENT_BLOCKS", "true");
    assert!(from_env().unwrap().document_blocks(), "the variable overrides the rule");
    set_var("ANTHROPIC_DOCUMENT_BLOCKS", "yes");
    let err = from_env().unwrap_err();
    assert!(
        matches!(err, Error::Config(_)) && err.to_string().contains("ANTHROPIC_DOCUMENT_BLOCKS"),
        "{err}"
    );
    vars.borrow_mut().remove("ANTHROPIC_DOCUMENT_BLOCKS");
    assert_eq!(from_env().unwrap().mode(), Mode::Tool, "tool mode unless set");
    set_var("ANTHROPIC_MODE", "json_schema");
    assert_eq!(from_env().unwrap().mode(), Mode::JsonSchema);
    set_var("ANTHROPIC_MODE", "jsonschema");
    let err = from_env().unwrap_err().to_string();
    assert!(err.contains("ANTHROPIC_MODE") && err.contains("`tool` or `json_schema`"), "{err}");
}

#[test]
fn builder_errors_are_config_errors_without_the_key() {
    let err = Client::builder().api_key("   ").build().unwrap_err();
    assert!(matches!(err, Error::Config(_)) && err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
    let err = Client::builder().api_key(format!("{KEY}\u{7}")).build().unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    checked(&err);
    let err = Client::builder().api_key(KEY).base_url("not a url").build().unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    checked(&err);
}

#[test]
fn the_client_is_a_send_sync_model_usable_behind_dyn() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<Client>();
    let model: Box<dyn Model> = Box::new(Client::builder().api_key(KEY).build().unwrap());
    let prompt = prompt("doc");
    let future = model.call(&prompt);
    fn assert_send<T: Send>(_: &T) {}
    assert_send(&future);
}

#[tokio::test]
async fn a_body_past_the_limit_is_a_clear_error_and_not_read_whole() {
    // A valid message, but larger than the limit this client sets.
    let huge = tool_use(json!({"total": 1.0, "note": "x".repeat(64 * 1024)}));
    let server = Server::start(vec![reply(200, &[], huge)]).await;
    let client = builder(&server).body_limit(16 * 1024).build().unwrap();

    let err = client.call(&prompt("doc")).await.unwrap_err();

    assert!(matches!(err, Error::InvalidResponse(_)), "{err:?}");
    let shown = checked(&err);
    assert!(shown.contains("larger than the 16384-byte limit"), "{shown}");
    assert_eq!(server.requests().len(), 1, "an oversized body is not retried");
}

#[tokio::test]
async fn a_body_within_the_limit_is_read() {
    let server = Server::start(vec![ok(json!({"total": 1.0}))]).await;
    let client = builder(&server).body_limit(16 * 1024).build().unwrap();
    client.call(&prompt("doc")).await.unwrap();
}

#[test]
fn credentials_in_the_base_url_are_masked_in_errors_and_accessors() {
    let err =
        Client::builder().api_key(KEY).base_url("ftp://user:proxy-secret@127.0.0.1:9").build().unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    assert!(!err.to_string().contains("proxy-secret"), "{err}");
    assert!(err.to_string().contains("***@127.0.0.1:9"), "{err}");

    let client =
        Client::builder().api_key(KEY).base_url("http://user:proxy-secret@127.0.0.1:9/").build().unwrap();
    assert_eq!(client.base_url(), "http://***@127.0.0.1:9");
    assert!(!format!("{client:?}").contains("proxy-secret"));
}

#[tokio::test]
async fn a_connection_failure_never_shows_the_base_url_credentials() {
    // Nothing listens on port 9 of 127.0.0.1.
    let client = Client::builder()
        .api_key(KEY)
        .base_url("http://user:proxy-secret@127.0.0.1:9")
        .transport_retries(0)
        .build()
        .unwrap();
    let err = client.call(&prompt("doc")).await.unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    assert!(!err.to_string().contains("proxy-secret"), "{err}");
}

// ---------------------------------------------------------------------------
// Documents: text and PDF, as document blocks or as text

/// A small, valid one-page PDF whose page says `Invoice INV-7 Total 500.00`,
/// with a correct cross-reference table.
fn pdf_fixture() -> Vec<u8> {
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_string(),
        {
            let stream = "BT /F1 18 Tf 20 80 Td (Invoice INV-7 Total 500.00) Tj ET";
            format!("<< /Length {} >>\nstream\n{stream}\nendstream", stream.len())
        },
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
    ];
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = pdf.len();
    let mut table = format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for offset in offsets {
        let _ = writeln!(table, "{offset:010} 00000 n ");
    }
    pdf.extend_from_slice(table.as_bytes());
    pdf.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1)
            .as_bytes(),
    );
    pdf
}

fn document_prompt(document: Document) -> Prompt {
    let mut prompt = prompt("");
    prompt.document = document;
    prompt
}

#[tokio::test]
async fn a_pdf_travels_as_a_base64_document_block_with_its_title() {
    use base64::Engine as _;
    let pdf = pdf_fixture();
    let server = Server::start(vec![ok(json!({"total": 500.0}))]).await;
    let client = builder(&server).build().unwrap();
    let document =
        Document::pdf(pdf.clone()).with_title("March invoice").with_text_layer("Invoice INV-7 Total 500.00");

    client.call(&document_prompt(document)).await.unwrap();

    let body = server.requests()[0].json();
    let block = &body["messages"][0]["content"][0];
    assert_eq!(block["type"], "document");
    assert_eq!(block["source"]["type"], "base64");
    assert_eq!(block["source"]["media_type"], "application/pdf");
    let sent =
        base64::engine::general_purpose::STANDARD.decode(block["source"]["data"].as_str().unwrap()).unwrap();
    assert_eq!(sent, pdf, "the PDF's bytes, exactly");
    assert!(sent.starts_with(b"%PDF-1.4") && sent.ends_with(b"%%EOF\n"));
    assert_eq!(block["title"], "March invoice");
    assert_eq!(block["cache_control"], json!({"type": "ephemeral"}));
    // In document-block mode the text layer is not sent.
    assert!(!body.to_string().contains("Invoice INV-7 Total"), "{body}");
}

#[tokio::test]
async fn a_text_document_with_a_title_is_a_text_source_byte_for_byte() {
    let text = "Invoice \"7\"\r\n\tTotal:  5 €";
    let server = Server::start(vec![ok(json!({"total": 5.0}))]).await;
    let client = builder(&server).build().unwrap();
    client.call(&document_prompt(Document::text(text).with_title("Note"))).await.unwrap();
    let block = &server.requests()[0].json()["messages"][0]["content"][0];
    assert_eq!(block["source"], json!({"type": "text", "media_type": "text/plain", "data": text}));
    assert_eq!(block["title"], "Note");
}

#[tokio::test]
async fn another_server_gets_the_document_as_a_labelled_text_block_by_default() {
    let text = "Invoice INV-7\n```\nTotal 500.00";
    let server = Server::start(vec![ok(json!({"total": 500.0})), ok(json!({"total": 500.0}))]).await;
    // No document_blocks(..): a local base URL is not Anthropic's own API.
    let client = Client::builder().api_key(KEY).base_url(&server.base_url).build().unwrap();
    assert!(!client.document_blocks());

    client.call(&document_prompt(Document::text(text))).await.unwrap();
    let block = &server.requests()[0].json()["messages"][0]["content"][0];
    assert_eq!(block["type"], "text", "{block}");
    let sent = block["text"].as_str().unwrap();
    assert!(sent.starts_with("### DOCUMENT\n````\n"), "{sent}");
    assert!(sent.contains(&format!("\n{text}\n")), "the document byte for byte: {sent}");

    // A PDF goes as its text layer.
    let pdf = Document::pdf(pdf_fixture()).with_text_layer("Invoice INV-7 Total 500.00");
    client.call(&document_prompt(pdf)).await.unwrap();
    let block = &server.requests()[1].json()["messages"][0]["content"][0];
    assert_eq!(block["type"], "text");
    assert!(block["text"].as_str().unwrap().contains("\nInvoice INV-7 Total 500.00\n"), "{block}");
}

#[tokio::test]
async fn a_pdf_without_a_text_layer_cannot_go_as_text() {
    let server = Server::start(vec![]).await;
    let client = Client::builder().api_key(KEY).base_url(&server.base_url).build().unwrap();
    let err =
        client.call(&document_prompt(Document::pdf(pdf_fixture()).with_id("scan-7"))).await.unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    let shown = checked(&err);
    assert!(
        shown.contains("scan-7") && shown.contains("text layer") && shown.contains("Anthropic"),
        "{shown}"
    );
    assert!(server.requests().is_empty(), "nothing was sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_pauses_every_request_of_the_client_and_its_clones() {
    let server = Server::start(vec![
        reply(429, &[("retry-after-ms", "500")], api_error("rate_limit_error", "slow down")),
        ok(json!({"total": 1.0})),
        ok(json!({"total": 2.0})),
    ])
    .await;
    let client = builder(&server).build().unwrap();
    let other = client.clone();

    let started = Instant::now();
    let first = tokio::spawn(async move { client.call(&prompt("doc")).await });
    // Once the 429 has come back, a second task's request waits out the same pause.
    while server.requests().is_empty() {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    other.call(&prompt("doc")).await.unwrap();
    let second_done = started.elapsed();
    first.await.unwrap().unwrap();

    assert_eq!(server.requests().len(), 3);
    assert!(second_done >= Duration::from_millis(450), "the second task did not wait: {second_done:?}");
}
