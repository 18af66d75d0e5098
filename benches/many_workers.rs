//! Throughput of one run shared by 1, 2 and 4 worker processes on a
//! PostgreSQL journal, each with concurrency 8, against a stand-in of the
//! Messages API on 127.0.0.1 answering after 50 ms; with the CPU time the
//! workers, the stand-in and PostgreSQL used over each run, to say what
//! saturates. A real PostgreSQL server is
//! started in a temporary directory as the tests do (`apt-get install -y
//! postgresql` first), with its default durability (every commit synced).
//!
//! `cargo bench --features postgres --bench many_workers` (about a minute).
//! The workers are this binary run again with `EXTRACT_BENCH_WORKER` set.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use extract::anthropic::Client;
use extract::{Bulk, Document, Extractor, Journal, Retries};

// The bench uses part of the tests' stand-in.
#[allow(dead_code)]
#[path = "../tests/many_workers/stand_in.rs"]
mod stand_in;
#[path = "../tests/support/mod.rs"]
mod support;

use support::invoices::Invoice;
use support::postgres::PgServer;

const DOCUMENTS: usize = 600;
const CONCURRENCY: usize = 8;
const LATENCY: Duration = Duration::from_millis(50);

/// `DOCUMENTS` invoices; every third needs a correction (a second call).
fn documents() -> Vec<Document> {
    (0..DOCUMENTS)
        .map(|i| {
            let wrong = if i.is_multiple_of(3) { " wrong" } else { "" };
            Document::text(format!("amounts {i} 1 2 total {}{wrong}", i + 3)).with_id(format!("inv-{i:04}"))
        })
        .collect()
}

/// One worker process: the whole run, with the shared journal.
fn worker(url: &str, run: &str, model: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let client =
            Client::builder().api_key("bench-key").base_url(model).model("claude-haiku-5-5").build().unwrap();
        let report = Bulk::new(Extractor::new(client).retries(Retries::new(2).unwrap()))
            .concurrency(CONCURRENCY)
            .journal(Journal::postgres(url, run))
            .unwrap()
            .run::<Invoice>(documents())
            .await
            .unwrap();
        assert_eq!(report.outcomes.len(), DOCUMENTS);
    });
}

/// CPU seconds a process has used (`own`) and its waited-for children have
/// (`children`), from /proc/<pid>/stat.
fn cpu_seconds(pid: &str) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<f64> = after_name.split_whitespace().map(|f| f.parse().unwrap_or(0.0)).collect();
    let tick = 100.0; // USER_HZ on Linux
    let field = |i: usize| fields.get(i).copied().unwrap_or(0.0) / tick;
    (field(11) + field(12), field(13) + field(14))
}

/// CPU seconds so far of: the worker processes (this process's waited-for
/// children), the stand-in (this process), PostgreSQL (the postmaster and
/// its exited backends; backends of live connections count once they exit,
/// which is when the workers do).
fn cpu(server: &PgServer) -> [f64; 3] {
    let (own, children) = cpu_seconds("self");
    let postgres = server.server_pid().map_or(0.0, |pid| {
        let (own, children) = cpu_seconds(&pid.to_string());
        own + children
    });
    [children, own, postgres]
}

fn main() {
    if let (Ok(url), Ok(run), Ok(model)) = (
        std::env::var("EXTRACT_BENCH_WORKER"),
        std::env::var("EXTRACT_BENCH_RUN"),
        std::env::var("EXTRACT_BENCH_MODEL"),
    ) {
        return worker(&url, &run, &model);
    }
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` lists benchmarks: there is nothing to list
    }
    let server = PgServer::start();
    server.create_database("bench");
    let url = server.url("bench");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let stand_in = runtime.block_on(stand_in::StandIn::start(LATENCY, None));
    println!(
        "{DOCUMENTS} documents (every third needs a correction), concurrency {CONCURRENCY} per worker, \
         model latency {} ms, {} cores",
        LATENCY.as_millis(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "| workers | seconds | documents/s | calls/s | bound (calls/s) | CPU s: workers | stand-in | PostgreSQL | of the cores' |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for workers in [1, 2, 4] {
        let run = format!("bench-{workers}");
        let calls_before = stand_in.count();
        let before = cpu(&server);
        let started = Instant::now();
        let children: Vec<_> = (0..workers)
            .map(|_| {
                Command::new(std::env::current_exe().unwrap())
                    .env("EXTRACT_BENCH_WORKER", &url)
                    .env("EXTRACT_BENCH_RUN", &run)
                    .env("EXTRACT_BENCH_MODEL", &stand_in.base_url)
                    .stdout(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut child in children {
            assert!(child.wait().unwrap().success(), "a worker failed");
        }
        let seconds = started.elapsed().as_secs_f64();
        let after = cpu(&server);
        let used: Vec<f64> = after.iter().zip(before).map(|(a, b)| a - b).collect();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let calls = stand_in.count() - calls_before;
        // The latency bound: every worker's requests in flight all the time.
        let bound = (workers * CONCURRENCY) as f64 / LATENCY.as_secs_f64();
        println!(
            "| {workers} | {seconds:.2} | {:.0} | {:.0} | {bound:.0} | {:.1} | {:.1} | {:.1} | {:.0} % |",
            DOCUMENTS as f64 / seconds,
            calls as f64 / seconds,
            used[0],
            used[1],
            used[2],
            used.iter().sum::<f64>() / (seconds * cores) * 100.0
        );
    }
}
