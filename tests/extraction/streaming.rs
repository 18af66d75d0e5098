//! Streamed extractions (`Extractor::stream`): the events in order, the
//! snapshots held to the whole output, an attempt stopped as soon as a
//! finished value fails (its stream dropped, so its request cancelled),
//! restarts, the refusals, and the differential: with early stop off, a
//! streamed extraction ends exactly as `extract` does on the same replies.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use extract::model::{Chunk, ChunkStream, Model, ModelFuture, Prompt, Reply, ReplyContent};
use extract::stream::{PathState, Snapshot};
use extract::testing::Scripted;
use extract::{Code, ErrorKind, Event, Extractable, Extractor, FieldPath, Outcome, Retries};
use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The labelled corpus's invoices, with checks a stream can decide early.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice")]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
pub(crate) struct Invoice {
    invoice_number: String,
    purchase_order: Option<String>,
    vendor: String,
    issue_date: String,
    due_date: Option<String>,
    line_items: Vec<LineItem>,
    total: f64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(amount >= 0)]
pub(crate) struct LineItem {
    description: String,
    amount: f64,
}

/// The right answers of the repository's labelled invoices.
pub(crate) fn corpus() -> Vec<(String, Value)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/corpus");
    let mut cases: Vec<(String, Value)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| {
            let text = std::fs::read_to_string(path.with_extension("txt")).unwrap();
            (text, serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap())
        })
        .collect();
    cases.sort_by(|a, b| a.0.cmp(&b.0));
    // The invoices whose right answer this type accepts (some lack a datum
    // the type requires: a right extraction of those escalates).
    cases.retain(|(text, good)| extract::validate::<Invoice>(good, text).is_ok());
    assert!(cases.len() >= 40, "{} invoices", cases.len());
    cases
}

pub(crate) fn negative_first_amount(mut output: Value) -> Value {
    let amount = output["line_items"][0]["amount"].as_f64().unwrap();
    output["line_items"][0]["amount"] = json!(-amount);
    output
}

fn wrong_total(mut output: Value) -> Value {
    output["total"] = json!(output["total"].as_f64().unwrap() + 10.0);
    output
}

/// The replies a model gives for case `i`: right at once, after a seeded
/// fault, or wrong every time (an escalation).
fn script(i: usize, good: &Value) -> Vec<Value> {
    match i % 4 {
        0 => vec![good.clone()],
        1 => vec![negative_first_amount(good.clone()), good.clone()],
        2 => vec![wrong_total(good.clone()), negative_first_amount(good.clone()), good.clone()],
        _ => vec![wrong_total(good.clone()); 3],
    }
}

pub(crate) async fn streamed<T: Extractable + Send + 'static>(
    extractor: &Extractor<impl Model>,
    document: &str,
) -> (Vec<Event<T>>, Outcome<T>) {
    let mut events = Vec::new();
    let mut stream = extractor.stream::<T>(document);
    while let Some(event) = stream.next().await {
        events.push(event.unwrap());
    }
    let Some(Event::Done(outcome)) = events.pop() else { panic!("the last event is the outcome") };
    assert!(!events.iter().any(|e| matches!(e, Event::Done(_))), "one outcome, last");
    (events, outcome)
}

/// The value at `path` in `value`.
fn at<'v>(value: &'v Value, path: &FieldPath) -> Option<&'v Value> {
    path.segments().iter().try_fold(value, |value, segment| match segment {
        extract::run::Segment::Key(key) => value.get(key.as_ref()),
        extract::run::Segment::Index(index) => value.get(index),
    })
}

/// Every snapshot of one attempt holds against its whole `output`: complete
/// paths keep their value and stay complete; numbers are never shown cut
/// short; strings only grow toward their final text.
pub(crate) fn hold_snapshots(snapshots: &[&Snapshot], output: &Value) {
    let mut complete: Vec<FieldPath> = Vec::new();
    for snapshot in snapshots {
        for path in &complete {
            assert!(snapshot.complete().contains(path), "{path} stopped being complete");
        }
        for path in snapshot.complete() {
            assert_eq!(at(snapshot.json(), path), at(output, path), "complete {path} changed");
            assert_eq!(snapshot.state(path), PathState::Complete);
        }
        complete = snapshot.complete().to_vec();
        shown_prefix(snapshot.json(), output, FieldPath::root());
    }
}

fn shown_prefix(shown: &Value, whole: &Value, path: FieldPath) {
    match (shown, whole) {
        (Value::Object(shown), Value::Object(whole)) => {
            for (key, value) in shown {
                let whole = whole.get(key).unwrap_or_else(|| panic!("{path}.{key} is not in the output"));
                shown_prefix(value, whole, path.clone().key(key.clone()));
            }
        }
        (Value::Array(shown), Value::Array(whole)) => {
            assert!(shown.len() <= whole.len(), "{path} has more items than the output");
            for (index, value) in shown.iter().enumerate() {
                shown_prefix(value, &whole[index], path.clone().index(index));
            }
        }
        (Value::String(shown), Value::String(whole)) => {
            assert!(whole.starts_with(shown.as_str()), "{path}: {shown:?} is not a prefix of {whole:?}")
        }
        (shown, whole) => assert_eq!(shown, whole, "{path} shown cut short"),
    }
}

pub(crate) fn snapshots<T>(events: &[Event<T>]) -> Vec<&Snapshot> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Partial(snapshot) => Some(snapshot),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_streamed_invoice_shows_its_output_as_it_arrives_and_ends_with_the_outcome() {
    let (document, good) = corpus().remove(0);
    for bytes in [1, 3, 7, 64] {
        let extractor = Extractor::new(Scripted::new([good.clone()]).chunked(bytes));
        let (events, outcome) = streamed::<Invoice>(&extractor, &document).await;
        let shown = snapshots(&events);
        assert_eq!(shown.len(), events.len(), "one attempt: only snapshots");
        assert!(shown.len() >= serde_json::to_string(&good).unwrap().len() / bytes);
        hold_snapshots(&shown, &good);
        let last = shown.last().unwrap();
        assert_eq!(last.json(), &good, "the last snapshot is the whole output");
        for path in ["invoice_number", "vendor", "line_items[0].amount", "line_items", "total"] {
            assert!(
                last.complete().iter().any(|p| *p == path),
                "{path} is complete at the end: {:?}",
                last.complete()
            );
        }
        assert_eq!(outcome.attempts(), 1);
        assert_eq!(outcome.valid().unwrap().value().total, good["total"].as_f64().unwrap());
    }
}

/// A model whose first stream sends `pieces` and then waits forever, its
/// stream's drop observed; any later call answers `then`.
struct Dripping {
    pieces: Vec<String>,
    then: Value,
    streams: AtomicUsize,
    sent: Arc<AtomicUsize>,
    dropped: Arc<AtomicBool>,
}

struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl Model for Dripping {
    fn call<'a>(&'a self, _prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move { Ok(Reply::tool_call(self.then.clone())) })
    }

    fn stream<'a>(&'a self, prompt: &'a Prompt) -> ChunkStream<'a> {
        if self.streams.fetch_add(1, Ordering::SeqCst) > 0 {
            return Box::pin(futures_util::stream::once(
                async move { self.call(prompt).await.map(Chunk::Done) },
            ));
        }
        let flag = DropFlag(self.dropped.clone());
        let state = (0, flag, self.sent.clone(), self.pieces.clone());
        Box::pin(futures_util::stream::unfold(state, |(i, flag, sent, pieces)| async move {
            let Some(piece) = pieces.get(i).cloned() else {
                return std::future::pending().await;
            };
            sent.fetch_add(1, Ordering::SeqCst);
            Some((Ok(Chunk::Output(piece)), (i + 1, flag, sent, pieces)))
        }))
    }
}

pub(crate) fn pieces(text: &str, bytes: usize) -> Vec<String> {
    text.as_bytes().chunks(bytes).map(|c| String::from_utf8(c.to_vec()).unwrap()).collect()
}

#[tokio::test]
async fn a_finished_value_that_fails_stops_the_attempt_and_cancels_its_stream() {
    let (document, good) = corpus().remove(1);
    let bad = serde_json::to_string(&negative_first_amount(good.clone())).unwrap();
    let model = Dripping {
        pieces: pieces(&bad, 4),
        then: good.clone(),
        streams: AtomicUsize::new(0),
        sent: Arc::default(),
        dropped: Arc::default(),
    };
    let (sent, dropped) = (model.sent.clone(), model.dropped.clone());
    let extractor = Extractor::new(model);
    let (events, outcome) = streamed::<Invoice>(&extractor, &document).await;

    // The first item's amount closes with the `}` after it: the stop comes
    // with the piece that holds it, and nothing is read after it.
    let closed = bad.find("},").unwrap();
    assert_eq!(sent.load(Ordering::SeqCst), closed / 4 + 1, "no piece read after the stop");
    assert!(dropped.load(Ordering::SeqCst), "the stopped stream was dropped");
    let retry = events.iter().position(|e| matches!(e, Event::Retry { .. })).expect("a retry");
    let Event::Retry { attempt, violations } = &events[retry] else { unreachable!() };
    assert_eq!(*attempt, 2);
    let first = violations.iter().next().unwrap();
    assert_eq!(
        (first.path.to_string(), &first.code),
        ("line_items[0].amount".to_string(), &Code::CHECK_FAILED)
    );
    hold_snapshots(&snapshots(&events[..retry]), &negative_first_amount(good.clone()));

    assert_eq!(outcome.attempts(), 2);
    let valid = outcome.valid().unwrap();
    let stopped = &valid.failed_attempts()[0];
    assert_eq!(stopped.violations.iter().next().unwrap().path.to_string(), "line_items[0].amount");
    // Estimated at four bytes a token: what was read, not the whole answer.
    let read = (closed / 4 + 1) * 4;
    assert_eq!(stopped.usage.output_tokens, (read as u64).div_ceil(4));
    assert!(stopped.usage.input_tokens > document.len() as u64 / 4, "the prompt, estimated");
}

#[tokio::test]
async fn a_stopped_attempt_is_corrected_with_its_violation_and_its_prefix() {
    let (document, good) = corpus().remove(2);
    let model = Scripted::new([negative_first_amount(good.clone()), good.clone()]).chunked(5);
    let extractor = Extractor::new(model.clone()).corrections(extract::Corrections::Patch);
    let (events, outcome) = streamed::<Invoice>(&extractor, &document).await;
    assert_eq!(outcome.attempts(), 2);
    assert_eq!(events.iter().filter(|e| matches!(e, Event::Retry { attempt: 2, .. })).count(), 1);
    let correction = model.prompts()[1].to_string();
    assert!(correction.contains("line_items[0].amount"), "{correction}");
    assert!(correction.contains("\"amount\": -") || correction.contains("\"amount\":-"), "{correction}");
    assert!(!model.prompts()[1].asks_for_patch(), "a stopped attempt has no whole output to patch");
}

#[tokio::test]
async fn with_early_stop_off_a_stream_ends_as_extract_does_on_the_same_replies() {
    for (i, (document, good)) in corpus().into_iter().enumerate() {
        let replies = script(i, &good);
        let plain = Scripted::new(replies.clone());
        let extracted = Extractor::new(plain.clone()).extract::<Invoice>(document.as_str()).await.unwrap();
        let chunked = Scripted::new(replies.clone()).chunked(1 + i % 9);
        let extractor = Extractor::new(chunked.clone()).stop_early(false);
        let (events, outcome) = streamed::<Invoice>(&extractor, &document).await;
        assert_eq!(
            serde_json::to_value(&outcome).unwrap(),
            serde_json::to_value(&extracted).unwrap(),
            "case {i}"
        );
        assert_eq!(chunked.prompts(), plain.prompts(), "case {i}: the same prompts");
        let retries: Vec<u32> = events
            .iter()
            .filter_map(|e| match e {
                Event::Retry { attempt, .. } => Some(*attempt),
                _ => None,
            })
            .collect();
        assert_eq!(retries, (2..=outcome.attempts()).collect::<Vec<_>>(), "case {i}");
        // Each attempt's snapshots hold against its own reply.
        let attempts = events.split(|e| matches!(e, Event::Retry { .. }));
        for (reply, attempt) in replies.iter().zip(attempts) {
            hold_snapshots(&snapshots(attempt), reply);
        }
    }
}

#[tokio::test]
async fn with_early_stop_on_each_attempt_fails_or_passes_as_in_extract() {
    for (i, (document, good)) in corpus().into_iter().enumerate().take(24) {
        // One fault an attempt, seeded early: the stop finds what the whole finds first.
        let bad = negative_first_amount(good.clone());
        let replies = match i % 3 {
            0 => vec![good],
            1 => vec![bad, good],
            _ => vec![bad; 3],
        };
        let extracted =
            Extractor::new(Scripted::new(replies.clone())).extract::<Invoice>(document.as_str()).await;
        let model = Scripted::new(replies).chunked(1 + i % 5);
        let (_, outcome) = streamed::<Invoice>(&Extractor::new(model), &document).await;
        let extracted = extracted.unwrap();
        assert_eq!(outcome.is_valid(), extracted.is_valid(), "case {i}");
        assert_eq!(outcome.attempts(), extracted.attempts(), "case {i}");
        let (a, b) = (chain(&outcome), chain(&extracted));
        for (stopped, whole) in a.iter().zip(b) {
            let stopped: Vec<String> = stopped.violations.iter().map(|v| v.path.to_string()).collect();
            let whole: Vec<String> = whole.violations.iter().map(|v| v.path.to_string()).collect();
            assert!(stopped.iter().all(|p| whole.contains(p)), "case {i}: {stopped:?} not in {whole:?}");
            assert!(stopped.len() <= whole.len());
        }
    }
}

fn chain<T>(outcome: &Outcome<T>) -> &[extract::run::FailedAttempt] {
    match outcome {
        Outcome::Valid(valid) => valid.failed_attempts(),
        Outcome::Escalated(escalation) => &escalation.error_chain,
    }
}

/// A model whose stream is cut after `cut` pieces and sent again in whole.
/// A model whose every stream is cut after `cut` pieces and sent again in
/// whole; its answers are `texts` in turn (the last one again after them).
struct Resent {
    texts: Vec<String>,
    cut: usize,
    calls: AtomicUsize,
}

impl Resent {
    fn new(texts: &[String], cut: usize) -> Resent {
        Resent { texts: texts.to_vec(), cut, calls: AtomicUsize::new(0) }
    }

    fn next(&self) -> String {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        self.texts[call.min(self.texts.len() - 1)].clone()
    }
}

impl Model for Resent {
    fn call<'a>(&'a self, _prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move { Ok(Reply::tool_call_text(self.next())) })
    }

    fn stream<'a>(&'a self, prompt: &'a Prompt) -> ChunkStream<'a> {
        let text = self.next();
        let mut chunks: Vec<Chunk> = pieces(&text, 6).into_iter().take(self.cut).map(Chunk::Output).collect();
        chunks.push(Chunk::Restart);
        chunks.extend(pieces(&text, 6).into_iter().map(Chunk::Output));
        let name = if prompt.asks_for_patch() {
            extract::run::PATCH_TOOL.to_string()
        } else {
            prompt.tool.name.clone()
        };
        chunks.push(Chunk::Done(Reply::new(ReplyContent::ToolCallText { name: Some(name), json: text })));
        Box::pin(futures_util::stream::iter(chunks.into_iter().map(Ok)))
    }
}

#[tokio::test]
async fn a_resent_stream_restarts_the_snapshots_of_the_same_attempt() {
    let (document, good) = corpus().remove(3);
    let text = serde_json::to_string(&good).unwrap();
    let extractor = Extractor::new(Resent::new(&[text], 9));
    let (events, outcome) = streamed::<Invoice>(&extractor, &document).await;
    let restart = events.iter().position(|e| matches!(e, Event::Restart)).expect("a restart");
    assert_eq!(restart, 9, "nine snapshots before the cut");
    let after = snapshots(&events[restart..]);
    assert!(after[0].json().as_object().unwrap().len() <= 1, "the output starts over: {}", after[0].json());
    hold_snapshots(&after, &good);
    assert!(!events.iter().any(|e| matches!(e, Event::Retry { .. })), "the same attempt");
    assert_eq!(outcome.attempts(), 1);
}

#[tokio::test]
async fn a_resent_patch_is_no_restart_of_anything_shown() {
    let (document, good) = corpus().remove(3);
    let wrong = wrong_total(good.clone());
    let patch = json!({"patch": [{"op": "replace", "path": "/total", "value": good["total"]}]});
    let model = Resent::new(&[wrong.to_string(), patch.to_string()], 3);
    // Read to its end, the wrong total is patched (a stopped attempt would be corrected in full).
    let extractor = Extractor::new(model).corrections(extract::Corrections::Patch).stop_early(false);
    let (events, outcome) = streamed::<Invoice>(&extractor, &document).await;
    assert!(outcome.is_valid(), "{outcome:?}");
    assert_eq!(outcome.attempts(), 2);
    let retry = events.iter().position(|e| matches!(e, Event::Retry { .. })).unwrap();
    // The first attempt was cut and shown: one restart. The patch is never shown: none.
    assert_eq!(events[..retry].iter().filter(|e| matches!(e, Event::Restart)).count(), 1);
    assert!(events[retry..].iter().all(|e| !matches!(e, Event::Restart | Event::Partial(_))), "{events:?}");
}

#[tokio::test]
async fn a_ladder_cannot_stream_and_says_so() {
    let (document, good) = corpus().remove(0);
    let extractor = Extractor::new(Scripted::new([good.clone()])).then(Scripted::new([good]));
    let mut events = extractor.stream::<Invoice>(document.as_str());
    let error = events.next().await.unwrap().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Configuration);
    assert!(error.to_string().contains("ladder"), "{error}");
    assert!(events.next().await.is_none());
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_call_in_flight() {
    let (document, good) = corpus().remove(0);
    let text = serde_json::to_string(&good).unwrap();
    let model = Dripping {
        pieces: pieces(&text[..text.len() / 2], 8),
        then: good,
        streams: AtomicUsize::new(0),
        sent: Arc::default(),
        dropped: Arc::default(),
    };
    let dropped = model.dropped.clone();
    let extractor = Extractor::new(model);
    let mut events = extractor.stream::<Invoice>(document.as_str());
    assert!(matches!(events.next().await, Some(Ok(Event::Partial(_)))));
    assert!(!dropped.load(Ordering::SeqCst));
    drop(events);
    assert!(dropped.load(Ordering::SeqCst), "the model's stream is dropped with the events");
}

#[test]
fn the_blocking_twin_gives_the_same_events_and_refuses_inside_a_runtime() {
    let (document, good) = corpus().remove(1);
    let replies = [negative_first_amount(good.clone()), good];
    let extractor = Extractor::new(Scripted::new(replies).chunked(16)).retries(Retries::new(1).unwrap());
    let events: Vec<Event<Invoice>> =
        extractor.stream_blocking(document.as_str()).map(Result::unwrap).collect();
    assert!(matches!(events.last(), Some(Event::Done(outcome)) if outcome.is_valid()));
    assert_eq!(events.iter().filter(|e| matches!(e, Event::Retry { .. })).count(), 1);

    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let mut inside = extractor.stream_blocking::<Invoice>(document.as_str());
        let error = inside.next().unwrap().unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Configuration);
        assert!(error.to_string().contains(".stream(..)"), "{error}");
        assert!(inside.next().is_none());
    });

    // Made outside a runtime, then read (and dropped) inside one: refused, not a panic.
    let outside = extractor.stream_blocking::<Invoice>(document.as_str());
    runtime.block_on(async move {
        let mut moved = outside;
        let error = moved.next().unwrap().unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Configuration);
        assert!(moved.next().is_none());
    });
}
