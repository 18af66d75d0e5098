//! Streamed extractions over HTTP: the Messages API's server-sent events
//! from a stand-in on 127.0.0.1, written in pieces split at random bytes;
//! a stream cut mid-event and an `error` event mid-stream sent again (an
//! `Event::Restart`, never a truncated reply); an attempt stopped early
//! hangs up on the server.

use std::time::Duration;

use extract::anthropic::Client;
use extract::{ErrorKind, Event, Extractor};
use serde_json::{Value, json};

use super::streaming::{Invoice, corpus, streamed};
use super::streaming_scenarios::{self as scenarios, Protocol};
use crate::support::server::{Server, Step, random_pieces};

/// The events of a message that calls `tool` with `input` (its JSON split
/// into deltas at random bytes, by `seed`), ending with `stop` and usage
/// 900 in / 120 out.
fn message_events(tool: &str, input: &str, stop: &str, seed: u64) -> Vec<(&'static str, Value)> {
    let mut events = vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_s", "type": "message",
            "role": "assistant", "model": "claude-haiku-5-5", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 900, "output_tokens": 1, "cache_read_input_tokens": 0}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_s", "name": tool, "input": {}}}),
        ),
        ("ping", json!({"type": "ping"})),
    ];
    for piece in random_pieces(input, seed, 11) {
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": piece}}),
        ));
    }
    events.push(("content_block_stop", json!({"type": "content_block_stop", "index": 0})));
    events.push((
        "message_delta",
        json!({"type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 120}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    events
}

fn sse(events: &[(&str, Value)]) -> String {
    events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect()
}

/// The Messages API's streams, as the scenarios drive them.
const MESSAGES: Protocol<Client> = Protocol {
    stream_of: |output, seed| sse(&message_events("record_invoice", &output.to_string(), "tool_use", seed)),
    client,
};

fn streamed_output(output: &Value, seed: u64) -> Step {
    scenarios::streamed_output(&MESSAGES, output, seed)
}

fn client(server: &Server, retries: u32) -> Client {
    Client::builder()
        .api_key("test-key")
        .base_url(&server.base_url)
        .document_blocks(true)
        .timeout(Duration::from_secs(10))
        .transport_retries(retries)
        .retry_backoff(Duration::from_millis(5), Duration::from_millis(20))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_stream_split_at_random_bytes_gives_the_snapshots_and_the_reply_of_the_whole() {
    for (body, usage) in scenarios::split_streams(&MESSAGES, 0..6).await {
        assert_eq!((usage.input_tokens, usage.output_tokens), (900, 120), "the stream's usage");
        assert_eq!(body["stream"], true);
        assert_eq!(body["tools"][0]["eager_input_streaming"], true, "document blocks: Claude's API");
    }
}

#[tokio::test]
async fn a_body_that_ends_before_message_stop_is_cut_short_not_truncated() {
    let (document, good) = corpus().remove(0);
    let mut events = message_events("record_invoice", &good.to_string(), "tool_use", 3);
    events.pop(); // no message_stop; the body itself ends properly
    let incomplete =
        Step::Events { pieces: vec![sse(&events)], pause: Duration::ZERO, cut: false, hung_up: None };
    let server = Server::start(vec![incomplete]).await;
    let error = scenarios::last_error(&Extractor::new(client(&server, 0)), &document).await;
    assert_eq!(error.kind(), ErrorKind::Transport, "{error}");
    assert!(error.to_string().contains("message_stop"), "{error}");
}

#[tokio::test]
async fn an_error_event_mid_stream_is_retried_and_named_when_retries_run_out() {
    let (document, good) = corpus().remove(0);
    let mut events = message_events("record_invoice", &good.to_string(), "tool_use", 5);
    events.truncate(6);
    events.push((
        "error",
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ));
    let overloaded =
        || Step::Events { pieces: vec![sse(&events)], pause: Duration::ZERO, cut: false, hung_up: None };

    let server = Server::start(vec![overloaded(), streamed_output(&good, 6)]).await;
    let (seen, outcome) = streamed::<Invoice>(&Extractor::new(client(&server, 2)), &document).await;
    assert_eq!(seen.iter().filter(|e| matches!(e, Event::Restart)).count(), 1);
    assert!(outcome.is_valid());

    let server = Server::start(vec![overloaded()]).await;
    let error = scenarios::last_error(&Extractor::new(client(&server, 0)), &document).await;
    assert!(error.to_string().contains("overloaded_error"), "{error}");
    assert!(error.to_string().contains("529"), "{error}");
}

#[tokio::test]
async fn a_stream_cut_by_the_output_limit_is_a_truncated_reply_not_a_restart() {
    let (document, good) = corpus().remove(0);
    let whole = good.to_string();
    let events = message_events("record_invoice", &whole[..whole.len() / 2], "max_tokens", 2);
    let limited =
        Step::Events { pieces: vec![sse(&events)], pause: Duration::ZERO, cut: false, hung_up: None };
    let server = Server::start(vec![limited, streamed_output(&good, 4)]).await;
    let extractor = Extractor::new(client(&server, 0)).stop_early(false);
    let (events, outcome) = streamed::<Invoice>(&extractor, &document).await;
    assert!(!events.iter().any(|e| matches!(e, Event::Restart)));
    // As `extract` treats a reply cut by its output limit: a violation of its own, not a resend.
    let chain = match &outcome {
        extract::Outcome::Valid(valid) => valid.failed_attempts().to_vec(),
        extract::Outcome::Escalated(escalation) => escalation.error_chain.clone(),
    };
    assert_eq!(chain[0].violations.iter().next().unwrap().code.as_str(), "truncated", "{outcome:?}");
    assert_eq!(server.requests().len(), outcome.attempts() as usize, "no request sent again");
}

#[tokio::test]
async fn a_stream_cut_mid_event_is_sent_again_after_a_restart() {
    scenarios::a_cut_stream_restarts(&MESSAGES).await;
}

#[tokio::test]
async fn a_stopped_attempt_hangs_up_on_the_server_and_the_correction_follows() {
    scenarios::a_stopped_attempt_hangs_up(&MESSAGES).await;
}

#[tokio::test]
async fn an_invalid_request_error_mid_stream_is_not_sent_again() {
    let (document, good) = corpus().remove(0);
    let mut events = message_events("record_invoice", &good.to_string(), "tool_use", 9);
    events.truncate(5);
    events.push((
        "error",
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}),
    ));
    let server = Server::start(vec![scenarios::events(vec![sse(&events)]), streamed_output(&good, 10)]).await;
    let error = scenarios::last_error(&Extractor::new(client(&server, 2)), &document).await;
    assert!(error.to_string().contains("400"), "{error}");
    assert_eq!(server.requests().len(), 1, "a 400 is not sent again, mid-stream or not");
}
