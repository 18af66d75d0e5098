//! The OpenAI-compatible client against a stand-in Chat Completions server
//! on 127.0.0.1: the scripted server of `tests/support/server.rs`, which
//! reads each request (head and body), records it, and answers with the next
//! scripted response, status line, headers and body written by hand, one
//! request per connection.
//! Whole extractions run through `extract::Extractor` over a derived type.

// Shared with the facade's tests; each test crate uses part of it.
#[allow(dead_code)]
#[path = "../../tests/support/server.rs"]
mod server;
#[path = "../../tests/support/tracing_capture.rs"]
mod tracing_capture;

use crate::server as common;
use crate::tracing_capture::Capture;
use common::{Server, Step};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use extract::Tool;
use extract::model::ReplyContent;
use extract::model::{Model, Prompt};
use extract::openai::{Client, ClientBuilder, DEFAULT_BASE_URL, Mode, ToolChoice};
use extract::{Document, Error, Extractable, Extractor, Outcome, Reason, Retries, Usage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const KEY: &str = "sk-proj-TEST-SECRET-0123456789abcdef";

/// Record one invoice exactly as the document states it.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
struct Invoice {
    /// Invoice number exactly as printed.
    #[extract(recoverable = false)]
    invoice_number: String,
    /// The ordering department, when the invoice names one.
    department: Option<String>,
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

/// Quotes, a backslash, a fence, non-ASCII text and CRLF: all must arrive unchanged.
const DOCUMENT: &str = "INVOICE \"INV-7\"\r\nVendor: Zoë's Café \\ Bäckerei\n```\n\
                        Catering         150.00\nRoom hire        300.00\nService fee       50.00\n\
                        TOTAL            500.00 €\n";

fn first_output() -> Value {
    json!({
        "invoice_number": "INV-7",
        "department": null,
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
// The stand-in server: `common`'s, with the version path in its base URL, as
// the client expects, and a 500 the client does not retry past the script.

async fn start(script: Vec<Step>) -> Server {
    Server::start_at(script, "/v1", || {
        respond(500, &[("x-should-retry", "false")], error_body("server_error", "the script ran dry", None))
    })
    .await
}

// ---------------------------------------------------------------------------
// Script helpers: Chat Completions responses as the API writes them

fn respond(status: u16, headers: &[(&'static str, &str)], body: String) -> Step {
    common::reply(status, headers, body)
}

fn completion(message: Value, finish_reason: &str) -> String {
    json!({
        "id": "chatcmpl-01",
        "object": "chat.completion",
        "created": 1_767_225_600,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": 1000,
            "completion_tokens": 80,
            "total_tokens": 1080,
            "prompt_tokens_details": {"cached_tokens": 768, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0}
        }
    })
    .to_string()
}

/// A 200 whose one choice calls `record_invoice` with `arguments` (raw text).
fn call_text(arguments: &str, finish_reason: &str) -> Step {
    let message = json!({
        "role": "assistant",
        "content": null,
        "refusal": null,
        "tool_calls": [{"id": "call_01", "type": "function",
                        "function": {"name": "record_invoice", "arguments": arguments}}]
    });
    respond(200, &[("x-request-id", "req_ok")], completion(message, finish_reason))
}

fn call(input: &Value) -> Step {
    call_text(&input.to_string(), "tool_calls")
}

/// A 200 whose one choice answers with `content` and no call.
fn content(text: &str, finish_reason: &str) -> Step {
    let message = json!({"role": "assistant", "content": text, "refusal": null});
    respond(200, &[], completion(message, finish_reason))
}

fn error_body(kind: &str, message: &str, code: Option<&str>) -> String {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}}).to_string()
}

fn error_step(status: u16, kind: &str, message: &str) -> Step {
    respond(status, &[("x-request-id", "req_err_01")], error_body(kind, message, None))
}

fn builder(server: &Server) -> ClientBuilder {
    Client::builder()
        .api_key(KEY)
        .base_url(&server.base_url)
        .model("gpt-test")
        .timeout(Duration::from_secs(5))
        .retry_backoff(Duration::from_millis(5), Duration::from_millis(20))
}

fn tool() -> Tool {
    Tool {
        name: "record_invoice".into(),
        description: "Record one invoice.".into(),
        input_schema: json!({"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}),
        strict: false,
    }
}

fn prompt(document: impl Into<Document>) -> Prompt {
    Prompt::new(tool(), document)
}

/// The error's text, checked to carry no trace of the API key.
fn checked(err: &Error) -> String {
    let text = format!("{err} {err:?} {:?}", err.root());
    assert!(!text.contains(KEY) && !text.contains("TEST-SECRET"), "the API key leaked: {text}");
    err.to_string()
}

/// The text parts of the user message of a request body.
fn user_parts(body: &Value) -> Vec<String> {
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "one system and one user message: {body}");
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[1]["role"], "user");
    messages[1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|part| {
            assert_eq!(part["type"], "text");
            part["text"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// The document's part as it must arrive: heading, a fence longer than the
/// document's own ``` run, the document byte for byte, the fence.
fn document_part(document: &str) -> String {
    format!("### DOCUMENT\n````\n{document}\n````")
}

fn forced() -> Value {
    json!({"type": "function", "function": {"name": "record_invoice"}})
}

// ---------------------------------------------------------------------------
// Requests and replies

#[tokio::test]
async fn a_forced_call_is_answered_and_the_request_is_chat_completions_field_by_field() {
    let server = start(vec![call(&corrected_output())]).await;
    let client = builder(&server).build().unwrap();

    let reply = client.call(&Invoice::prompt_for(DOCUMENT)).await.unwrap();

    assert_eq!(
        reply.content,
        ReplyContent::ToolCallText {
            name: Some("record_invoice".into()),
            json: corrected_output().to_string()
        }
    );
    // prompt_tokens counts the cached ones: they are split out.
    assert_eq!(reply.usage, Usage::new(232, 80).with_cache(768, 0));
    assert_eq!(reply.usage.total(), 1080);
    // What the response said of itself, and the model the client names.
    assert_eq!(reply.id.as_deref(), Some("chatcmpl-01"));
    assert_eq!(reply.model.as_deref(), Some("gpt-test"));
    assert_eq!(reply.stop_reason.as_deref(), Some("tool_calls"));
    assert_eq!(client.name(), "gpt-test");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("x-api-key"), None);

    let body = request.json();
    let mut top: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
    top.sort_unstable();
    assert_eq!(top, ["messages", "model", "tool_choice", "tools"], "nothing else, max_tokens included");
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["tool_choice"], forced());
    let tool = Invoice::tool();
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {
            "name": "record_invoice",
            "description": tool.description,
            "parameters": tool.input_schema,
        }}]),
        "not OpenAI's own API: strict is off and the schema is the tool's own"
    );
    assert_eq!(body["messages"][0]["content"], Invoice::prompt_for(DOCUMENT).system);
    let parts = user_parts(&body);
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0], document_part(DOCUMENT));
    assert!(parts[1].contains("calling the tool `record_invoice`"), "{}", parts[1]);
    // The document travels once, in its own part.
    let raw = String::from_utf8(request.body.clone()).unwrap();
    assert_eq!(raw.matches("Room hire").count(), 1);
}

/// A prompt for `T` and `document`, as the run builds the first one.
trait PromptFor {
    fn prompt_for(document: &str) -> Prompt;
}

impl<T: Extractable> PromptFor for T {
    fn prompt_for(document: &str) -> Prompt {
        Prompt::new(T::tool(), document)
    }
}

#[tokio::test]
async fn a_correction_carries_the_document_the_previous_output_and_the_violations() {
    let server = start(vec![call(&first_output()), call(&corrected_output())]).await;
    let client = builder(&server).build().unwrap();

    let outcome = Extractor::new(client).retries(Retries::new(2).unwrap()).extract::<Invoice>(DOCUMENT).await;

    let valid = match outcome.unwrap() {
        Outcome::Valid(v) => v,
        Outcome::Escalated(e) => panic!("escalated: {e:?}"),
    };
    assert_eq!(valid.attempts(), 2);
    assert_eq!(valid.value().line_items.len(), 3);
    assert_eq!(valid.usage(), Usage::new(464, 160).with_cache(1536, 0), "summed over both attempts");

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    let (one, two) = (&bodies[0], &bodies[1]);
    assert_eq!(one["tools"], two["tools"]);
    assert_eq!(one["messages"][0], two["messages"][0], "the same system message");
    assert_eq!(two["tool_choice"], forced());
    let parts = user_parts(two);
    assert_eq!(parts.len(), 2, "{parts:#?}");
    assert_eq!(parts[0], document_part(DOCUMENT), "the same document, byte for byte");
    assert_eq!(parts[0], user_parts(one)[0]);
    // The correction's three blocks, each labelled and fenced, in one part.
    let previous = first_output().to_string();
    let correction = &parts[1];
    assert!(
        correction.starts_with(&format!("### PREVIOUS OUTPUT\n```\n{previous}\n```\n\n")),
        "{correction}"
    );
    assert!(correction.contains("\n\n### VALIDATION ERRORS\n```\n- line_items: "), "{correction}");
    assert!(
        correction.contains("sum(line_items.amount) = 450.00, total = 500.00"),
        "the exact violation: {correction}"
    );
    assert!(correction.contains("\n\n### INSTRUCTION\n```\n"), "{correction}");
    assert!(correction.contains("Call `record_invoice` again"), "{correction}");
}

#[tokio::test]
async fn unparsable_arguments_are_invalid_json_and_fixed_on_the_retry() {
    let cut = r#"{"invoice_number": "INV-7", "line_items": [{"description": "Catering", "amount": 150.0},"#;
    let server = start(vec![call_text(cut, "tool_calls"), call(&corrected_output())]).await;
    let client = builder(&server).build().unwrap();

    let outcome = Extractor::new(client).extract::<Invoice>(DOCUMENT).await.unwrap();

    let valid = outcome.valid().expect("valid on the retry");
    assert_eq!(valid.attempts(), 2);
    let failed = valid.failed_attempts();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].violations[0].code, "invalid_json");
    assert!(failed[0].violations[0].recoverable);
    // The model is shown its own text verbatim.
    let parts = user_parts(&server.bodies()[1]);
    assert!(parts[1].starts_with(&format!("### PREVIOUS OUTPUT\n```\n{cut}\n```\n\n")), "{}", parts[1]);
    assert!(parts[1].contains("not valid JSON"), "{}", parts[1]);
}

#[tokio::test]
async fn a_length_finish_is_truncated_and_escalates_at_once() {
    let cut = r#"{"invoice_number": "INV-7", "line_items": [{"description": "Cater"#;
    let server = start(vec![call_text(cut, "length"), call(&corrected_output())]).await;
    let client = builder(&server).max_tokens(64).build().unwrap();

    let outcome = Extractor::new(client).extract::<Invoice>(DOCUMENT).await.unwrap();

    let escalation = match outcome {
        Outcome::Escalated(e) => e,
        Outcome::Valid(v) => panic!("valid: {:?}", v.value()),
    };
    assert_eq!(escalation.reason, Reason::NotRecoverable);
    assert_eq!(escalation.error_chain.len(), 1);
    assert_eq!(escalation.error_chain[0].violations[0].code, "truncated");
    assert!(
        escalation.fix_hint.as_deref().is_some_and(|h| h.contains("max_tokens")),
        "{:?}",
        escalation.fix_hint
    );
    assert_eq!(escalation.last_output, Some(Value::String(cut.into())));
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 1, "no retry: more attempts cannot fix a cut-off reply");
    assert_eq!(bodies[0]["max_tokens"], 64, "another server reads max_tokens");
}

#[tokio::test]
async fn stop_with_tool_calls_is_a_call_and_text_alone_is_no_tool_call() {
    let text = "The invoice INV-7 totals 500.00.";
    let stop = respond(
        200,
        &[],
        completion(
            json!({"role": "assistant", "content": "Recording it.", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "record_invoice",
                                                             "arguments": corrected_output().to_string()}}
            ]}),
            "stop",
        ),
    );
    let server = start(vec![content(text, "stop"), stop]).await;
    let client = builder(&server).build().unwrap();

    let valid = Extractor::new(client).extract::<Invoice>(DOCUMENT).await.unwrap();

    let valid = valid.valid().expect("the stop-with-tool-calls reply is a valid call");
    assert_eq!(valid.attempts(), 2);
    assert_eq!(valid.failed_attempts()[0].violations[0].code, "no_tool_call");
    let parts = user_parts(&server.bodies()[1]);
    assert!(parts[1].contains(text), "the text is shown back: {}", parts[1]);
}

#[tokio::test]
async fn refusals_and_content_filters_escalate_as_refusals() {
    let refusal = respond(
        200,
        &[],
        completion(
            json!({"role": "assistant", "content": null, "refusal": "I can't help with that."}),
            "stop",
        ),
    );
    let server = start(vec![refusal, content("", "content_filter")]).await;
    let client = builder(&server).build().unwrap();
    let extractor = Extractor::new(client);

    for _ in 0..2 {
        let outcome = extractor.extract::<Invoice>(DOCUMENT).await.unwrap();
        let Outcome::Escalated(escalation) = outcome else { panic!("a refusal is never valid") };
        assert_eq!(escalation.reason, Reason::NotRecoverable);
        assert_eq!(escalation.error_chain[0].violations[0].code, "refusal");
    }
    assert_eq!(server.requests().len(), 2);
}

// ---------------------------------------------------------------------------
// Tool choice

#[tokio::test]
async fn a_refused_forced_choice_falls_back_to_required_then_auto_and_is_remembered() {
    let server = start(vec![
        error_step(
            400,
            "invalid_request_error",
            "Invalid value for 'tool_choice': named functions are not supported.",
        ),
        respond(
            400,
            &[],
            json!({"error": {"message": "Invalid value: 'required'.", "type": "invalid_request_error",
                             "param": "tool_choice", "code": null}})
            .to_string(),
        ),
        call(&corrected_output()),
        call(&corrected_output()),
    ])
    .await;
    let client = builder(&server).transport_retries(0).build().unwrap();
    let shared = client.clone();
    assert_eq!(client.tool_choice(), ToolChoice::Forced);

    let outcome = Extractor::new(client.clone()).extract::<Invoice>(DOCUMENT).await.unwrap();
    let valid = outcome.valid().expect("valid");
    assert_eq!(valid.attempts(), 1, "the fallback costs no validation attempt");
    assert!(valid.failed_attempts().is_empty());
    assert_eq!(client.tool_choice(), ToolChoice::Auto);
    assert_eq!(shared.tool_choice(), ToolChoice::Auto, "clones share what the client learned");

    let outcome = Extractor::new(shared).extract::<Invoice>(DOCUMENT).await.unwrap();
    assert_eq!(outcome.valid().expect("valid").attempts(), 1);

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 4);
    assert_eq!(bodies[0]["tool_choice"], forced());
    assert_eq!(bodies[1]["tool_choice"], "required");
    assert_eq!(bodies[2]["tool_choice"], "auto");
    assert_eq!(bodies[3]["tool_choice"], "auto", "remembered: the next extraction starts at auto");
    // At `auto` the system says to answer only through the tool: the
    // built-in instructions already do, so it is said once, not twice.
    let system = bodies[3]["messages"][0]["content"].as_str().unwrap();
    assert_eq!(system.matches("Answer only through the tool").count(), 1, "{system}");
    assert_eq!(
        bodies[1]["messages"][0], bodies[0]["messages"][0],
        "no note is added while the tool is required"
    );
    assert!(bodies.iter().all(|b| b["tools"] == bodies[0]["tools"]));
}

#[tokio::test]
async fn a_400_about_something_else_keeps_the_forced_choice() {
    let server = start(vec![
        error_step(400, "invalid_request_error", "'messages' must contain the word 'json' in some form"),
        call(&corrected_output()),
    ])
    .await;
    let client = builder(&server).build().unwrap();
    let err = client.call(&prompt("doc")).await.unwrap_err();
    assert!(matches!(err, Error::Api { status: 400, .. }), "{err:?}");
    assert_eq!(server.requests().len(), 1, "a 400 is not retried");
    assert_eq!(client.tool_choice(), ToolChoice::Forced);
}

// ---------------------------------------------------------------------------
// Transport

#[tokio::test]
async fn a_429_with_retry_after_ms_is_waited_out_without_spending_an_attempt() {
    let server = start(vec![
        respond(
            429,
            &[("retry-after-ms", "300"), ("retry-after", "30"), ("x-request-id", "req_429")],
            error_body(
                "requests",
                "Rate limit reached for requests per min (RPM).",
                Some("rate_limit_exceeded"),
            ),
        ),
        call(&corrected_output()),
    ])
    .await;
    let client = builder(&server).build().unwrap();

    let started = Instant::now();
    let outcome = Extractor::new(client).retries(Retries::new(1).unwrap()).extract::<Invoice>(DOCUMENT).await;
    let waited = started.elapsed();

    let valid = outcome.unwrap();
    assert_eq!(valid.valid().expect("valid").attempts(), 1, "the 429 spent no validation attempt");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body, "the same request, resent");
    // The backoff is 5 ms here and retry-after says 30 s: the wait is retry-after-ms.
    assert!(waited >= Duration::from_millis(290) && waited < Duration::from_secs(10), "{waited:?}");
}

#[tokio::test]
async fn a_429_for_an_exhausted_quota_is_not_retried() {
    let server = start(vec![
        respond(
            429,
            &[("retry-after", "1")],
            error_body("insufficient_quota", "You exceeded your current quota.", Some("insufficient_quota")),
        ),
        call(&corrected_output()),
    ])
    .await;
    let err = builder(&server).build().unwrap().call(&prompt("doc")).await.unwrap_err();
    assert_eq!(server.requests().len(), 1);
    assert!(
        matches!(&err, Error::Api { status: 429, error_type, .. } if error_type == "insufficient_quota"),
        "{err:?}"
    );
    assert!(checked(&err).contains("current quota"));
}

#[tokio::test]
async fn a_401_fails_at_once_with_a_clear_message_and_no_key() {
    let message = "Incorrect API key provided: sk-proj-****cdef. You can find your API key at https://platform.openai.com/account/api-keys.";
    let server = start(vec![
        respond(
            401,
            &[("x-request-id", "req_401")],
            error_body("invalid_request_error", message, Some("invalid_api_key")),
        ),
        call(&corrected_output()),
    ])
    .await;
    let client = builder(&server).build().unwrap();

    let err = Extractor::new(client).extract::<Invoice>(DOCUMENT).await.unwrap_err();

    assert_eq!(server.requests().len(), 1, "a 401 is neither retried nor a validation attempt");
    match err.root() {
        Error::Api { status, error_type, message: got, request_id } => {
            assert_eq!(*status, 401);
            assert_eq!(error_type, "invalid_request_error");
            assert!(got.starts_with(message) && got.contains("check OPENAI_API_KEY"), "{got}");
            assert_eq!(request_id.as_deref(), Some("req_401"));
        }
        other => panic!("expected an API error, got {other:?}"),
    }
    let shown = checked(&err);
    assert!(shown.contains("401") && shown.contains("req_401"), "{shown}");
}

#[tokio::test]
async fn a_404_and_a_401_without_a_key_say_what_to_check() {
    let server = start(vec![
        respond(404, &[], "404 page not found".into()),
        error_step(401, "invalid_request_error", "You didn't provide an API key."),
    ])
    .await;
    let client = Client::builder().base_url(&server.base_url).model("llama3").build().unwrap();

    let err = client.call(&prompt("doc")).await.unwrap_err();
    let shown = checked(&err);
    assert!(matches!(err, Error::Api { status: 404, .. }), "{err:?}");
    assert!(shown.contains("404 page not found") && shown.contains("/v1/chat/completions"), "{shown}");
    assert!(shown.contains("OPENAI_BASE_URL") && shown.contains("`llama3`"), "{shown}");

    let err = client.call(&prompt("doc")).await.unwrap_err();
    assert!(checked(&err).contains("no API key was sent"), "{err}");
    assert_eq!(server.requests().len(), 2);
    assert!(server.requests().iter().all(|r| r.header("authorization").is_none()), "no key, no header");
}

#[tokio::test]
async fn a_body_past_the_limit_is_a_clear_error() {
    let huge = json!({"total": 1.0, "note": "x".repeat(64 * 1024)});
    let server = start(vec![call(&huge)]).await;
    let client = builder(&server).body_limit(16 * 1024).build().unwrap();
    let err = client.call(&prompt("doc")).await.unwrap_err();
    assert!(matches!(err, Error::InvalidResponse(_)), "{err:?}");
    assert!(checked(&err).contains("larger than the 16384-byte limit"), "{err}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_body_that_is_not_a_completion_is_a_clear_error() {
    let server = start(vec![respond(200, &[], "<html>Gateway says hi</html>".into())]).await;
    let err = builder(&server).build().unwrap().call(&prompt("doc")).await.unwrap_err();
    assert!(matches!(err, Error::InvalidResponse(_)), "{err:?}");
    assert!(checked(&err).contains("not a chat completion") && err.to_string().contains("Gateway says hi"));
}

// ---------------------------------------------------------------------------
// Secrecy and configuration

#[tokio::test]
async fn the_key_is_absent_from_every_debug_error_and_trace() {
    let client = Client::builder().api_key(KEY).model("gpt-test").build().unwrap();
    let shown = format!("{client:?} {client:#?}");
    assert!(!shown.contains(KEY) && !shown.contains("TEST-SECRET"), "{shown}");
    assert!(shown.contains("[redacted]") && shown.contains("api.openai.com/v1/chat/completions"), "{shown}");
    let builder_shown = format!("{:?} {:#?}", Client::builder().api_key(KEY), builder_for_debug());
    assert!(
        !builder_shown.contains("TEST-SECRET") && builder_shown.contains("[redacted]"),
        "{builder_shown}"
    );
    assert!(
        !builder_shown.contains("proxy-secret") && builder_shown.contains("***@127.0.0.1:9"),
        "{builder_shown}"
    );

    let log = Arc::new(Mutex::new(String::new()));
    let _guard = tracing::subscriber::set_default(Capture(log.clone()));
    // A callsite another test registered meanwhile may be cached as of no interest.
    tracing::callsite::rebuild_interest_cache();
    let server = start(vec![
        error_step(503, "server_error", "The server is overloaded."),
        error_step(400, "invalid_request_error", "tool_choice: named functions are not supported"),
        call(&json!({"total": 1.0})),
        error_step(403, "invalid_request_error", "Project does not have access to model gpt-test"),
    ])
    .await;
    let client = builder(&server).build().unwrap();
    client.call(&prompt("doc")).await.unwrap();
    let err = client.call(&prompt("doc")).await.unwrap_err();
    assert!(checked(&err).contains("may not have access to the model `gpt-test`"), "{err}");

    let log = log.lock().unwrap().clone();
    assert!(log.contains("retrying the Chat Completions API request"), "{log}");
    assert!(log.contains("refused the tool_choice"), "{log}");
    assert!(!log.contains(KEY) && !log.contains("TEST-SECRET"), "the key leaked into tracing: {log}");
    // And the key went where it belongs: the bearer token of every request.
    let bearer = format!("Bearer {KEY}");
    assert!(server.requests().iter().all(|r| r.header("authorization") == Some(bearer.as_str())));

    // Configuration errors never show it either.
    let err = Client::builder().api_key(format!("{KEY}\u{7}")).model("m").build().unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    checked(&err);
    let err = Client::builder().api_key(KEY).model("m").base_url("not a url").build().unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    checked(&err);
}

fn builder_for_debug() -> ClientBuilder {
    Client::builder().api_key(KEY).base_url("http://user:proxy-secret@127.0.0.1:9/v1").model("m")
}

#[test]
fn from_env_reads_the_key_base_url_model_and_strict() {
    // The variables, read through `from_vars` (what `from_env` calls with
    // the process environment), so no test mutates the environment.
    let vars = std::cell::RefCell::new(std::collections::HashMap::<&str, &str>::new());
    let builder_from_env = || ClientBuilder::from_vars(|name| vars.borrow().get(name).map(|v| v.to_string()));
    let from_env = || builder_from_env()?.build();
    let set_var = |name: &'static str, value: &'static str| {
        vars.borrow_mut().insert(name, value);
    };
    let err = from_env().unwrap_err();
    assert!(matches!(err, Error::Config(_)) && err.to_string().contains("OPENAI_MODEL"), "{err}");
    set_var("OPENAI_MODEL", "gpt-test");
    let err = from_env().unwrap_err();
    assert!(
        matches!(err, Error::Config(_)) && err.to_string().contains("OPENAI_API_KEY"),
        "OpenAI's own API needs a key: {err}"
    );

    set_var("OPENAI_API_KEY", KEY);
    let client = from_env().unwrap();
    assert_eq!(client.base_url(), DEFAULT_BASE_URL);
    assert_eq!(client.model(), "gpt-test");
    assert!(client.strict(), "strict on for OpenAI's own API");
    assert_eq!(client.mode(), Mode::Tool);
    assert_eq!(client.transport_retries(), 2);
    assert_eq!(client.max_tokens(), None);
    assert!(!format!("{client:?}").contains("TEST-SECRET"));

    // A local server: no key needed, strict off unless asked for.
    vars.borrow_mut().remove("OPENAI_API_KEY");
    set_var("OPENAI_BASE_URL", "http://localhost:11434/v1/");
    let client = from_env().unwrap();
    assert_eq!(client.base_url(), "http://localhost:11434/v1");
    assert!(!client.strict());
    set_var("OPENAI_STRICT", "true");
    assert!(from_env().unwrap().strict(), "the variable overrides the rule");
    let builder = builder_from_env().unwrap().mode(Mode::JsonSchema);
    assert_eq!(builder.build().unwrap().mode(), Mode::JsonSchema);
    set_var("OPENAI_STRICT", "yes");
    let err = from_env().unwrap_err();
    assert!(matches!(err, Error::Config(_)) && err.to_string().contains("OPENAI_STRICT"), "{err}");
}

#[test]
fn the_client_is_a_send_sync_model_usable_behind_dyn() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<Client>();
    let model: Box<dyn Model> =
        Box::new(Client::builder().base_url("http://127.0.0.1:9/v1").model("m").build().unwrap());
    let prompt = prompt("doc");
    let future = model.call(&prompt);
    fn assert_send<T: Send>(_: &T) {}
    assert_send(&future);
}

// ---------------------------------------------------------------------------
// Strict mode and the response format

#[tokio::test]
async fn strict_sends_the_strict_schema_with_every_property_required() {
    let server = start(vec![call(&corrected_output())]).await;
    let client = builder(&server).strict(true).build().unwrap();
    client.call(&Invoice::prompt_for(DOCUMENT)).await.unwrap();

    let function = &server.bodies()[0]["tools"][0]["function"];
    assert_eq!(function["strict"], true);
    let schema = &function["parameters"];
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["invoice_number", "department", "line_items", "total"]));
    assert_eq!(
        schema["properties"]["department"]["type"],
        json!(["string", "null"]),
        "optional means nullable"
    );
    assert!(schema.get("$schema").is_none());
}

#[tokio::test]
async fn the_response_format_mode_runs_end_to_end_with_a_correction() {
    let server = start(vec![
        content(&first_output().to_string(), "stop"),
        content("{\"invoice_number\": \"INV-7\", \"line_items\": [", "stop"),
        content(&serde_json::to_string_pretty(&corrected_output()).unwrap(), "stop"),
    ])
    .await;
    let client = builder(&server).mode(Mode::JsonSchema).strict(true).build().unwrap();

    let outcome = Extractor::new(client).retries(Retries::new(2).unwrap()).extract::<Invoice>(DOCUMENT).await;

    let valid = match outcome.unwrap() {
        Outcome::Valid(v) => v,
        Outcome::Escalated(e) => panic!("escalated: {e:?}"),
    };
    assert_eq!(valid.attempts(), 3);
    let codes: Vec<_> = valid.failed_attempts().iter().map(|f| f.violations[0].code.clone()).collect();
    assert_eq!(codes, ["check_failed", "invalid_json"]);
    assert_eq!(valid.value().stated_total, 500.0);

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 3);
    for body in &bodies {
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none(), "{body}");
        let format = &body["response_format"];
        assert_eq!(format["type"], "json_schema");
        assert_eq!(format["json_schema"]["name"], "record_invoice");
        assert_eq!(format["json_schema"]["strict"], true);
        assert_eq!(format["json_schema"]["description"], Invoice::tool().description);
        assert_eq!(format["json_schema"]["schema"]["additionalProperties"], false);
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains("No tool is available in this conversation"), "{system}");
    }
    let first = user_parts(&bodies[0]);
    assert!(first[1].contains("answer with the input object of `record_invoice` as JSON"), "{}", first[1]);
    let second = user_parts(&bodies[1]);
    assert_eq!(second[0], document_part(DOCUMENT));
    assert!(second[1].contains(&first_output().to_string()), "{}", second[1]);
    assert!(second[1].contains("sum(line_items.amount) = 450.00, total = 500.00"), "{}", second[1]);
    let third = user_parts(&bodies[2]);
    assert!(
        third[1].contains("{\"invoice_number\": \"INV-7\", \"line_items\": ["),
        "raw text shown back: {}",
        third[1]
    );
    assert!(third[1].contains("not valid JSON"), "{}", third[1]);
}

// ---------------------------------------------------------------------------
// Documents

#[tokio::test]
async fn a_pdf_sends_its_text_layer_with_its_title_and_one_without_is_a_config_error() {
    let server = start(vec![call(&json!({"total": 500.0}))]).await;
    let client = builder(&server).build().unwrap();
    let pdf = Document::pdf(b"%PDF-1.4 not really".to_vec())
        .with_title("March invoice")
        .with_text_layer("Invoice INV-7 Total 500.00");

    client.call(&prompt(pdf)).await.unwrap();
    let parts = user_parts(&server.bodies()[0]);
    assert_eq!(parts[0], "### DOCUMENT: March invoice\n```\nInvoice INV-7 Total 500.00\n```");
    assert!(!server.requests()[0].body.windows(8).any(|w| w == b"%PDF-1.4"), "the bytes are not sent");

    let err = client.call(&prompt(Document::pdf(b"%PDF-1.4".to_vec()).with_id("scan-7"))).await.unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    let shown = checked(&err);
    assert!(shown.contains("scan-7") && shown.contains("text layer") && shown.contains("OpenAI"), "{shown}");
    assert_eq!(server.requests().len(), 1, "nothing was sent for it");
}
