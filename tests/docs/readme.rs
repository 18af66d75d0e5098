//! The README's claims, checked: the derived struct it shows produces exactly
//! the tool JSON it prints, and the feedback it prints is what `validate` says.
#![cfg(feature = "chrono")]

use crate::support::readme_invoice::Invoice;
use extract::Extractable;
use serde_json::{Value, json};

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

/// The fenced blocks of `language` in the README, in order.
fn blocks(language: &str) -> Vec<String> {
    let text = readme();
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("```{language}") {
            out.push(lines.by_ref().take_while(|l| l.trim() != "```").collect::<Vec<_>>().join("\n"));
        }
    }
    out
}

#[test]
fn the_readme_prints_the_tool_this_struct_derives() {
    let printed: Value = serde_json::from_str(&blocks("json")[0]).unwrap();
    assert_eq!(printed, serde_json::to_value(Invoice::tool()).unwrap());
}

#[test]
fn the_readme_prints_the_feedback_validate_gives() {
    let texts = blocks("text");
    let semantic = json!({"invoice_number": "INV-1", "issue_date": "2026-03-01", "due_date": "2026-02-01",
        "line_items": [{"description": "a", "amount": 150.0}, {"description": "b", "amount": -300.0}], "total": 500.0});
    assert_eq!(extract::validate::<Invoice>(&semantic, "").unwrap_err().to_string(), texts[0]);
    let structural =
        json!({"issue_date": "2026-03-01", "line_items": [{"description": "a"}], "total": "500"});
    assert_eq!(extract::validate::<Invoice>(&structural, "").unwrap_err().to_string(), texts[1]);
}
