//! The invoices the prompt-cache test and benchmark extract: `items` line
//! items under a number, and the stand-in's answers to them: a first
//! answer with one amount wrong for every `wrong_every`-th invoice, then
//! the correction, whole or as the one-operation patch.

use extract::Extractable;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Record one invoice exactly as printed.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
pub struct Invoice {
    pub number: String,
    pub line_items: Vec<Line>,
    pub total: f64,
}

/// One billed line.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
pub struct Line {
    pub description: String,
    pub amount: f64,
}

fn amount(number: usize, i: usize) -> f64 {
    ((number * 7 + i * 13) % 900) as f64 + 10.0
}

/// Invoice `number`'s text and its right output.
pub fn invoice(number: usize, items: usize) -> (String, Value) {
    let mut text = format!("INVOICE INV-{number:04}\n");
    let mut lines = Vec::new();
    let mut total = 0.0;
    for i in 0..items {
        let description = format!("Ergonomic office chair, model {i:04}");
        text.push_str(&format!("{description}    {:.2}\n", amount(number, i)));
        total += amount(number, i);
        lines.push(json!({"description": description, "amount": amount(number, i)}));
    }
    text.push_str(&format!("TOTAL {total:.2}\n"));
    (text, json!({"number": format!("INV-{number:04}"), "line_items": lines, "total": total}))
}

/// The stand-in's answer to a request for an invoice of `items` items:
/// the first answer to every `wrong_every`-th invoice has its first amount
/// wrong; a correction (a request with more than the document in its
/// message) gets the right output, or the patch when it offers
/// `patch_output`.
pub fn answer(body: &Value, items: usize, wrong_every: usize) -> Value {
    let text = body.to_string();
    let at = text.find("INVOICE INV-").expect("an invoice in the request") + "INVOICE INV-".len();
    let number: usize = text[at..at + 4].parse().unwrap();
    let (_, right) = invoice(number, items);
    let correction = body["messages"][0]["content"].as_array().is_some_and(|blocks| blocks.len() > 1);
    if !correction && number.is_multiple_of(wrong_every) {
        let mut first = right;
        first["line_items"][0]["amount"] = json!(1.0);
        return first;
    }
    if correction && body["tools"][0]["name"] == "patch_output" {
        return json!({"patch": [{"op": "replace", "path": "/line_items/0/amount", "value": right["line_items"][0]["amount"]}]});
    }
    right
}
