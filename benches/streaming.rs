//! Streaming, measured over recorded streams (issue 37): the labelled
//! corpus's right answers, each also with one fault seeded (a negative
//! amount on the first or the last line, a due date before the issue date,
//! a wrong total), each streamed in pieces of 1 to 24 bytes cut at random,
//! through `Extractor::stream` as a model's stream would arrive.
//!
//! - Correctness: with early stop off, every snapshot's complete path must
//!   have its final value and no violation at or under it in the whole
//!   (else a false complete); with early stop on, every violation that
//!   stopped an attempt must be one the whole has (else a false violation).
//! - Early stop: for the faults seeded in the first half of the output
//!   (the first line's amount, the due date), the output tokens paid before
//!   the stop against the whole answer's, and each attempt's outcome
//!   (failed, then valid) against `extract` on the same replies.
//! - Cost: wall time of a streamed extraction against `extract` of the same
//!   replies, in one run.
//!
//! `cargo bench --bench streaming --features chrono`

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use extract::model::{Chunk, ChunkStream, Model, ModelFuture, Prompt, Reply};
use extract::run::Segment;
use extract::{Event, Extractable, Extractor, FieldPath, Retries};
use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
#[check(due_date >= issue_date)]
struct Invoice {
    invoice_number: String,
    purchase_order: Option<String>,
    vendor: String,
    issue_date: NaiveDate,
    due_date: Option<NaiveDate>,
    line_items: Vec<LineItem>,
    total: f64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
struct LineItem {
    description: String,
    amount: f64,
}

/// Streams each reply's JSON text in the pieces it was recorded with.
struct Recorded {
    replies: Mutex<VecDeque<(Value, Vec<String>)>>,
}

impl Recorded {
    fn new(replies: Vec<(Value, Vec<String>)>) -> Recorded {
        Recorded { replies: Mutex::new(replies.into()) }
    }

    fn next(&self) -> (Value, Vec<String>) {
        self.replies.lock().unwrap().pop_front().expect("a recorded reply")
    }
}

impl Model for Recorded {
    fn call<'a>(&'a self, _prompt: &'a Prompt) -> ModelFuture<'a> {
        let (value, _) = self.next();
        Box::pin(async move { Ok(Reply::tool_call(value)) })
    }

    fn stream<'a>(&'a self, _prompt: &'a Prompt) -> ChunkStream<'a> {
        let (value, pieces) = self.next();
        let chunks = pieces.into_iter().map(Chunk::Output).chain([Chunk::Done(Reply::tool_call(value))]);
        Box::pin(futures_util::stream::iter(chunks.map(Ok)))
    }
}

/// `text` in pieces of 1 to 24 bytes, cut where `seed` says (never inside a character).
fn pieces(text: &str, seed: u64) -> Vec<String> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mut end = (start + 1 + (state % 24) as usize).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(text[start..end].to_string());
        start = end;
    }
    out
}

/// The labelled invoices this type accepts as they are: (document, right answer).
fn corpus() -> Vec<(String, Value)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/corpus");
    let mut cases: Vec<(String, Value)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| {
            let text = std::fs::read_to_string(path.with_extension("txt")).unwrap();
            (text, serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap())
        })
        .filter(|(text, good)| extract::validate::<Invoice>(good, text).is_ok())
        .collect();
    cases.sort_by(|a, b| a.0.cmp(&b.0));
    cases
}

#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    FirstAmount,
    DueBeforeIssue,
    LastAmount,
    Total,
}

impl Fault {
    const ALL: [Fault; 5] =
        [Fault::None, Fault::FirstAmount, Fault::DueBeforeIssue, Fault::LastAmount, Fault::Total];

    /// Seeded in the first half of the output: what early stop is for.
    fn early(self) -> bool {
        matches!(self, Fault::FirstAmount | Fault::DueBeforeIssue)
    }

    fn seeded(self, good: &Value) -> Option<Value> {
        let mut output = good.clone();
        let negate = |amount: &mut Value| *amount = json!(-amount.as_f64().unwrap());
        match self {
            Fault::None => {}
            Fault::FirstAmount => negate(&mut output["line_items"][0]["amount"]),
            Fault::LastAmount => {
                let last = output["line_items"].as_array().unwrap().len() - 1;
                negate(&mut output["line_items"][last]["amount"]);
            }
            Fault::DueBeforeIssue => {
                let issue: NaiveDate = output["issue_date"].as_str()?.parse().ok()?;
                output["due_date"].as_str()?;
                output["due_date"] = json!((issue - chrono::Days::new(5)).to_string());
            }
            Fault::Total => output["total"] = json!(output["total"].as_f64().unwrap() + 10.0),
        }
        Some(output)
    }
}

fn at<'v>(value: &'v Value, path: &FieldPath) -> Option<&'v Value> {
    path.segments().iter().try_fold(value, |value, segment| match segment {
        Segment::Key(key) => value.get(key.as_ref()),
        Segment::Index(index) => value.get(index),
    })
}

/// The (path, code) of every violation the whole output has.
fn whole_violations(output: &Value, text: &str) -> Vec<(FieldPath, String)> {
    match extract::validate::<Invoice>(output, text) {
        Ok(_) => Vec::new(),
        Err(violations) => violations.iter().map(|v| (v.path.clone(), v.code.to_string())).collect(),
    }
}

#[derive(Default)]
struct Tally {
    streams: usize,
    snapshots: usize,
    complete_marks: usize,
    false_completes: usize,
    stopped: usize,
    false_violations: usize,
    faulty_not_stopped: usize,
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let cases = corpus();
    let seeds = 5;
    let mut tally = Tally::default();
    let (mut early_paid, mut early_whole, mut early_streams, mut outcome_mismatches) =
        (0u64, 0u64, 0usize, 0usize);
    let (mut streamed_time, mut extract_time) = (Duration::ZERO, Duration::ZERO);

    for (case, (text, good)) in cases.iter().enumerate() {
        for fault in Fault::ALL {
            let Some(output) = fault.seeded(good) else { continue };
            let whole = whole_violations(&output, text);
            let json = output.to_string();
            for seed in 0..seeds {
                let recorded = pieces(&json, (case as u64) << 16 | (fault as u64) << 8 | seed);
                tally.streams += 1;

                // Early stop off: every snapshot held to the whole.
                let again = (good.clone(), pieces(&good.to_string(), seed));
                let model = Recorded::new(vec![(output.clone(), recorded.clone()), again.clone()]);
                let extractor = Extractor::new(model).retries(Retries::new(1).unwrap()).stop_early(false);
                let started = Instant::now();
                let mut events = extractor.stream::<Invoice>(text.as_str());
                // The attempt's output and its violations: the fault's, then (after a retry) the right one's.
                let (mut expected, mut violations) = (&output, whole.clone());
                while let Some(event) = events.next().await {
                    let snapshot = match event.unwrap() {
                        Event::Partial(snapshot) => snapshot,
                        Event::Retry { .. } => {
                            (expected, violations) = (good, Vec::new());
                            continue;
                        }
                        _ => continue,
                    };
                    tally.snapshots += 1;
                    for path in snapshot.complete() {
                        tally.complete_marks += 1;
                        let changed = at(snapshot.json(), path) != at(expected, path);
                        let fails =
                            violations.iter().any(|(at, _)| at.segments().starts_with(path.segments()));
                        if changed || fails {
                            tally.false_completes += 1;
                        }
                    }
                }
                streamed_time += started.elapsed();
                let started = Instant::now();
                let plain = Extractor::new(Recorded::new(vec![(output.clone(), Vec::new()), again.clone()]))
                    .retries(Retries::new(1).unwrap());
                plain.extract::<Invoice>(text.as_str()).await.unwrap();
                extract_time += started.elapsed();

                // Early stop on: what stopped an attempt, held to the whole;
                // then the right answer, as `extract` would get it.
                let replies = vec![(output.clone(), recorded.clone()), again];
                let extractor = Extractor::new(Recorded::new(replies)).retries(Retries::new(1).unwrap());
                let mut events = extractor.stream::<Invoice>(text.as_str());
                let mut outcome = None;
                while let Some(event) = events.next().await {
                    if let Event::Done(done) = event.unwrap() {
                        outcome = Some(done);
                    }
                }
                let outcome = outcome.unwrap();
                let valid = outcome.valid().expect("the right answer passes");
                let stopped = valid.failed_attempts().first();
                if let Some(stopped) = stopped {
                    tally.stopped += 1;
                    for v in stopped.violations.iter() {
                        if !whole.contains(&(v.path.clone(), v.code.to_string())) {
                            tally.false_violations += 1;
                        }
                    }
                } else if !whole.is_empty() {
                    tally.faulty_not_stopped += 1;
                }
                if fault.early() {
                    early_streams += 1;
                    early_paid += stopped.map_or(0, |s| s.usage.output_tokens);
                    early_whole += (json.len() as u64).div_ceil(4);
                    // `extract` on the same replies: the fault fails, the right answer passes.
                    let plain = Extractor::new(Recorded::new(vec![
                        (output.clone(), Vec::new()),
                        (good.clone(), Vec::new()),
                    ]))
                    .retries(Retries::new(1).unwrap());
                    let extracted = plain.extract::<Invoice>(text.as_str()).await.unwrap();
                    if extracted.is_valid() != outcome.is_valid()
                        || extracted.attempts() != outcome.attempts()
                    {
                        outcome_mismatches += 1;
                    }
                }
            }
        }
    }

    println!(
        "invoices: {}, streams: {} (pieces of 1 to 24 bytes, {seeds} cuts each)",
        cases.len(),
        tally.streams
    );
    println!(
        "early stop off: {} snapshots, {} complete marks, false completes: {}",
        tally.snapshots, tally.complete_marks, tally.false_completes
    );
    println!(
        "early stop on: {} attempts stopped, false violations: {}, faulty outputs read to the end: {}",
        tally.stopped, tally.false_violations, tally.faulty_not_stopped
    );
    println!(
        "faults in the first half: {early_streams} streams, output tokens paid {early_paid} of {early_whole} \
         ({:.1}% saved), outcomes unlike extract's: {outcome_mismatches}",
        100.0 * (1.0 - early_paid as f64 / early_whole as f64)
    );
    println!(
        "wall time, one run: streamed (early stop off) {:.1} ms per stream, extract {:.2} ms per extraction, ratio {:.1}",
        streamed_time.as_secs_f64() * 1e3 / tally.streams as f64,
        extract_time.as_secs_f64() * 1e3 / tally.streams as f64,
        streamed_time.as_secs_f64() / extract_time.as_secs_f64()
    );
}
