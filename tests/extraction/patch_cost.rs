//! What a correction costs, full against patch: invoices of 10, 100 and
//! 1,000 line items with one item wrong or missing, a stand-in of the
//! Messages API on 127.0.0.1 that answers the correction with the full
//! object (`Corrections::Full`) or with the minimal patch
//! (`Corrections::Patch`). The figures are the bytes of the correction's
//! output (the tool input the model writes: what its output tokens pay for)
//! and of the correction's request body.
//! `cargo test --all-features --test extraction patch_cost -- --nocapture`
//! prints the table of `benches/README.md`; the bound holds the target
//! (the patch's output at most 15% of the full one at 100 items).

#![cfg(feature = "anthropic")]

use std::time::Duration;

use extract::anthropic::Client;
use extract::{Corrections, Extractable, Extractor, Outcome, Retries};
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
struct Line {
    description: String,
    amount: f64,
}

fn item(i: usize) -> Value {
    json!({"description": format!("Ergonomic office chair, model {i:04}"), "amount": 100.0 + i as f64})
}

fn invoice(n: usize) -> (String, Value) {
    let mut text = String::from("INVOICE INV-2026-0042\n");
    let mut total = 0.0;
    for i in 0..n {
        text.push_str(&format!("Ergonomic office chair, model {i:04}    {:.2}\n", 100.0 + i as f64));
        total += 100.0 + i as f64;
    }
    text.push_str(&format!("TOTAL {total:.2}\n"));
    let items: Vec<Value> = (0..n).map(item).collect();
    (text, json!({"number": "INV-2026-0042", "line_items": items, "total": total}))
}

#[derive(Clone, Copy, Debug)]
enum Fault {
    Wrong,
    Missing,
}

/// The first, faulty output, and the minimal patch that fixes it.
fn faulty(right: &Value, fault: Fault, n: usize) -> (Value, Value) {
    let i = n / 2;
    let mut first = right.clone();
    let patch = match fault {
        Fault::Wrong => {
            first["line_items"][i]["amount"] = json!(1.0);
            json!({"patch": [{"op": "replace", "path": format!("/line_items/{i}/amount"), "value": right["line_items"][i]["amount"]}]})
        }
        Fault::Missing => {
            first["line_items"].as_array_mut().unwrap().remove(i);
            json!({"patch": [{"op": "add", "path": format!("/line_items/{i}"), "value": item(i)}]})
        }
    };
    (first, patch)
}

fn tool_use(name: &str, input: &Value) -> Step {
    let body = json!({
        "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-haiku-5-5",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": input}],
        "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}
    });
    common::reply(200, &[], body.to_string())
}

/// (output bytes, request bytes) of the correction.
async fn correction(n: usize, fault: Fault, corrections: Corrections) -> (usize, usize) {
    let (document, right) = invoice(n);
    let (first, patch) = faulty(&right, fault, n);
    let (name, answer) = match corrections {
        Corrections::Full => ("record_invoice", right.clone()),
        Corrections::Patch => ("patch_output", patch),
    };
    let server = Server::start(vec![tool_use("record_invoice", &first), tool_use(name, &answer)]).await;
    let client = Client::builder()
        .api_key("test-key")
        .base_url(&server.base_url)
        .document_blocks(true)
        .max_tokens(32_000)
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let outcome = Extractor::new(client)
        .retries(Retries::new(1).unwrap())
        .corrections(corrections)
        .extract::<Invoice>(document.as_str())
        .await
        .unwrap();
    let Outcome::Valid(valid) = outcome else { panic!("{n} {fault:?} {corrections:?}: {outcome:?}") };
    assert_eq!(serde_json::to_value(valid.value()).unwrap(), right);
    let bodies = server.raw_bodies();
    (answer.to_string().len(), bodies[1].len())
}

#[tokio::test]
async fn a_patch_correction_costs_a_fraction_of_a_full_one() {
    eprintln!("| items | fault | output full | output patch | patch/full | request full | request patch |");
    eprintln!("|---:|---|---:|---:|---:|---:|---:|");
    for n in [10, 100, 1000] {
        for fault in [Fault::Wrong, Fault::Missing] {
            let (full_out, full_req) = correction(n, fault, Corrections::Full).await;
            let (patch_out, patch_req) = correction(n, fault, Corrections::Patch).await;
            let ratio = patch_out as f64 / full_out as f64;
            eprintln!(
                "| {n} | {} | {full_out} | {patch_out} | {:.1}% | {full_req} | {patch_req} |",
                format!("{fault:?}").to_lowercase(),
                ratio * 100.0
            );
            if n >= 100 {
                assert!(
                    ratio <= 0.15,
                    "{n} items, {fault:?}: the patch is {:.1}% of the full output",
                    ratio * 100.0
                );
            }
        }
    }
}
