//! Worker processes sharing one run.

use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, UNIX_EPOCH};

use extract::anthropic::Client;
use extract::{Bulk, Document, Extractor, Journal, Retries};

use crate::stand_in::StandIn;
use crate::support::invoices::{Invoice, marked_invoices, packets};
use crate::support::postgres::PgServer;

/// `count` invoices; every third needs a correction.
fn documents(count: usize) -> Vec<Document> {
    marked_invoices(count, 3, " wrong")
}

fn client(base: &str) -> Client {
    Client::builder()
        .api_key("test-key")
        .base_url(base)
        .model("claude-haiku-5-5")
        .retry_backoff(Duration::from_millis(5), Duration::from_millis(20))
        .build()
        .unwrap()
}

/// The journal of run `run` in database `url`, with short leases so a
/// killed worker's documents are taken over within the test.
fn journal(url: &str, run: &str) -> Journal {
    Journal::postgres(url, run).leases(Duration::from_millis(1500), Duration::from_millis(300))
}

/// One worker: a bulk run over the documents the parent names, on the
/// journal and stand-in it names. Prints its report as one line: the
/// number of outcomes, the digest of their packets, the documents whose
/// outcome this worker's progress saw finish, and the most the whole run's
/// progress showed done. Does nothing when run as an ordinary test.
#[test]
fn child_worker() {
    let Ok(url) = std::env::var("EXTRACT_WORKER_DATABASE") else { return };
    let run = std::env::var("EXTRACT_WORKER_RUN").unwrap();
    let model = std::env::var("EXTRACT_WORKER_MODEL").unwrap();
    let count: usize = std::env::var("EXTRACT_WORKER_DOCUMENTS").unwrap().parse().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let most_done = Arc::new(AtomicUsize::new(0));
    let seen = most_done.clone();
    let report = runtime.block_on(async {
        Bulk::new(Extractor::new(client(&model)).retries(Retries::new(2).unwrap()))
            .concurrency(4)
            .journal(journal(&url, &run))
            .unwrap()
            .on_progress(move |p| {
                seen.fetch_max(p.done, Ordering::SeqCst);
            })
            .run::<Invoice>(documents(count))
            .await
            .unwrap()
    });
    println!(
        "REPORT {} {} {} {}",
        report.outcomes.len() + report.failed.len(),
        digest(&packets(&report)),
        report.failed.len(),
        most_done.load(Ordering::SeqCst)
    );
}

/// A digest of the packets (the same binary in every process, so the same hasher).
pub fn digest(packets: &[String]) -> String {
    use std::hash::{Hash, Hasher};
    let mut hash = std::hash::DefaultHasher::new();
    packets.hash(&mut hash);
    format!("{:016x}", hash.finish())
}

fn spawn_worker(url: &str, run: &str, model: &str, documents: usize) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["workers::child_worker", "--exact", "--test-threads=1", "--nocapture"])
        .env("EXTRACT_WORKER_DATABASE", url)
        .env("EXTRACT_WORKER_RUN", run)
        .env("EXTRACT_WORKER_MODEL", model)
        .env("EXTRACT_WORKER_DOCUMENTS", documents.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A worker's report line: (results, packets' digest, failed, most done seen).
#[derive(Debug, PartialEq)]
struct Reported {
    results: usize,
    digest: String,
    failed: usize,
    most_done: usize,
}

/// Waits for a worker to end, and reads its report.
async fn report_of(child: Child) -> Reported {
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()).await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "a worker failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout.lines().find_map(|l| l.find("REPORT ").map(|i| &l[i + 7..])).unwrap_or_else(|| {
        panic!("the worker reported nothing: {stdout}\n{}", String::from_utf8_lossy(&output.stderr))
    });
    let parts: Vec<&str> = line.split(' ').collect();
    Reported {
        results: parts[0].parse().unwrap(),
        digest: parts[1].to_string(),
        failed: parts[2].parse().unwrap(),
        most_done: parts[3].parse().unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_share_a_run_and_a_killed_one_loses_nothing_nor_pays_twice() {
    let server = PgServer::start();
    server.create_database("kill");
    let url = server.url("kill");
    let stand_in = StandIn::start(Duration::from_millis(20), None).await;

    // An uninterrupted run, by one worker: the outcomes and calls to compare with.
    let whole = report_of(spawn_worker(&url, "whole", &stand_in.base_url, 200)).await;
    assert_eq!((whole.results, whole.failed), (200, 0));
    let whole_calls = stand_in.count();
    assert!(whole_calls > 200, "some documents needed a correction: {whole_calls} calls");

    // Three workers on one run; the first is killed (SIGKILL) mid-run.
    let workers: Vec<Child> = (0..3).map(|_| spawn_worker(&url, "shared", &stand_in.base_url, 200)).collect();
    let replies = "SELECT count(*) FROM extract_replies WHERE run = 'shared'";
    let started = Instant::now();
    while server.count("kill", replies) < 60 {
        assert!(started.elapsed() < Duration::from_secs(60), "the workers journalled nothing");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut workers = workers.into_iter();
    let mut killed = workers.next().unwrap();
    assert!(killed.try_wait().unwrap().is_none(), "the worker ended before it was killed");
    killed.kill().unwrap();
    killed.wait().unwrap();
    let held = server.count(
        "kill",
        "SELECT count(*) FROM extract_documents WHERE run = 'shared' AND state = 'pending' AND lease_owner IS NOT NULL",
    );
    assert!(held > 0, "some documents were in flight somewhere when the worker was killed");

    // The two others finish the run, the killed worker's documents included.
    for worker in workers {
        let reported = report_of(worker).await;
        assert_eq!(reported.results, 200, "every worker's report holds every document");
        assert_eq!(reported.failed, 0);
        assert_eq!(reported.digest, whole.digest, "the same outcomes as an uninterrupted run");
        assert_eq!(reported.most_done, 200, "progress counts the whole run");
    }
    let outcomes = server.count("kill", "SELECT count(*) FROM extract_outcomes WHERE run = 'shared'");
    assert_eq!(outcomes, 200, "exactly one outcome per document");
    let shared_calls = stand_in.count() - whole_calls;
    // The killed worker had at most 4 documents in flight, each one request.
    assert!(
        shared_calls <= whole_calls + 4,
        "{shared_calls} calls, more than the uninterrupted run's {whole_calls} and the killed worker's in flight"
    );
    // The calls whose replies were never journalled: the killed worker's in flight.
    let unjournalled = shared_calls - server.count("kill", replies);
    assert!(
        unjournalled <= 4,
        "{unjournalled} answers were not journalled, more than the killed worker had in flight"
    );
    let journalled: BTreeSet<String> = server
        .sql("kill", "SELECT document || ':' || attempt FROM extract_replies WHERE run = 'shared'")
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        journalled.len(),
        server.count("kill", replies),
        "no attempt of a document was journalled twice"
    );

    // A worker that joins once the run is over reports it all, without a call.
    let before = stand_in.count();
    let late = report_of(spawn_worker(&url, "shared", &stand_in.base_url, 200)).await;
    assert_eq!((late.results, late.digest.as_str()), (200, whole.digest.as_str()));
    assert_eq!(stand_in.count(), before, "no model call from a worker that joins a finished run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_seen_by_one_worker_pauses_every_worker_until_its_retry_after() {
    let server = PgServer::start();
    server.create_database("paced");
    let url = server.url("paced");
    // The 40th request is answered 429 with `retry-after: 1`.
    let stand_in = StandIn::start(Duration::from_millis(20), Some(40)).await;
    let workers: Vec<Child> = (0..3).map(|_| spawn_worker(&url, "paced", &stand_in.base_url, 90)).collect();
    for worker in workers {
        let reported = report_of(worker).await;
        assert_eq!((reported.results, reported.failed), (90, 0));
    }
    let calls = stand_in.calls();
    let limited = calls.iter().find(|c| c.status == 429).expect("the stand-in answered one 429");
    // The pause holds from when the worker that saw the 429 committed it
    // (`paused_until` less the 1 s of `retry-after`), however long a busy
    // machine took to get there; a request checked just before that
    // commit may still be on its way for a moment.
    let paused_until: f64 = server
        .sql("paced", "SELECT extract(epoch FROM paused_until) FROM extract_runs WHERE name = 'paced'")
        .parse()
        .expect("the run's row holds the pause");
    let quiet_until = UNIX_EPOCH + Duration::from_secs_f64(paused_until);
    let committed = quiet_until - Duration::from_secs(1);
    assert!(committed >= limited.answered - Duration::from_millis(50), "the pause came from the 429");
    let quiet_from = committed + Duration::from_millis(150);
    let during: Vec<Duration> = calls
        .iter()
        .filter(|c| c.arrived > quiet_from && c.arrived < quiet_until)
        .map(|c| c.arrived.duration_since(committed).unwrap())
        .collect();
    assert!(
        during.is_empty(),
        "requests left while the run was paused, at {during:?} after the pause was committed"
    );
    assert!(calls.iter().any(|c| c.arrived >= quiet_until), "the run went on after the pause");
}
