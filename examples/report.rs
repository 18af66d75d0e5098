//! A run report for twelve expense receipts, offline: a scripted model gives
//! some right answers at once, fixes a wrong sum on the retry, keeps
//! leaving out a department the receipts do not print (the dominant,
//! systematic failure), and once meets a receipt without a cost centre,
//! which goes to a human; the reviewer's fix shows beside that escalation,
//! with its quote. The statistics print as text; the report is written as
//! one HTML file, whose path is printed last.
//!
//! ```text
//! cargo run --example report                 # writes report.html in the temporary directory
//! cargo run --example report -- out.html     # writes out.html
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use extract::model::Reply;
use extract::report::Report;
use extract::testing::Scripted;
use extract::{Extractable, Extractor, Outcome, Retries, Sourced, Stats, Usage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Record one expense receipt exactly as it is printed.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_expense")]
#[check(sum(lines.amount) == total, tolerance = 0.01)]
struct Expense {
    /// The receipt number, with the line it was read from.
    receipt: Sourced<String>,
    /// Who paid.
    employee: String,
    /// The department the expense is booked to.
    department: String,
    /// The cost centre; null when the receipt has none (a human must assign it).
    #[extract(recoverable = false)]
    cost_centre: String,
    /// Every line of the receipt.
    lines: Vec<Line>,
    /// The total the receipt states.
    total: f64,
}

/// One line of a receipt.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Line {
    /// What was bought.
    item: String,
    /// Its amount.
    amount: f64,
}

/// What the scripted model does with one receipt.
#[derive(Clone, Copy)]
enum Script {
    /// A right answer at once.
    Right,
    /// A first line off by 10, fixed on the retry.
    WrongSum,
    /// No department, every time: the systematic failure.
    NoDepartment,
    /// No cost centre: not recoverable.
    NoCostCentre,
    /// A different mistake each attempt, until the budget runs out.
    Wandering,
}

fn receipt(n: u32, script: Script) -> String {
    let shop = ["Metro Cabs", "Blue Door Cafe", "City Taxis Ltd"][n as usize % 3];
    let cost_centre = match script {
        Script::NoCostCentre => String::new(),
        _ => format!("Cost centre: CC-{n}\n"),
    };
    format!("{shop}\nRECEIPT R-{n:04}\nEmployee: Ann Li\n{cost_centre}Taxi 18.50\nLunch 23.00\nTotal 41.50\n")
}

fn answer(n: u32) -> Value {
    json!({
        "receipt": {"value": format!("R-{n:04}"), "quote": format!("RECEIPT R-{n:04}")},
        "employee": "Ann Li",
        "department": "Sales",
        "cost_centre": format!("CC-{n}"),
        "lines": [{"item": "Taxi", "amount": 18.5}, {"item": "Lunch", "amount": 23.0}],
        "total": 41.5
    })
}

/// The replies for one receipt, each with the tokens a real model would report:
/// the first attempt writes the prompt cache, corrections read it.
fn replies(n: u32, script: Script) -> Vec<Reply> {
    let right = answer(n);
    let mut wrong_sum = answer(n);
    wrong_sum["lines"][0]["amount"] = json!(28.5);
    let mut no_department = answer(n);
    no_department["department"] = Value::Null;
    let mut no_cost_centre = answer(n);
    no_cost_centre["cost_centre"] = Value::Null;
    let mut total_as_text = answer(n);
    total_as_text["total"] = json!("41,50");
    let outputs = match script {
        Script::Right => vec![right],
        Script::WrongSum => vec![wrong_sum, right],
        Script::NoDepartment => vec![no_department.clone(), no_department],
        Script::NoCostCentre => vec![no_cost_centre],
        Script::Wandering => vec![wrong_sum, total_as_text, no_department],
    };
    let first = Usage::new(420, 180).with_cache(0, 1_450);
    let correction = Usage::new(610, 175).with_cache(1_450, 0);
    outputs
        .into_iter()
        .enumerate()
        .map(|(i, output)| Reply::tool_call(output).with_usage(if i == 0 { first } else { correction }))
        .collect()
}

fn main() -> ExitCode {
    let path = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("report.html"));
    let scripts = [
        ("march-001", Script::Right),
        ("march-002", Script::NoDepartment),
        ("march-003", Script::Right),
        ("march-004", Script::WrongSum),
        ("march-005", Script::NoDepartment),
        ("march-006", Script::Right),
        ("march-007", Script::NoCostCentre),
        ("march-008", Script::Wandering),
        ("march-009", Script::Right),
        ("march-010", Script::NoDepartment),
        ("march-011", Script::WrongSum),
        // A caller's id is shown as text, never as markup.
        ("fax <b>12</b>", Script::Right),
    ];
    let mut stats = Stats::new();
    let mut outcomes: Vec<(&str, Outcome<Expense>, String)> = Vec::new();
    for (n, (id, script)) in (1..).zip(scripts) {
        let extractor = Extractor::new(Scripted::new(replies(n, script)))
            .retries(Retries::new(2).expect("a budget of two retries is valid"));
        let outcome = match extractor.extract_blocking::<Expense>(receipt(n, script)) {
            Ok(outcome) => outcome,
            Err(error) => {
                eprintln!("{id}: {error}");
                return ExitCode::FAILURE;
            }
        };
        stats.record(&outcome);
        outcomes.push((id, outcome, receipt(n, script)));
    }
    println!("{stats}\n");

    // A reviewer assigns the cost centre the receipt does not print; the fix
    // goes through all three layers, and its quotes are shown beside the escalation.
    let (reviewed_id, escalated, document) = outcomes
        .iter()
        .find_map(|(id, outcome, document)| match outcome {
            Outcome::Escalated(e) if e.reason == extract::Reason::NotRecoverable => Some((*id, e, document)),
            _ => None,
        })
        .expect("one receipt has no cost centre");
    let reviewed = match extract::review::<Expense>(escalated, document, json!({"cost_centre": "CC-900"})) {
        Ok(reviewed) => reviewed,
        Err(violations) => {
            eprintln!("the reviewer's fix failed:\n{violations}");
            return ExitCode::FAILURE;
        }
    };

    let mut report = Report::new(&stats).title("Expense receipts, March: run report");
    for (id, outcome, _) in &outcomes {
        report = report.outcome(id, outcome);
    }
    report = report.sources(reviewed_id, reviewed.sources());
    if let Err(error) = std::fs::write(&path, report.html()) {
        eprintln!("cannot write {}: {error}", path.display());
        return ExitCode::FAILURE;
    }
    println!("{}", path.display());
    ExitCode::SUCCESS
}
