//! What a prefix of a streamed output decides (`extract::stream::judge`),
//! held to the whole output at every byte: a violation found on a prefix is
//! one the whole output has; a path marked complete has its final value and
//! no violation at or under it.

use extract::run::Segment;
use extract::stream::{PartialJson, judge};
use extract::{Extractable, FieldPath, Sourced};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

const DOCUMENT: &str = "Invoice INV-7 from Acme Ltd.\nWidgets 120.00\nBolts 30.50\nTotal 150.50";

/// An invoice with checks over its items and over the whole.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
#[check(due_day >= issue_day)]
struct Bill {
    number: Sourced<String>,
    issue_day: u32,
    due_day: u32,
    status: Status,
    line_items: Vec<Line>,
    total: f64,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[serde(rename_all = "snake_case")]
enum Status {
    Open,
    Paid,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
struct Line {
    description: String,
    amount: f64,
}

fn good() -> Value {
    json!({
        "number": {"value": "INV-7", "quote": "Invoice INV-7"},
        "issue_day": 3, "due_day": 17, "status": "open",
        "line_items": [{"description": "Widgets", "amount": 120.0}, {"description": "Bolts", "amount": 30.5}],
        "total": 150.5
    })
}

/// Outputs with one fault each, and the good one.
fn outputs() -> Vec<(&'static str, Value)> {
    let mut negative = good();
    negative["line_items"][0]["amount"] = json!(-120.0);
    let mut wrong_total = good();
    wrong_total["total"] = json!(999.0);
    let mut due_before = good();
    due_before["due_day"] = json!(1);
    let mut bad_quote = good();
    bad_quote["number"]["quote"] = json!("Invoice INV-9");
    let mut bad_status = good();
    bad_status["status"] = json!("void");
    let mut missing = good();
    missing["line_items"][1].as_object_mut().unwrap().remove("amount");
    vec![
        ("good", good()),
        ("negative", negative),
        ("wrong_total", wrong_total),
        ("due_before", due_before),
        ("bad_quote", bad_quote),
        ("bad_status", bad_status),
        ("missing", missing),
    ]
}

fn at<'v>(value: &'v Value, path: &FieldPath) -> Option<&'v Value> {
    path.segments().iter().try_fold(value, |v, s| match s {
        Segment::Key(k) => v.get(k.as_ref()),
        Segment::Index(i) => v.get(*i),
    })
}

#[test]
fn every_prefix_decides_only_what_the_whole_output_decides() {
    for (name, output) in outputs() {
        let text = serde_json::to_string_pretty(&output).unwrap();
        let whole = extract::validate::<Bill>(&output, DOCUMENT);
        let mut first_violation = None;
        let mut first_complete = None;
        for end in 0..=text.len() {
            let mut reader = PartialJson::new();
            reader.push_bytes(&text.as_bytes()[..end]).unwrap();
            let judged = judge::<Bill>(&reader, Some(DOCUMENT));
            let shown = reader.value();
            for violation in &judged.violations {
                let Err(final_violations) = &whole else {
                    panic!(
                        "{name}: a prefix of {end} bytes reports {violation} but the whole output is valid"
                    )
                };
                if final_violations[0].layer == violation.layer {
                    assert!(
                        final_violations.iter().any(|v| v.path == violation.path && v.code == violation.code),
                        "{name}: a prefix of {end} bytes reports {violation}, the whole output {final_violations:?}"
                    );
                }
                first_violation.get_or_insert(end);
            }
            for path in &judged.complete {
                assert_eq!(
                    at(&shown, path),
                    at(&output, path),
                    "{name}: `{path}` complete at {end} bytes changed"
                );
                if let Err(final_violations) = &whole {
                    assert!(
                        !final_violations.iter().any(|v| v.path.segments().starts_with(path.segments())),
                        "{name}: `{path}` complete at {end} bytes fails in the whole: {final_violations:?}"
                    );
                }
                first_complete.get_or_insert(end);
            }
        }
        match name {
            "good" => {
                assert!(whole.is_ok());
                assert!(first_violation.is_none());
                assert!(
                    first_complete.is_some_and(|end| end < text.len() / 2),
                    "{name}: nothing complete early"
                );
            }
            // A fault in the first half is seen before the output ends.
            _ => {
                assert!(whole.is_err(), "{name}");
                let seen = first_violation.unwrap_or_else(|| panic!("{name}: no prefix saw the fault"));
                assert!(seen < text.len(), "{name}: the fault was seen only at the end");
            }
        }
    }
}

#[test]
fn a_check_waits_for_every_field_it_reads_and_a_total_is_complete_only_with_its_items() {
    let text = serde_json::to_string(&good()).unwrap();
    let mut reader = PartialJson::new();
    let cut = text.find("\"total\"").unwrap();
    reader.push(&text[..cut]).unwrap();
    let judged = judge::<Bill>(&reader, Some(DOCUMENT));
    assert!(judged.judged, "{:?} {:?}", reader.finished(), judged);
    let complete: Vec<String> = judged.complete.iter().map(ToString::to_string).collect();
    // Both days are written: their check has run on them.
    assert!(complete.contains(&"issue_day".to_string()), "{complete:?}");
    assert!(
        complete.contains(&"line_items[0].amount".to_string()),
        "{complete:?} {:?} {judged:?}",
        reader.finished()
    );
    assert!(complete.contains(&"number".to_string()), "{complete:?}");
    // The sum check reads the total, not written yet: the items wait for it.
    assert!(!complete.contains(&"line_items".to_string()), "{complete:?}");

    // A negative amount is final once written, whatever follows.
    let mut negative = good();
    negative["line_items"][0]["amount"] = json!(-120.0);
    let text = serde_json::to_string(&negative).unwrap();
    let cut = text.find("\"Bolts\"").unwrap();
    let mut reader = PartialJson::new();
    reader.push(&text[..cut]).unwrap();
    let judged = judge::<Bill>(&reader, Some(DOCUMENT));
    assert_eq!(judged.violations.len(), 1, "{:?}", judged.violations);
    assert_eq!(judged.violations[0].path.to_string(), "line_items[0].amount");
}

/// Random invoices, each with or without a fault anywhere (a negative
/// amount, a wrong total, a due day before the issue day, a wrong quote, an
/// unknown status), cut at every byte.
#[test]
fn random_outputs_are_judged_soundly_at_every_byte() {
    use proptest::prelude::*;
    let line = (0usize..3, -500i64..50_000).prop_map(|(name, cents)| {
        let description = ["Widgets", "Bolts", "Nuts"][name];
        json!({"description": description, "amount": cents as f64 / 100.0})
    });
    let output = (
        proptest::collection::vec(line, 0..5),
        1u32..28,
        -2i32..20,
        prop_oneof![4 => Just("open"), 4 => Just("paid"), 1 => Just("void")],
        prop_oneof![4 => Just("Invoice INV-7"), 1 => Just("INV-9")],
        prop_oneof![4 => Just(0.0), 1 => Just(12.0)],
        any::<bool>(),
    )
        .prop_map(|(items, issue, later, status, quote, off, pretty)| {
            let due = issue as i32 + later;
            let sum: f64 = items.iter().map(|i| i["amount"].as_f64().unwrap()).sum();
            let output = json!({
                "number": {"value": "INV-7", "quote": quote},
                "issue_day": issue, "due_day": due, "status": status,
                "line_items": items, "total": ((sum + off) * 100.0).round() / 100.0
            });
            let text =
                if pretty { serde_json::to_string_pretty(&output) } else { serde_json::to_string(&output) };
            (output, text.unwrap())
        });
    let (valid, stopped_early) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    super::seeded_runner(96)
        .run(&output, |(output, text)| {
            let whole = extract::validate::<Bill>(&output, DOCUMENT);
            let mut seen_at = None;
            for end in 0..=text.len() {
                let mut reader = PartialJson::new();
                reader.push(&text[..end]).unwrap();
                let judged = judge::<Bill>(&reader, Some(DOCUMENT));
                if let Some(violation) = judged.violations.first() {
                    let Err(all) = &whole else {
                        panic!("{violation} on a prefix of a valid output:\n{text}")
                    };
                    if all[0].layer == violation.layer {
                        prop_assert!(
                            all.iter().any(|v| v.path == violation.path && v.code == violation.code)
                        );
                    }
                    seen_at.get_or_insert(end);
                }
                let shown = reader.value();
                for path in &judged.complete {
                    prop_assert_eq!(at(&shown, path), at(&output, path), "`{}` at {}:\n{}", path, end, text);
                    if let Err(all) = &whole {
                        prop_assert!(!all.iter().any(|v| v.path.segments().starts_with(path.segments())));
                    }
                }
            }
            if whole.is_ok() {
                valid.set(valid.get() + 1);
            } else if seen_at.is_some_and(|end| end < text.len()) {
                stopped_early.set(stopped_early.get() + 1);
            }
            Ok(())
        })
        .unwrap();
    // The generator covers both sides, and faults are seen before the end.
    let (valid, stopped_early) = (valid.get(), stopped_early.get());
    assert!(valid >= 5 && stopped_early >= 10, "valid {valid}, stopped early {stopped_early}");
}

/// A stream stopped early is a reply of its own kind: the run judges its
/// prefix again (so a replayed run decides the same), and in patch mode the
/// correction asks for every field, there being no whole output to patch.
#[test]
fn a_stopped_prefix_is_judged_again_and_corrected_in_full() {
    use extract::model::{Reply, ReplyContent};
    use extract::run::{Next, Run};
    use extract::{Corrections, Retries};

    let mut negative = good();
    negative["line_items"][0]["amount"] = json!(-120.0);
    let text = serde_json::to_string(&negative).unwrap();
    let partial = &text[..text.find("\"Bolts\"").unwrap()];

    let mut wrong_total = good();
    wrong_total["total"] = json!(999.0);
    let mut run = Run::<Bill>::for_type(DOCUMENT, Retries::new(3).unwrap()).corrections(Corrections::Patch);
    // A whole output first, so patch mode has a base to patch.
    let Next::Call(patch) = run.on_reply(Reply::tool_call(wrong_total)) else {
        panic!("a correction follows")
    };
    assert!(patch.asks_for_patch());
    let stopped = Reply::stopped(partial, "line_items[0].amount: check failed: amount >= 0");
    assert!(matches!(stopped.content, ReplyContent::Stopped { .. }));
    let Next::Call(full) = run.on_reply(stopped) else { panic!("a correction follows") };
    assert!(!full.asks_for_patch(), "a stopped attempt is corrected in full");
    let correction = full.correction.as_ref().unwrap();
    assert_eq!(correction.previous_output, partial);
    assert!(correction.violations.contains("line_items[0].amount"), "{}", correction.violations);
    assert!(correction.violations.contains("amount >= 0"), "{}", correction.violations);
    let chain = run.failed_attempts();
    assert_eq!(chain.len(), 2);
    assert_eq!(chain[1].violations.len(), 1);
    assert_eq!(chain[1].violations[0].path.to_string(), "line_items[0].amount");
    // The corrected whole answer is accepted.
    let Next::Done(outcome) = run.on_reply(Reply::tool_call(good())) else { panic!("done") };
    assert!(outcome.is_valid(), "{outcome:?}");
    assert_eq!(outcome.attempts(), 3);
}
