//! Whole extractions over HTTP: the derive, the retry runtime and the Claude
//! client against a real HTTP server on 127.0.0.1 that this file starts. The
//! server reads each request (head and body), records it and answers with the
//! next scripted response, one request per connection.

#![cfg(feature = "anthropic")]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use extract::anthropic::Client;
use extract::{Extractable, Extractor, Outcome, Retries, Usage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

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
// The server

struct Response {
    status: u16,
    body: String,
}

struct Server {
    base_url: String,
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Server {
    async fn start(script: Vec<Response>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let record = bodies.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, record.clone(), script.clone()));
            }
        });
        Server { base_url, bodies }
    }

    fn bodies(&self) -> Vec<Vec<u8>> {
        self.bodies.lock().unwrap().clone()
    }
}

async fn serve(
    mut stream: TcpStream,
    record: Arc<Mutex<Vec<Vec<u8>>>>,
    script: Arc<Mutex<VecDeque<Response>>>,
) {
    let Some(body) = read_body(&mut stream).await else { return };
    record.lock().unwrap().push(body);
    let next = script.lock().unwrap().pop_front();
    let Response { status, body } = next.unwrap_or(Response { status: 418, body: "{}".into() });
    let head = format!(
        "HTTP/1.1 {status} Scripted\r\ncontent-type: application/json\r\nrequest-id: req_test\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// The body of one HTTP/1.1 request with a `content-length`.
async fn read_body(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = buffer.split_off(head_end);
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        body.extend_from_slice(&chunk[..n]);
    }
    Some(body)
}

/// A 200 whose message calls `record_invoice` with `input` and spent `usage`.
fn tool_use(input: Value, usage: Usage) -> Response {
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
    Response { status: 200, body: body.to_string() }
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

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2, "one request per attempt, no transport retry");
    let first: Value = serde_json::from_slice(&bodies[0]).unwrap();
    let second: Value = serde_json::from_slice(&bodies[1]).unwrap();

    // The tool carries its cache marker and is the same in both requests.
    assert_eq!(second["tools"][0]["name"], "record_invoice");
    assert_eq!(second["tools"][0]["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(first["tools"], second["tools"]);

    let content = second["messages"][0]["content"].as_array().unwrap();
    let document = &content[0];
    assert_eq!(document["type"], "document");
    assert_eq!(document["source"]["data"].as_str().unwrap().as_bytes(), DOCUMENT.as_bytes());
    assert_eq!(document["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(document, &first["messages"][0]["content"][0], "the cached prefix is stable");

    let texts: Vec<&str> = content[1..].iter().filter_map(|b| b["text"].as_str()).collect();
    assert_eq!(texts.len(), 3, "{content:#?}");
    let failed_output = serde_json::to_string_pretty(&first_output()).unwrap();
    // Each correction block is labelled and fenced, as the prompt's text shows it.
    assert!(
        texts[0].ends_with(&format!("\n```\n{failed_output}\n```")),
        "the failed output, verbatim: {}",
        texts[0]
    );
    assert_eq!(
        texts[1],
        "### VALIDATION ERRORS (what was wrong with that answer)\n```\n- line_items: check failed: sum(line_items.amount) == total \
         (tolerance 0.01): sum(line_items.amount) = 450.00, total = 500.00\n```",
        "the exact error"
    );
    assert!(texts[2].contains("record_invoice"), "{}", texts[2]);
}

#[tokio::test]
async fn a_500_then_success_does_not_spend_a_validation_attempt() {
    let overloaded =
        json!({"type": "error", "error": {"type": "api_error", "message": "Internal server error"}});
    let server = Server::start(vec![
        Response { status: 500, body: overloaded.to_string() },
        tool_use(corrected_output(), Usage::new(1000, 80)),
    ])
    .await;

    let outcome = Extractor::new(client(&server)).extract::<Invoice>(DOCUMENT).await.unwrap();

    assert!(outcome.is_valid(), "{outcome:?}");
    assert_eq!(outcome.attempts(), 1, "a transport retry is not a validation attempt");
    assert_eq!(server.bodies().len(), 2, "the server saw the failed request and its retry");
    assert_eq!(server.bodies()[0], server.bodies()[1], "the retry resends the same request");
    assert_eq!(outcome.usage(), Usage::new(1000, 80));
}

#[tokio::test]
async fn a_transport_failure_after_an_attempt_keeps_the_attempt_and_its_tokens() {
    let unauthorized =
        json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}});
    let server = Server::start(vec![
        tool_use(first_output(), Usage::new(1000, 80)),
        Response { status: 401, body: unauthorized.to_string() },
    ])
    .await;

    let err = Extractor::new(client(&server)).extract::<Invoice>(DOCUMENT).await.unwrap_err();

    assert!(matches!(err.root(), extract::Error::Api { status: 401, .. }), "{err:?}");
    assert_eq!(err.attempts().len(), 1, "the failed attempt is kept");
    assert_eq!(err.attempts()[0].violations[0].code, "check_failed");
    assert_eq!(err.usage(), Usage::new(1000, 80), "the tokens it spent are reported");
    assert!(err.to_string().contains("1080 tokens"), "{err}");
}
