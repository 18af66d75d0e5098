//! `Batches` against a local stand-in of the Message Batches API on
//! 127.0.0.1 (a real HTTP server on real sockets): create (with a 429),
//! retrieve (`in_progress`, then `ended`), results in shuffled order with
//! errored, expired and missing results, cancel; and a run killed after its
//! first batch was created, resumed on the same journal.

use crate::support::server as common;

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use extract::anthropic::{Batches, Client};
use extract::{Document, Error, Extractor, Outcome, Reason, Retries};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use crate::support::invoices;
use invoices::{Invoice, packets};

/// What the stand-in holds: its batches, what it was asked, and the faults
/// still to inject.
#[derive(Default)]
struct Stand {
    batches: Vec<Held>,
    /// Every request, as `METHOD path`.
    log: Vec<String>,
    /// 429s still to answer to a create.
    create_429s: usize,
    /// Polls each batch answers `in_progress` before `ended`.
    polls_in_progress: usize,
    /// Faults by custom_id, one per result, oldest first: `overloaded`,
    /// `expired`, `canceled`, `missing`, `invalid`.
    faults: BTreeMap<String, VecDeque<&'static str>>,
    /// Results bodies still to cut off half-way (the connection closes).
    cut_results: usize,
    /// Send only this many lines of a results body, then hold the
    /// connection open (until the client goes away).
    stall_after_lines: Option<usize>,
    /// The number of the first batch id (a second stand-in must not reuse ids).
    first_id: usize,
    /// Answer every request that forces the tool with an `invalid_request_error`.
    refuse_forced: bool,
    /// Give a results URL on another host (the client must not follow it).
    foreign_results_url: bool,
    /// Polls still to answer 503.
    failing_polls: usize,
    /// Make the batch on create, then close the connection without an answer.
    drop_create_answer: bool,
    /// On a create, fill the filesystem this folder is on (the journal's), then answer.
    fill_disk_on_create: Option<PathBuf>,
    /// Answer every poll of a batch with a 404 that is not the API's
    /// `not_found_error` (a proxy's page, a wrong base URL).
    foreign_404: bool,
}

struct Held {
    id: String,
    requests: Vec<(String, Value)>,
    /// The size of the create request's body.
    bytes: usize,
    polls: usize,
    canceled: bool,
    /// When it was created, as the API writes it.
    created_at: String,
}

type Shared = Arc<Mutex<Stand>>;

/// Starts the stand-in; its base URL and state.
async fn stand_in(stand: Stand) -> (String, Shared) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let shared: Shared = Arc::new(Mutex::new(stand));
    let state = shared.clone();
    let url = base.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            tokio::spawn(serve(stream, state.clone(), url.clone()));
        }
    });
    (base, shared)
}

async fn serve(mut stream: TcpStream, state: Shared, base: String) {
    while let Some(request) = common::read_request(&mut stream).await {
        assert_eq!(request.header("x-api-key"), Some("test-key"), "every request carries the key");
        assert!(request.header("anthropic-version").is_some());
        let (status, headers, body) = answer(&state, &base, &request);
        if request.method == "POST"
            && request.path == "/v1/messages/batches"
            && state.lock().unwrap().drop_create_answer
        {
            return;
        }
        let cut = request.path.ends_with("/results") && {
            let mut stand = state.lock().unwrap();
            let cut = stand.cut_results > 0;
            stand.cut_results = stand.cut_results.saturating_sub(1);
            cut
        };
        let mut head = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let sent = if cut { &body[..body.len() / 2] } else { &body[..] };
        if stream.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let stall = state.lock().unwrap().stall_after_lines;
        if let Some(lines) = stall.filter(|_| request.path.ends_with("/results")) {
            for line in sent.split_inclusive(|b| *b == b'\n').take(lines) {
                if stream.write_all(line).await.is_err() || stream.flush().await.is_err() {
                    return;
                }
            }
            // Hold the rest back: the client reads, journals, and waits.
            tokio::time::sleep(Duration::from_secs(120)).await;
            return;
        } else if stream.write_all(sent).await.is_err() {
            return;
        }
        if cut {
            return;
        }
    }
}

fn batch_object(held: &Held, base: &str, ended: bool, foreign: bool) -> Value {
    let results = if foreign { "http://127.0.0.1:9/elsewhere".to_string() } else { base.to_string() };
    json!({
        "id": held.id,
        "type": "message_batch",
        "processing_status": if ended { "ended" } else { "in_progress" },
        "request_counts": {"processing": if ended { 0 } else { held.requests.len() }, "succeeded": if ended { held.requests.len() } else { 0 }, "errored": 0, "canceled": 0, "expired": 0},
        "created_at": held.created_at,
        "expires_at": "2026-12-02T10:00:00Z",
        "ended_at": if ended { json!("2026-12-01T10:05:00Z") } else { Value::Null },
        "cancel_initiated_at": null,
        "archived_at": null,
        "results_url": if ended { json!(format!("{results}/v1/messages/batches/{}/results", held.id)) } else { Value::Null },
    })
}

fn answer(state: &Shared, base: &str, request: &common::Received) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut stand = state.lock().unwrap();
    stand.log.push(format!("{} {}", request.method, request.path));
    let parts: Vec<&str> = request.path.trim_start_matches('/').split('/').collect();
    match (request.method.as_str(), parts.as_slice()) {
        ("POST", ["v1", "messages", "batches"]) => {
            if stand.create_429s > 0 {
                stand.create_429s -= 1;
                let body =
                    json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}});
                return (429, vec![("retry-after".into(), "0".into())], body.to_string().into_bytes());
            }
            let body = request.json();
            let requests: Vec<(String, Value)> = body["requests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (r["custom_id"].as_str().unwrap().to_string(), r["params"].clone()))
                .collect();
            let held = Held {
                id: format!("msgbatch_{:03}", stand.first_id + stand.batches.len() + 1),
                requests,
                bytes: request.body.len(),
                polls: 0,
                canceled: false,
                created_at: now_rfc3339(),
            };
            let object = batch_object(&held, base, false, false);
            stand.batches.push(held);
            if let Some(dir) = &stand.fill_disk_on_create {
                fill(dir);
            }
            (200, vec![], object.to_string().into_bytes())
        }
        // The list, newest first, in pages of 2 (to follow `has_more`).
        ("GET", ["v1", "messages", listed]) if listed.starts_with("batches") => {
            let after = listed.split("after_id=").nth(1).map(|a| a.split('&').next().unwrap().to_string());
            let mut newest_first: Vec<&Held> = stand.batches.iter().rev().collect();
            if let Some(after) = after {
                let at = newest_first.iter().position(|b| b.id == after).map_or(0, |i| i + 1);
                newest_first.drain(..at);
            }
            let page: Vec<Value> =
                newest_first.iter().take(2).map(|b| batch_object(b, base, true, false)).collect();
            let body = json!({
                "data": page,
                "has_more": newest_first.len() > 2,
                "first_id": page.first().map(|b| b["id"].clone()),
                "last_id": page.last().map(|b| b["id"].clone()),
            });
            (200, vec![], body.to_string().into_bytes())
        }
        ("GET", ["v1", "messages", "batches", _]) if stand.foreign_404 => {
            (404, vec![], b"<html><body>404 Not Found</body></html>".to_vec())
        }
        ("GET", ["v1", "messages", "batches", id]) => {
            if stand.failing_polls > 0 {
                stand.failing_polls -= 1;
                let body = json!({"type": "error", "error": {"type": "api_error", "message": "try later"}});
                return (503, vec![], body.to_string().into_bytes());
            }
            let polls_in_progress = stand.polls_in_progress;
            let foreign = stand.foreign_results_url;
            let Some(held) = stand.batches.iter_mut().find(|b| b.id == *id) else {
                return (
                    404,
                    vec![],
                    br#"{"type":"error","error":{"type":"not_found_error","message":"no such batch"}}"#
                        .to_vec(),
                );
            };
            held.polls += 1;
            let ended = held.canceled || held.polls > polls_in_progress;
            (200, vec![], batch_object(held, base, ended, foreign).to_string().into_bytes())
        }
        ("POST", ["v1", "messages", "batches", id, "cancel"]) => {
            let held = stand.batches.iter_mut().find(|b| b.id == *id).unwrap();
            held.canceled = true;
            (200, vec![], batch_object(held, base, false, false).to_string().into_bytes())
        }
        ("GET", ["v1", "messages", "batches", id, "results"]) => {
            let index = stand.batches.iter().position(|b| b.id == *id).unwrap();
            let requests = stand.batches[index].requests.clone();
            let canceled = stand.batches[index].canceled;
            let refuse_forced = stand.refuse_forced;
            let mut lines = Vec::new();
            for (custom_id, params) in &requests {
                let fault = if canceled {
                    Some("canceled")
                } else if refuse_forced
                    && matches!(params["tool_choice"]["type"].as_str(), Some("tool" | "any"))
                {
                    Some("forced")
                } else {
                    stand.faults.get_mut(custom_id).and_then(VecDeque::pop_front)
                };
                let result = match fault {
                    Some("missing") => continue,
                    Some("overloaded") => {
                        json!({"type": "errored", "error": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}})
                    }
                    Some("invalid") => {
                        json!({"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 300000 tokens > 200000 maximum"}}})
                    }
                    Some("forced") => {
                        json!({"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "tool_choice of type `tool` is not supported by this model"}}})
                    }
                    Some(kind) => json!({"type": kind}),
                    None => json!({"type": "succeeded", "message": model(params)}),
                };
                lines.push(json!({"custom_id": custom_id, "result": result}).to_string());
            }
            shuffle(&mut lines, index as u64 + 7);
            let mut body = lines.join("\n");
            body.push('\n');
            (200, vec![], body.into_bytes())
        }
        _ => (
            404,
            vec![],
            br#"{"type":"error","error":{"type":"not_found_error","message":"no such route"}}"#.to_vec(),
        ),
    }
}

/// Writes zeros into `dir` until its filesystem is full.
fn fill(dir: &Path) {
    use std::io::Write;
    let mut filler = std::fs::File::create(dir.join("filler")).unwrap();
    let zeros = [0u8; 4096];
    while filler.write_all(&zeros).and_then(|()| filler.flush()).is_ok() {}
    let _ = filler.sync_all();
}

/// Now, as the API writes a time.
fn now_rfc3339() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    chrono::DateTime::from_timestamp(now.as_secs() as i64, now.subsec_nanos())
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// A deterministic shuffle (an LCG picks each swap).
fn shuffle(lines: &mut [String], mut seed: u64) {
    for i in (1..lines.len()).rev() {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        lines.swap(i, (seed >> 33) as usize % (i + 1));
    }
}

/// The model behind the stand-in: reads `amounts 1 2 3 total 6` from the
/// request's document; `wrong` drops the last amount on a first attempt
/// (the check fails, the correction fixes it), `stuck` always drops it.
fn model(params: &Value) -> Value {
    let content = params["messages"][0]["content"].as_array().unwrap();
    let correction = content.len() > 1;
    let text = content.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n");
    let start = text.find("amounts ").expect("the document is in the request");
    let words: Vec<&str> = text[start..].split_whitespace().collect();
    let total_at = words.iter().position(|w| *w == "total").unwrap();
    let mut amounts: Vec<f64> = words[1..total_at].iter().map(|w| w.parse().unwrap()).collect();
    let rest = &words[total_at + 1..];
    if (rest.contains(&"wrong") && !correction) || rest.contains(&"stuck") {
        amounts.pop();
    }
    let items: Vec<Value> = amounts.iter().map(|a| json!({"amount": a})).collect();
    let total: f64 = words[total_at + 1].trim_matches(|c: char| !c.is_ascii_digit()).parse().unwrap();
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": params["model"],
        "content": [{"type": "tool_use", "id": "toolu_1", "name": params["tools"][0]["name"], "input": {"line_items": items, "total": total}}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 100, "output_tokens": 20}
    })
}

/// Twelve documents: every third one needs a correction.
fn documents() -> Vec<Document> {
    invoices::marked_invoices(12, 3, " wrong")
}

fn client(base: &str) -> Client {
    Client::builder()
        .api_key("test-key")
        .base_url(base)
        .model("claude-haiku-5-5")
        .retry_backoff(Duration::from_millis(1), Duration::from_millis(5))
        .build()
        .unwrap()
}

fn batches(base: &str) -> Batches {
    Batches::new(client(base)).retries(Retries::new(2).unwrap()).poll_interval(Duration::from_millis(5))
}

fn temp_journal(name: &str) -> PathBuf {
    invoices::temp_journal("batches", name)
}

fn count(log: &[String], prefix: &str) -> usize {
    log.iter().filter(|l| l.starts_with(prefix)).count()
}

fn creates(log: &[String]) -> usize {
    log.iter().filter(|l| *l == "POST /v1/messages/batches").count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_carry_corrections_and_a_429_on_create_only_waits() {
    let (base, stand) = stand_in(Stand { create_429s: 1, polls_in_progress: 2, ..Stand::default() }).await;
    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    let report = batches(&base)
        .on_progress(move |p| seen.lock().unwrap().push(p.done))
        .run::<Invoice>(documents())
        .await
        .unwrap();

    assert_eq!(report.outcomes.len(), 12, "{:?}", report.failed);
    assert_eq!(report.stats.valid(), 12);
    // The four `wrong` documents needed a second attempt: a second round of 4.
    let second: Vec<_> =
        report.outcomes.iter().filter(|(_, o)| o.attempts() == 2).map(|(id, _)| id.clone()).collect();
    assert_eq!(second, ["inv-00", "inv-03", "inv-06", "inv-09"]);
    // Each call spent 100 input and 20 output tokens on claude-haiku-5-5
    // ($0.10 and $0.50 per million), at the batch API's half price: $0.00001.
    for outcome in report.outcomes.values() {
        let expected = f64::from(outcome.attempts()) * 1e-5;
        assert!((outcome.cost().unwrap() - expected).abs() < 1e-15, "{:?}", outcome.cost());
    }
    assert!((report.cost().unwrap() - 16.0 * 1e-5).abs() < 1e-15, "{:?}", report.cost());
    let stand = stand.lock().unwrap();
    assert_eq!(stand.batches.len(), 2, "one batch per round");
    assert_eq!(stand.batches[0].requests.len(), 12);
    assert_eq!(stand.batches[1].requests.len(), 4);
    // The correction carries the previous output and its violations.
    let correction = stand.batches[1].requests[0].1.to_string();
    assert!(correction.contains("VALIDATION ERRORS"), "{correction}");
    assert_eq!(creates(&stand.log), 3, "the 429 was retried once");
    // Each batch polled until it ended: twice in progress, then ended.
    assert_eq!(count(&stand.log, "GET /v1/messages/batches/msgbatch_001"), 3 + 1);
    assert_eq!(*progress.lock().unwrap(), (1..=12).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extractors_token_budget_and_instructions_take_effect_in_a_batch_run() {
    let (base, stand) = stand_in(Stand::default()).await;
    // Each reply spends 120 tokens: a second attempt would pass a budget of 200.
    let extractor = Extractor::new(client(&base))
        .retries(Retries::new(2).unwrap())
        .token_budget(200)
        .instructions("Amounts are in euros.");
    let report = Batches::with_extractor(extractor)
        .poll_interval(Duration::from_millis(5))
        .run::<Invoice>(documents())
        .await
        .unwrap();

    assert_eq!(report.stats.valid(), 8, "{:?}", report.failed);
    for id in ["inv-00", "inv-03", "inv-06", "inv-09"] {
        match &report.outcomes[id] {
            Outcome::Escalated(e) => assert_eq!(e.reason, Reason::BudgetExhausted, "{id}"),
            Outcome::Valid(_) => panic!("{id}: the budget allowed no correction"),
        }
    }
    let stand = stand.lock().unwrap();
    assert_eq!(stand.batches.len(), 1, "no round of corrections");
    for (id, params) in &stand.batches[0].requests {
        let system = params["system"].to_string();
        assert!(system.contains("Amounts are in euros."), "{id}: {system}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_with_retries_and_instructions_still_sets_them() {
    let (base, stand) = stand_in(Stand::default()).await;
    let report = batches(&base)
        .retries(Retries::new(1).unwrap())
        .instructions("Amounts are in euros.")
        .run::<Invoice>(documents())
        .await
        .unwrap();
    assert_eq!(report.stats.valid(), 12);
    let stand = stand.lock().unwrap();
    assert!(
        stand
            .batches
            .iter()
            .flat_map(|b| &b.requests)
            .all(|(_, p)| p["system"].to_string().contains("euros"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_progress_callback_that_panics_does_not_end_a_batch_run() {
    let (base, _) = stand_in(Stand::default()).await;
    let calls = Arc::new(Mutex::new(0));
    let counted = calls.clone();
    let report = batches(&base)
        .on_progress(move |p| {
            *counted.lock().unwrap() += 1;
            if p.done % 2 == 1 {
                panic!("the progress bar broke at {}", p.done);
            }
        })
        .run::<Invoice>(documents())
        .await
        .expect("a panicking callback does not end the run");
    assert_eq!(report.stats.valid(), 12);
    assert_eq!(*calls.lock().unwrap(), 12, "the callback is still called after it panicked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_results_are_resent_without_spending_an_attempt_and_invalid_ones_fail() {
    let mut faults = BTreeMap::new();
    faults.insert("inv-01".to_string(), VecDeque::from(["overloaded", "expired"]));
    faults.insert("inv-02".to_string(), VecDeque::from(["missing"]));
    faults.insert("inv-04".to_string(), VecDeque::from(["invalid"]));
    // Four transient faults in a row: three resends, then failed.
    faults.insert("inv-05".to_string(), VecDeque::from(["overloaded", "canceled", "expired", "overloaded"]));
    let (base, stand) = stand_in(Stand { faults, ..Stand::default() }).await;
    let report = batches(&base).run::<Invoice>(documents()).await.unwrap();

    assert_eq!(report.outcomes.len(), 10);
    for id in ["inv-01", "inv-02"] {
        assert_eq!(report.outcomes[id].attempts(), 1, "{id}: a resend spends no attempt");
        assert!(report.outcomes[id].is_valid());
    }
    match report.failed["inv-04"].root() {
        Error::Api { status, error_type, message, .. } => {
            assert_eq!((*status, error_type.as_str()), (400, "invalid_request_error"));
            assert!(message.contains("prompt is too long"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let resent = report.failed["inv-05"].to_string();
    assert!(resent.contains("after 3 resends") && resent.contains("overloaded_error"), "{resent}");
    let stand = stand.lock().unwrap();
    let sent = |id: &str| stand.batches.iter().filter(|b| b.requests.iter().any(|(c, _)| c == id)).count();
    assert_eq!(sent("inv-04"), 1, "an invalid request is not sent again");
    assert_eq!(sent("inv-05"), 4, "sent once and resent three times");
    assert_eq!(sent("inv-01"), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_with_a_bad_id_fails_alone_and_is_never_sent() {
    let (base, stand) = stand_in(Stand::default()).await;
    let mut set = documents();
    set.push(Document::text("amounts 1 total 1").with_id("not a custom_id!"));
    let report = batches(&base).run::<Invoice>(set).await.unwrap();
    assert_eq!(report.stats.valid(), 12);
    let error = report.failed["not a custom_id!"].to_string();
    assert!(error.contains("does not match"), "{error}");
    let stand = stand.lock().unwrap();
    assert!(stand.batches.iter().all(|b| b.requests.iter().all(|(id, _)| id != "not a custom_id!")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_past_the_limits_is_split_into_several_batches() {
    let (base, stand) = stand_in(Stand::default()).await;
    let report = batches(&base).batch_limits(5, 1_000_000).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.stats.valid(), 12);
    {
        let stand = stand.lock().unwrap();
        let sizes: Vec<usize> = stand.batches.iter().map(|b| b.requests.len()).collect();
        assert_eq!(sizes, [5, 5, 2, 4], "12 split by 5, then the 4 corrections");
    }

    // By bytes: each body stays under the limit, and a batch holds as many
    // requests as fit (adding the next one would pass it).
    let (base, stand) = stand_in(Stand::default()).await;
    let report = batches(&base).batch_limits(100, 5_000).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.stats.valid(), 12);
    let stand = stand.lock().unwrap();
    assert!(stand.batches.len() > 2, "{}", stand.batches.len());
    assert!(stand.batches.iter().all(|b| b.bytes <= 5_000), "every body within the limit");
    assert!(stand.batches.len() < 16, "requests share batches: {}", stand.batches.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_larger_than_a_batch_is_a_failure_naming_its_document() {
    let (base, _) = stand_in(Stand::default()).await;
    let report = batches(&base).batch_limits(100, 100).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.failed.len(), 12);
    assert!(report.failed["inv-03"].to_string().contains("inv-03"), "{}", report.failed["inv-03"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_results_file_cut_short_is_read_again_and_no_result_counts_twice() {
    let path = temp_journal("cut");
    let (base, stand) = stand_in(Stand { cut_results: 1, ..Stand::default() }).await;
    let report = batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.stats.valid(), 12);
    assert!(report.outcomes.values().all(|o| o.attempts() <= 2));
    let stand = stand.lock().unwrap();
    assert_eq!(count(&stand.log, "GET /v1/messages/batches/msgbatch_001/results"), 2, "read again");
    assert_eq!(stand.batches.len(), 2, "the half read first is not resent");
    assert_eq!(invoices::journal_replies(&path), 16, "12 first replies and 4 corrections, each once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_journal_again_sends_nothing_and_rebuilds_every_outcome() {
    let path = temp_journal("again");
    let (base, stand) = stand_in(Stand::default()).await;
    let first = batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();
    let requests = stand.lock().unwrap().log.len();
    let again = batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();
    assert_eq!(stand.lock().unwrap().log.len(), requests, "nothing is asked again");
    assert_eq!(packets(&first), packets(&again));
}

/// Starts a run on `path` and stops it (in this process) once the journal
/// records its first batch.
async fn stop_once_a_batch_is_journalled(base: &str, path: &Path) {
    let stuck = batches(base).journal(path).unwrap();
    let run = tokio::spawn(async move { stuck.run::<Invoice>(documents()).await });
    let started = Instant::now();
    while !journal_has(path, "batch") {
        assert!(started.elapsed() < Duration::from_secs(20), "no batch was journalled");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    run.abort();
    let _ = run.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_batch_is_collected_by_the_next_run_and_its_requests_resent() {
    let path = temp_journal("cancel");
    let (base, stand) = stand_in(Stand { polls_in_progress: 1_000_000, ..Stand::default() }).await;
    // A run that never sees its batch end, stopped from outside.
    stop_once_a_batch_is_journalled(&base, &path).await;
    let cancelled = batches(&base).journal(&path).unwrap().cancel::<Invoice>().await.unwrap();
    assert_eq!(cancelled, ["msgbatch_001"]);
    stand.lock().unwrap().polls_in_progress = 0;

    let report = batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.stats.valid(), 12);
    let stand = stand.lock().unwrap();
    assert_eq!(stand.batches.len(), 3, "the cancelled batch, its resend, the corrections");
    assert_eq!(stand.batches[1].requests.len(), 12);
    assert!(report.outcomes.values().all(|o| o.attempts() <= 2), "a canceled request spends no attempt");
}

/// The child process of the kill-and-resume test: a batch run on the journal
/// and stand-in the parent names. Does nothing when run as an ordinary test.
#[test]
fn child_process_batches_run() {
    let (Ok(path), Ok(base)) =
        (std::env::var("EXTRACT_BATCHES_JOURNAL"), std::env::var("EXTRACT_BATCHES_BASE"))
    else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();
    });
}

/// Runs `child_process_batches_run` in a real child process on `path` and
/// the stand-in at `base`, and kills it once `ready` holds of the journal.
async fn kill_child_when(path: &Path, base: &str, ready: impl Fn(&Path) -> bool) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["batches::child_process_batches_run", "--exact", "--test-threads=1"])
        .env("EXTRACT_BATCHES_JOURNAL", path)
        .env("EXTRACT_BATCHES_BASE", base)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !ready(path) {
        assert!(started.elapsed() < Duration::from_secs(60), "the child never got there");
        assert!(child.try_wait().unwrap().is_none(), "the child ended before it was killed");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Whether the journal at `path` records a `batch` created (with its id),
/// or one `collected`.
fn journal_has(path: &Path, record: &str) -> bool {
    let query = match record {
        "batch" => "SELECT count(*) FROM batches WHERE id IS NOT NULL",
        "collected" => "SELECT count(*) FROM batches WHERE collected = 1",
        other => panic!("no such record: {other}"),
    };
    invoices::journal_count(path, query) > 0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_after_its_first_batch_was_created_resumes_without_creating_it_again() {
    let path = temp_journal("killed");
    // The batch stays in progress until the child is killed polling it.
    let (base, stand) = stand_in(Stand { polls_in_progress: usize::MAX, ..Stand::default() }).await;
    kill_child_when(&path, &base, |path| journal_has(path, "batch")).await;
    assert_eq!(invoices::journal_replies(&path), 0, "killed before any result was read");
    assert_eq!(stand.lock().unwrap().batches.len(), 1);
    stand.lock().unwrap().polls_in_progress = 0;

    // Resume: the batch is re-attached by its id, never created again.
    let resumed = batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();
    assert_eq!(resumed.outcomes.len(), 12, "every document ends with exactly one outcome");
    {
        let stand = stand.lock().unwrap();
        assert_eq!(stand.batches.len(), 2, "the first batch re-attached, then the corrections");
        assert_eq!(stand.batches[1].requests.len(), 4);
        assert_eq!(creates(&stand.log), 2);
    }

    // The outcomes equal an uninterrupted run's.
    let (base, _) = stand_in(Stand::default()).await;
    let uninterrupted = batches(&base).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(packets(&resumed), packets(&uninterrupted));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_while_reading_results_resumes_without_handling_one_twice() {
    let path = temp_journal("killed-collecting");
    // Five lines of the results file arrive, then the rest is held back.
    let (base, stand) = stand_in(Stand { stall_after_lines: Some(5), ..Stand::default() }).await;
    kill_child_when(&path, &base, |path| invoices::journal_replies(path) >= 5).await;
    assert_eq!(invoices::journal_replies(&path), 5, "killed while reading the first results file");
    assert!(!journal_has(&path, "collected"));

    stand.lock().unwrap().stall_after_lines = None;
    let resumed = batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();
    assert_eq!(resumed.outcomes.len(), 12, "every document ends with exactly one outcome");
    assert_eq!(invoices::journal_replies(&path), 16, "12 first replies and 4 corrections, none twice");
    {
        let stand = stand.lock().unwrap();
        assert_eq!(creates(&stand.log), 2, "the first batch re-attached, then the corrections");
        assert_eq!(stand.batches[1].requests.len(), 4);
    }
    let (base, _) = stand_in(Stand::default()).await;
    let uninterrupted = batches(&base).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(packets(&resumed), packets(&uninterrupted));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_forced_tool_choice_resends_the_batch_with_auto_for_free() {
    let (base, stand) = stand_in(Stand { refuse_forced: true, ..Stand::default() }).await;
    let report = batches(&base).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.stats.valid(), 12, "{:?}", report.failed);
    assert!(report.outcomes.values().all(|o| o.attempts() <= 2), "the refusal spent no attempt");
    let stand = stand.lock().unwrap();
    let choices = |b: &Held| -> Vec<String> {
        b.requests.iter().map(|(_, p)| p["tool_choice"]["type"].as_str().unwrap().to_string()).collect()
    };
    assert!(choices(&stand.batches[0]).iter().all(|c| c == "any"));
    assert_eq!(stand.batches[1].requests.len(), 12, "every refused request is sent again");
    assert!(stand.batches[1..].iter().flat_map(choices).all(|c| c == "auto"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_the_api_no_longer_has_is_resent_and_forgotten() {
    let path = temp_journal("gone");
    let (base, stand) = stand_in(Stand { polls_in_progress: usize::MAX, ..Stand::default() }).await;
    stop_once_a_batch_is_journalled(&base, &path).await;
    drop(stand);

    // Another server, which never heard of the journal's batch: 404.
    let (base, stand) = stand_in(Stand { first_id: 100, ..Stand::default() }).await;
    let report = batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.stats.valid(), 12, "{:?}", report.failed);
    assert!(journal_has(&path, "collected"), "the gone batch is closed in the journal");
    let stand = stand.lock().unwrap();
    assert_eq!(stand.batches[0].requests.len(), 12, "its documents are sent again");
    assert_eq!(count(&stand.log, "GET /v1/messages/batches/msgbatch_001"), 1, "asked once, then forgotten");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_results_url_on_another_host_is_not_followed() {
    let (base, stand) = stand_in(Stand { foreign_results_url: true, ..Stand::default() }).await;
    let report = batches(&base).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.stats.valid(), 12, "{:?}", report.failed);
    let stand = stand.lock().unwrap();
    assert_eq!(
        count(&stand.log, "GET /v1/messages/batches/msgbatch_001/results"),
        1,
        "read from the base URL"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polling_waits_out_an_outage() {
    // Seven 503s: more than the transport's own retries of one poll (3 requests).
    let (base, stand) = stand_in(Stand { failing_polls: 7, ..Stand::default() }).await;
    let report = batches(&base).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.stats.valid(), 12, "{:?}", report.failed);
    assert_eq!(stand.lock().unwrap().failing_polls, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_that_may_have_taken_effect_is_never_sent_again() {
    let (base, stand) = stand_in(Stand { drop_create_answer: true, ..Stand::default() }).await;
    let report = batches(&base).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.failed.len(), 12);
    let error = report.failed["inv-00"].to_string();
    assert!(error.contains("may have been created"), "{error}");
    let stand = stand.lock().unwrap();
    assert_eq!(creates(&stand.log), 1, "the create is not repeated");
    assert_eq!(stand.batches.len(), 1, "the API made the batch once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_created_without_its_id_recorded_is_found_in_the_list_and_not_created_again() {
    let path = temp_journal("intent-found");
    // The API makes the batch, and the answer never arrives: the journal
    // holds the intent, without an id.
    let (base, stand) = stand_in(Stand { drop_create_answer: true, ..Stand::default() }).await;
    let report = batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.failed.len(), 12, "this run cannot know: every document waits");
    assert_eq!(invoices::journal_count(&path, "SELECT count(*) FROM batches WHERE id IS NULL"), 1);

    // The next run finds it by its creation time and request count, and collects it.
    stand.lock().unwrap().drop_create_answer = false;
    let resumed = batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();
    assert_eq!(resumed.stats.valid(), 12, "{:?}", resumed.failed);
    let stand = stand.lock().unwrap();
    assert_eq!(creates(&stand.log), 2, "the first batch once, then the corrections");
    assert_eq!(stand.batches[1].requests.len(), 4);
    assert!(stand.log.iter().any(|l| l.starts_with("GET /v1/messages/batches?limit=")), "{:?}", stand.log);
    assert_eq!(invoices::journal_count(&path, "SELECT count(*) FROM batches WHERE id = 'msgbatch_001'"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_intent_the_api_does_not_list_stops_the_run_naming_it_until_it_is_forgotten() {
    let path = temp_journal("intent-missing");
    let (base, _) = stand_in(Stand { drop_create_answer: true, ..Stand::default() }).await;
    batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();

    // Another account (or the batch was deleted): nothing of that size is listed.
    let (base, stand) = stand_in(Stand { first_id: 100, ..Stand::default() }).await;
    stand.lock().unwrap().batches.push(Held {
        id: "msgbatch_other".into(),
        requests: vec![("x".into(), json!({}))],
        bytes: 0,
        polls: 0,
        canceled: false,
        created_at: now_rfc3339(),
    });
    let err = batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap_err();
    let said = err.to_string();
    assert!(
        said.contains("creating a message batch of 12 requests (documents inv-00, inv-01, inv-02, ...)"),
        "{said}"
    );
    assert!(
        said.contains("may exist all the same") && said.contains("Batches::forget_unconfirmed"),
        "{said}"
    );
    assert_eq!(creates(&stand.lock().unwrap().log), 0, "nothing is created while the intent is unresolved");

    // Once forgotten (after a look in the Console), the next run sends its documents again.
    assert_eq!(batches(&base).journal(&path).unwrap().forget_unconfirmed::<Invoice>().await.unwrap(), 1);
    let report = batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.stats.valid(), 12, "{:?}", report.failed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_404_without_not_found_error_is_a_transport_error_and_nothing_is_resent() {
    let path = temp_journal("foreign-404");
    let (base, stand) = stand_in(Stand { polls_in_progress: usize::MAX, ..Stand::default() }).await;
    stop_once_a_batch_is_journalled(&base, &path).await;
    stand.lock().unwrap().foreign_404 = true;

    let report = batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.failed.len(), 12, "{:?}", report.outcomes.keys());
    let said = report.failed["inv-00"].to_string();
    assert!(matches!(report.failed["inv-00"].root(), Error::Transport(_)), "{said}");
    assert!(said.contains("not the API's not_found_error"), "{said}");
    assert_eq!(creates(&stand.lock().unwrap().log), 1, "nothing is resent");
    assert!(!journal_has(&path, "collected"), "the batch stays open for a later run");

    // Once the API answers again, the batch is re-attached.
    {
        let mut stand = stand.lock().unwrap();
        stand.foreign_404 = false;
        stand.polls_in_progress = 0;
    }
    let resumed = batches(&base).journal(&path).unwrap().run::<Invoice>(documents()).await.unwrap();
    assert_eq!(resumed.stats.valid(), 12, "{:?}", resumed.failed);
}

/// The child of the disk-fills-after-create test: a batch run on a journal
/// in the small tmpfs the parent mounted, against a stand-in that fills that
/// filesystem when it creates the batch. Does nothing as an ordinary test.
#[test]
fn child_process_batches_on_a_disk_that_fills() {
    let Ok(dir) = std::env::var("EXTRACT_FULL_DISK_DIR") else { return };
    let dir = PathBuf::from(dir);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let (base, stand) =
            stand_in(Stand { fill_disk_on_create: Some(dir.clone()), ..Stand::default() }).await;
        let err = batches(&base)
            .journal(dir.join("run.db"))
            .unwrap()
            .run::<Invoice>(documents())
            .await
            .unwrap_err();
        let said = err.to_string();
        let cause = std::error::Error::source(&err).and_then(|e| e.downcast_ref::<std::io::Error>()).unwrap();
        assert_eq!(cause.kind(), std::io::ErrorKind::StorageFull, "{err:?}");
        assert!(
            said.contains(
                "the message batch msgbatch_001 was created, and cancelled since its id could not be recorded"
            ),
            "{said}"
        );
        let stand = stand.lock().unwrap();
        assert_eq!(creates(&stand.log), 1);
        assert!(
            stand.batches[0].canceled,
            "the batch the journal could not record is cancelled: {:?}",
            stand.log
        );
        println!("CHILD-OK {said}");
    });
}

#[test]
fn a_journal_failure_right_after_a_create_cancels_that_batch() {
    let dir = temp_journal("disk-fills").parent().unwrap().to_path_buf();
    crate::journal::in_a_small_tmpfs(&dir, "1m", "batches::child_process_batches_on_a_disk_that_fills");
}

/// The spans of a batch run, checked in a process of its own: with the
/// other tests of this binary running extractions on other threads, a
/// callsite they register while this test's subscriber is installed can be
/// cached as of interest to no one (a race inside tracing), and the spans
/// of that callsite go missing. Alone in a process, nothing races it.
#[test]
fn a_batch_runs_documents_are_root_spans_linked_to_the_run_with_a_span_per_round() {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["batches::child_process_checks_a_batch_runs_spans", "--exact", "--nocapture"])
        .env("EXTRACT_BATCH_SPANS_CHILD", "1")
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success() && said.contains("1 passed"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_process_checks_a_batch_runs_spans() {
    use opentelemetry::trace::{SpanId, TracerProvider as _};
    use tracing_subscriber::layer::SubscriberExt;
    if std::env::var_os("EXTRACT_BATCH_SPANS_CHILD").is_none() {
        return;
    }
    let (base, _stand) = stand_in(Stand::default()).await;
    let exporter = opentelemetry_sdk::trace::InMemorySpanExporter::default();
    let provider =
        opentelemetry_sdk::trace::SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    // The run on a runtime of its own, on a thread the subscriber is set on.
    let report = tokio::task::spawn_blocking(move || {
        tracing::subscriber::with_default(subscriber, || {
            tracing::callsite::rebuild_interest_cache();
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(batches(&base).run::<Invoice>(documents())).unwrap()
        })
    })
    .await
    .unwrap();
    assert_eq!(report.stats.valid(), 12);
    provider.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let run = spans.iter().find(|s| s.name.starts_with("extract.run ")).expect("a run span");
    let rounds: Vec<_> = spans.iter().filter(|s| s.name.starts_with("extract.batches.round ")).collect();
    assert_eq!(rounds.len(), 2, "the first round, then the corrections");
    assert!(rounds.iter().all(|r| r.parent_span_id == run.span_context.span_id()));
    let documents: Vec<_> = spans.iter().filter(|s| s.name.starts_with("extract ")).collect();
    assert_eq!(documents.len(), 12);
    for document in &documents {
        assert_eq!(document.parent_span_id, SpanId::INVALID, "{}", document.name);
        assert_eq!(document.links.len(), 1);
        assert_eq!(document.links[0].span_context.span_id(), run.span_context.span_id());
    }
    // A chat span per result: 12 answers, 4 corrections; each under its document.
    let chats: Vec<_> = spans.iter().filter(|s| s.name == "chat claude-haiku-5-5").collect();
    assert_eq!(chats.len(), 16);
    let document_ids: Vec<SpanId> = documents.iter().map(|d| d.span_context.span_id()).collect();
    assert!(chats.iter().all(|c| document_ids.contains(&c.parent_span_id)));
}
