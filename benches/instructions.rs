//! Instruction counts of validation against deserialization, for
//! `benches/instructions.sh`, which runs this binary under
//! `valgrind --tool=callgrind` (instruction counts repeat exactly, whatever
//! else the shared machine is doing, where wall-clock timings do not).
//!
//! `instructions MODE ITEMS CASE` builds the invoice output of
//! `benches/common` with ITEMS line items (CASE `valid`, `failing`, or
//! `mistyped`: every amount a string, so the structure layer reports ITEMS
//! violations), then does MODE once: `build` (nothing more), `deserialize`
//! or `validate`. `benches/hostile_scaling.sh` uses `mistyped` to show that
//! converting schema errors is linear in their number.

mod common;

use std::hint::black_box;

use common::{Invoice, output};
use extract::Extractable;
use serde::Deserialize;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [mode, items, case] = args.as_slice() else {
        eprintln!("usage: instructions build|deserialize|validate ITEMS valid|failing");
        std::process::exit(2);
    };
    let items: usize = items.parse().expect("ITEMS is a number");
    let mut value = output(items, case == "failing");
    if case == "mistyped" {
        for item in value["line_items"].as_array_mut().expect("line items") {
            item["amount"] = serde_json::Value::String("twelve".into());
        }
    }
    // The type's tool and validator are built once per process; build them
    // in every mode so the difference is the per-output work alone.
    let _ = Invoice::tool();
    match mode.as_str() {
        "build" => {}
        "deserialize" => {
            let _ = black_box(Invoice::deserialize(black_box(&value)));
        }
        "validate" => {
            let result = extract::validate::<Invoice>(black_box(&value), "");
            assert_eq!(result.is_ok(), case == "valid");
            if case == "mistyped" {
                assert_eq!(result.unwrap_err().len(), items, "one violation per mistyped amount");
            }
        }
        other => panic!("unknown mode {other}"),
    }
    drop(black_box(value));
}
