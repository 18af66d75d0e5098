//! Instruction counts of validation against deserialization, for
//! `benches/instructions.sh`, which runs this binary under
//! `valgrind --tool=callgrind` (instruction counts repeat exactly, whatever
//! else the shared machine is doing, where wall-clock timings do not).
//!
//! `instructions MODE ITEMS CASE` builds the invoice output of
//! `benches/validate.rs` with ITEMS line items (CASE `valid` or `failing`), then
//! does MODE once: `build` (nothing more), `deserialize` or `validate`.

use std::hint::black_box;

use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
struct Invoice {
    line_items: Vec<LineItem>,
    #[serde(rename = "total")]
    stated_total: f64,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
struct LineItem {
    description: String,
    amount: f64,
}

fn output(items: usize, failing: bool) -> Value {
    let line_items: Vec<Value> = (0..items)
        .map(|i| json!({"description": format!("Item {i}"), "amount": (i % 97) as f64 + 0.5}))
        .collect();
    let total: f64 = (0..items).map(|i| (i % 97) as f64 + 0.5).sum();
    json!({"line_items": line_items, "total": if failing { total + 1.0 } else { total }})
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [mode, items, case] = args.as_slice() else {
        eprintln!("usage: instructions build|deserialize|validate ITEMS valid|failing");
        std::process::exit(2);
    };
    let items: usize = items.parse().expect("ITEMS is a number");
    let value = output(items, case == "failing");
    // The type's tool and validator are built once per process; build them
    // in every mode so the difference is the per-output work alone.
    let _ = Invoice::tool();
    match mode.as_str() {
        "build" => {}
        "deserialize" => {
            black_box(Invoice::deserialize(black_box(&value)).unwrap());
        }
        "validate" => {
            let valid = extract::validate::<Invoice>(black_box(&value), "").is_ok();
            assert_eq!(valid, case == "valid");
        }
        other => panic!("unknown mode {other}"),
    }
    drop(black_box(value));
}
