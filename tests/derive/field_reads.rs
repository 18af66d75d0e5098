//! The derived code reads every field a model fills, so a field the program
//! itself never reads is not reported as dead code, whether or not the type
//! has checks, and whatever the fields are named (the reads are a pattern in
//! the type's description constant, next to its static `INFO`). This file
//! fails to compile, not just the test, if that stops holding.
#![deny(dead_code)]

use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// No checks and nothing nested: the derive writes no walk for it. Its
/// fields are named like the description's static and like a keyword.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[allow(non_snake_case)]
struct Line {
    label: String,
    amount: f64,
    INFO: Option<String>,
    r#type: Option<String>,
}

/// Checks and a nested type: the derive writes a walk.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(lines.amount) == total)]
struct Bill {
    number: String,
    lines: Vec<Line>,
    total: f64,
}

#[test]
fn fields_only_the_model_fills_are_read_by_the_derived_code() {
    let output = json!({
        "number": "B-1",
        "lines": [{ "label": "a", "amount": 1.5, "INFO": null, "type": "x" }],
        "total": 1.5,
    });
    assert!(extract::validate::<Bill>(&output, "").is_ok());
    let wrong = json!({ "number": "B-2", "lines": [], "total": 1.0 });
    assert!(extract::validate::<Bill>(&wrong, "").is_err());
}
