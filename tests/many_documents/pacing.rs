//! `Bulk` paces its requests by the rate limits before they bite: against
//! a stand-in that meters requests per minute in a continuous bucket (and
//! refuses with a 429 what the bucket cannot take), a paced run is never
//! refused, by the limits its headers state or, from a server that states
//! none, by the ones the run is given; an unpaced run is refused, which is
//! what shows the stand-in binds.

use std::sync::Arc;
use std::time::Duration;

use extract::anthropic::Client;
use extract::bulk::Limits;
use extract::{Bulk, Extractor};
use serde_json::json;

use crate::support::invoices::{Invoice, marked_invoices};
use crate::support::rate_limited::{Metering, RateLimited, invoice_answer};

fn metering(requests_per_minute: f64, headers: bool) -> Metering {
    Metering {
        requests_per_minute,
        input_tokens_per_minute: 1e12,
        latency: Duration::from_millis(20),
        headers,
        cache: false,
        answer: Arc::new(invoice_answer),
    }
}

fn client(base: &str) -> Client {
    Client::builder().api_key("test-key").base_url(base).model("claude-haiku-5-5").build().unwrap()
}

/// 12 more documents than the bucket holds: the last ones wait about six
/// seconds for it to refill at 2 a second.
const DOCUMENTS: usize = 132;
const PER_MINUTE: f64 = 120.0;

async fn run(
    server: &RateLimited,
    bulk: impl FnOnce(Bulk<Client>) -> Bulk<Client>,
) -> extract::BulkReport<Invoice> {
    let extractor = Extractor::new(client(&server.base_url));
    let bulk = bulk(Bulk::new(extractor).concurrency(32));
    bulk.run::<Invoice>(marked_invoices(DOCUMENTS, 1000, "")).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paced_run_is_never_refused_by_the_limits_its_server_states() {
    let server = RateLimited::start(metering(PER_MINUTE, true)).await;
    let report = run(&server, |bulk| bulk).await;
    let tally = server.tally();
    assert_eq!(tally.refused, 0, "429s: {tally:?}");
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.stats.valid() as usize, DOCUMENTS);
    assert_eq!(tally.answered, DOCUMENTS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_headers_is_paced_by_the_limits_the_run_is_given() {
    let server = RateLimited::start(metering(PER_MINUTE, false)).await;
    let limits = Limits::per_minute().requests(PER_MINUTE as u64);
    let report = run(&server, |bulk| bulk.limits(limits)).await;
    let tally = server.tally();
    assert_eq!(tally.refused, 0, "429s: {tally:?}");
    assert_eq!(report.stats.valid() as usize, DOCUMENTS, "{:?}", report.failed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unpaced_run_meets_the_limit() {
    let server = RateLimited::start(metering(PER_MINUTE, true)).await;
    let _report = run(&server, |bulk| bulk.pace(false)).await;
    assert!(server.tally().refused > 0, "the stand-in did not bind: {:?}", server.tally());
}

/// A 429 pauses every task of the run; when the pause is over they resume
/// spread out over a second, not as one burst that meets the limit again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tasks_a_429_paused_resume_spread_out() {
    use crate::support::server::{Server, Step, reply};

    const TASKS: usize = 8;
    let refused = || {
        let body = json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}});
        reply(429, &[("retry-after", "1")], body.to_string())
    };
    let answered = || {
        let body = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-5-5",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "invoice",
                         "input": {"line_items": [{"amount": 1.0}], "total": 1.0}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 10}});
        reply(200, &[], body.to_string())
    };
    let script: Vec<Step> = (0..TASKS).map(|_| refused()).chain((0..TASKS).map(|_| answered())).collect();
    let server = Server::start(script).await;
    let documents: Vec<extract::Document> =
        (0..TASKS).map(|i| extract::Document::text(format!("total {i}")).with_id(format!("d-{i}"))).collect();
    let report = Bulk::new(Extractor::new(client(&server.base_url)))
        .concurrency(TASKS)
        .pace(false)
        .run::<Invoice>(documents)
        .await
        .unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let requests = server.requests();
    assert_eq!(requests.len(), 2 * TASKS);
    let first_refused = requests[..TASKS].iter().map(|r| r.at).min().unwrap();
    let resumed: Vec<std::time::Instant> = requests[TASKS..].iter().map(|r| r.at).collect();
    let (earliest, latest) = (*resumed.iter().min().unwrap(), *resumed.iter().max().unwrap());
    // Every task waited out the server's second ...
    assert!(
        earliest.duration_since(first_refused) >= Duration::from_millis(900),
        "{:?}",
        earliest - first_refused
    );
    // ... and they came back over a span, not at once (8 draws over a second
    // all within 150 ms: about 1 in 100,000).
    assert!(latest.duration_since(earliest) >= Duration::from_millis(150), "{:?}", latest - earliest);
}
