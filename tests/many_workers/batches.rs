//! `Batches` on a shared journal: one worker at a time coordinates the
//! run's rounds; the coordinator killed between rounds, while the API is
//! creating its corrections' batch, is replaced by a waiting worker that
//! finds that batch, and no batch is created twice.

use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use extract::anthropic::{Batches, Client};
use extract::{Document, Journal, Retries};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use crate::stand_in::model;
use crate::support::invoices::{Invoice, marked_invoices, packets};
use crate::support::postgres::PgServer;
use crate::support::server::read_request;
use crate::workers::digest;

/// The Message Batches API, as far as these runs use it: create, retrieve
/// (`in_progress` for two polls, then `ended`), results, and the list.
#[derive(Default)]
struct Stand {
    batches: Vec<Held>,
    /// From this batch on (1 is the first), a create makes the batch and
    /// never answers: its caller dies with the batch made and its id unknown.
    silent_from: Option<usize>,
    /// Called on each create, before the batch is made.
    on_create: Option<Box<dyn Fn() + Send>>,
    /// The batches cancelled, by id.
    cancelled: Vec<String>,
}

/// A batch the stand-in made.
struct Held {
    id: String,
    /// Its requests, as (custom_id, params).
    requests: Vec<(String, Value)>,
    polls: usize,
    created_at: String,
}

/// Now, as the API writes a time.
fn now_rfc3339() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    chrono::DateTime::from_timestamp(now.as_secs() as i64, now.subsec_nanos())
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

async fn batches_stand_in() -> (String, Arc<Mutex<Stand>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let shared = Arc::new(Mutex::new(Stand::default()));
    let (state, url) = (shared.clone(), base.clone());
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let (state, url) = (state.clone(), url.clone());
            tokio::spawn(async move {
                while let Some(request) = read_request(&mut stream).await {
                    let Some(body) = answer(&state, &url, &request.method, &request.path, &request.body)
                    else {
                        return std::future::pending().await;
                    };
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                        body.len()
                    );
                    if stream.write_all(head.as_bytes()).await.is_err()
                        || stream.write_all(&body).await.is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    (base, shared)
}

fn object(id: &str, requests: usize, ended: bool, base: &str, created_at: &str) -> Value {
    json!({
        "id": id, "type": "message_batch",
        "processing_status": if ended { "ended" } else { "in_progress" },
        "request_counts": {"processing": if ended { 0 } else { requests }, "succeeded": if ended { requests } else { 0 }, "errored": 0, "canceled": 0, "expired": 0},
        "created_at": created_at, "expires_at": "2026-12-02T10:00:00Z",
        "ended_at": if ended { json!("2026-12-01T10:05:00Z") } else { Value::Null },
        "cancel_initiated_at": null, "archived_at": null,
        "results_url": if ended { json!(format!("{base}/v1/messages/batches/{id}/results")) } else { Value::Null },
    })
}

/// The stand-in's answer to one request; `None` for a create it keeps silent.
fn answer(state: &Mutex<Stand>, base: &str, method: &str, path: &str, body: &[u8]) -> Option<Vec<u8>> {
    let mut stand = state.lock().unwrap();
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let answer = match (method, parts.as_slice()) {
        ("POST", ["v1", "messages", "batches", id, "cancel"]) => {
            stand.cancelled.push(id.to_string());
            let held = stand.batches.iter().find(|b| b.id == *id).unwrap();
            object(&held.id, held.requests.len(), false, base, &held.created_at).to_string().into_bytes()
        }
        ("POST", ["v1", "messages", "batches"]) => {
            if let Some(hook) = &stand.on_create {
                hook();
            }
            let body: Value = serde_json::from_slice(body).unwrap();
            let requests: Vec<(String, Value)> = body["requests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (r["custom_id"].as_str().unwrap().to_string(), r["params"].clone()))
                .collect();
            let id = format!("msgbatch_{:03}", stand.batches.len() + 1);
            let created_at = now_rfc3339();
            let made = object(&id, requests.len(), false, base, &created_at);
            stand.batches.push(Held { id, requests, polls: 0, created_at });
            if stand.silent_from.is_some_and(|from| stand.batches.len() >= from) {
                return None;
            }
            made.to_string().into_bytes()
        }
        ("GET", ["v1", "messages", listed]) if listed.starts_with("batches") => {
            let data: Vec<Value> = stand
                .batches
                .iter()
                .rev()
                .map(|b| object(&b.id, b.requests.len(), true, base, &b.created_at))
                .collect();
            json!({"data": data, "has_more": false, "first_id": null, "last_id": null})
                .to_string()
                .into_bytes()
        }
        ("GET", ["v1", "messages", "batches", id]) => {
            let held = stand.batches.iter_mut().find(|b| b.id == *id).unwrap();
            held.polls += 1;
            object(&held.id, held.requests.len(), held.polls > 2, base, &held.created_at)
                .to_string()
                .into_bytes()
        }
        ("GET", ["v1", "messages", "batches", id, "results"]) => {
            let held = stand.batches.iter().find(|b| b.id == *id).unwrap();
            let mut lines = String::new();
            for (custom_id, params) in &held.requests {
                let result = json!({"type": "succeeded", "message": model(params)});
                lines.push_str(&json!({"custom_id": custom_id, "result": result}).to_string());
                lines.push('\n');
            }
            lines.into_bytes()
        }
        other => panic!("the stand-in has no route for {other:?}"),
    };
    Some(answer)
}

/// Twelve invoices; every third needs a correction (a second round).
fn documents() -> Vec<Document> {
    marked_invoices(12, 3, " wrong")
}

fn batches(base: &str) -> Batches {
    let client = Client::builder()
        .api_key("test-key")
        .base_url(base)
        .model("claude-haiku-5-5")
        .retry_backoff(Duration::from_millis(1), Duration::from_millis(5))
        .build()
        .unwrap();
    Batches::new(client).retries(Retries::new(2).unwrap()).poll_interval(Duration::from_millis(40))
}

fn journal(url: &str) -> Journal {
    Journal::postgres(url, "batched").leases(Duration::from_millis(1500), Duration::from_millis(300))
}

/// A batch worker: prints the digest of its report's packets. Does nothing
/// when run as an ordinary test.
#[test]
fn child_batches_worker() {
    let (Ok(url), Ok(base)) =
        (std::env::var("EXTRACT_BATCHES_DATABASE"), std::env::var("EXTRACT_BATCHES_BASE"))
    else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let report = runtime.block_on(async {
        batches(&base).journal(journal(&url)).unwrap().run::<Invoice>(documents()).await.unwrap()
    });
    println!("REPORT {} {}", report.outcomes.len(), digest(&packets(&report)));
}

fn spawn(url: &str, base: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["batches::child_batches_worker", "--exact", "--test-threads=1", "--nocapture"])
        .env("EXTRACT_BATCHES_DATABASE", url)
        .env("EXTRACT_BATCHES_BASE", base)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

async fn reported(child: Child) -> String {
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()).await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "a worker failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout.lines().find_map(|l| l.find("REPORT ").map(|i| l[i + 7..].to_string())).expect("a report")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coordinator_killed_between_rounds_is_replaced_and_no_batch_is_created_twice() {
    let server = PgServer::start();
    server.create_database("batches");
    let url = server.url("batches");
    let (base, stand) = batches_stand_in().await;

    // The first worker coordinates; the second waits for its lease.
    let mut first = spawn(&url, &base);
    let coordinator = "SELECT count(*) FROM extract_runs WHERE coordinator IS NOT NULL";
    let started = Instant::now();
    while server.count("batches", coordinator) == 0 {
        assert!(started.elapsed() < Duration::from_secs(60), "no worker took the coordination");
        std::thread::sleep(Duration::from_millis(5));
    }
    let second = spawn(&url, &base);
    // Killed between rounds, at the one moment a plain retry would pay
    // twice: the API has made the corrections' batch and the coordinator,
    // its intent committed, never hears the batch's id.
    stand.lock().unwrap().silent_from = Some(2);
    while stand.lock().unwrap().batches.len() < 2 {
        assert!(started.elapsed() < Duration::from_secs(60), "the corrections' batch was never created");
        assert!(first.try_wait().unwrap().is_none(), "the coordinator ended before it was killed");
        std::thread::sleep(Duration::from_millis(2));
    }
    first.kill().unwrap();
    first.wait().unwrap();
    let intents = "SELECT count(*) FROM extract_batches WHERE id IS NULL";
    assert_eq!(server.count("batches", intents), 1, "the coordinator died with an intent and no batch id");

    let second = reported(second).await;
    assert!(second.starts_with("12 "), "the second worker finished the run: {second}");
    {
        let stand = stand.lock().unwrap();
        let sizes: Vec<usize> = stand.batches.iter().map(|b| b.requests.len()).collect();
        assert_eq!(sizes, [12, 4], "the first round, then its corrections, each created once");
        let sent: BTreeSet<String> = stand
            .batches
            .iter()
            .flat_map(|b| {
                b.requests.iter().map(|(custom_id, params)| format!("{custom_id}:{}", params["messages"]))
            })
            .collect();
        assert_eq!(sent.len(), 16, "no request was sent twice");
    }
    assert_eq!(server.count("batches", "SELECT count(*) FROM extract_outcomes WHERE run = 'batched'"), 12);

    // The same outcomes as an uninterrupted run (no journal), and a worker
    // that joins the finished run creates nothing.
    let (other, _) = batches_stand_in().await;
    let uninterrupted = batches(&other).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(second, format!("12 {}", digest(&packets(&uninterrupted))));
    let late = reported(spawn(&url, &base)).await;
    assert_eq!(late, second);
    assert_eq!(stand.lock().unwrap().batches.len(), 2, "a worker joining a finished run creates no batch");
}

/// A coordinator that loses the coordination between its intent and the
/// API's answer to the create call records nothing of the batch: it cancels
/// it and stops, saying so (the coordinator's writes check its lease).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coordinator_that_lost_its_lease_during_a_create_records_nothing_and_cancels_the_batch() {
    let server = Arc::new(PgServer::start());
    server.create_database("batches");
    let url = server.url("batches");
    let (base, stand) = batches_stand_in().await;
    // While the create call is in flight, another worker takes the coordination.
    let taker = server.clone();
    stand.lock().unwrap().on_create = Some(Box::new(move || {
        taker.sql(
            "batches",
            "UPDATE extract_runs SET coordinator = 'another-worker', coordinator_until = now() + interval '1 hour'",
        );
    }));
    let err = batches(&base).journal(journal(&url)).unwrap().run::<Invoice>(documents()).await.unwrap_err();
    assert!(
        matches!(
            &err,
            extract::Error::Journal { problem: extract::journal::JournalProblem::CoordinationLost, .. }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("records and creates none"), "{err}");
    assert_eq!(stand.lock().unwrap().cancelled, ["msgbatch_001"]);
    assert_eq!(server.count("batches", "SELECT count(*) FROM extract_batches WHERE id IS NOT NULL"), 0);
}
