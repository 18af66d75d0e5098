//! Streamed extractions over Chat Completions: `chat.completion.chunk`
//! events from a stand-in on 127.0.0.1, written in pieces split at random
//! bytes, in tool mode (the arguments' deltas) and in JSON-schema mode (the
//! content's); a stream cut mid-event and an error mid-stream sent again
//! (an `Event::Restart`, never a truncated reply); an attempt stopped
//! early hangs up on the server; `finish_reason: length` is a truncated
//! reply.

#![cfg(feature = "openai")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use extract::openai::{Client, Mode};
use extract::{ErrorKind, Event, Extractor, Retries};
use serde_json::{Value, json};

use super::streaming::{Invoice, corpus, hold_snapshots, negative_first_amount, snapshots, streamed};
use crate::support::server::{Server, Step, random_pieces, reply};

fn chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})
}

/// The chunks of a completion whose output is `output`, split into deltas
/// at random bytes (by `seed`): the arguments of a call of `record_invoice`
/// in tool mode, the content in JSON-schema mode; then `finish_reason` and
/// the usage chunk, 900 in / 120 out.
fn completion_chunks(mode: Mode, output: &str, finish_reason: &str, seed: u64) -> Vec<Value> {
    let mut chunks = vec![match mode {
        Mode::Tool => chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": "call_s",
                   "type": "function", "function": {"name": "record_invoice", "arguments": ""}}]}),
            None,
        ),
        Mode::JsonSchema => chunk(json!({"role": "assistant", "content": ""}), None),
    }];
    for piece in random_pieces(output, seed, 11) {
        chunks.push(match mode {
            Mode::Tool => {
                chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}), None)
            }
            Mode::JsonSchema => chunk(json!({"content": piece}), None),
        });
    }
    chunks.push(chunk(json!({}), Some(finish_reason)));
    chunks.push(
        json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
                       "choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": 120,
                       "total_tokens": 1020}}),
    );
    chunks
}

/// The events of `chunks`, a comment first (as some servers keep the
/// connection alive), and `[DONE]` when `done`.
fn sse(chunks: &[Value], done: bool) -> String {
    let mut text = ": keep-alive\n\n".to_string();
    for chunk in chunks {
        text.push_str(&format!("data: {chunk}\n\n"));
    }
    if done {
        text.push_str("data: [DONE]\n\n");
    }
    text
}

fn events(pieces: Vec<String>) -> Step {
    Step::Events { pieces, pause: Duration::ZERO, cut: false, hung_up: None }
}

/// The whole stream of `output` as the server writes it: pieces split at random bytes.
fn streamed_output(mode: Mode, output: &Value, seed: u64) -> Step {
    let text = sse(&completion_chunks(mode, &output.to_string(), "stop", seed), true);
    events(random_pieces(&text, seed ^ 0x5eed, 37))
}

fn client(server: &Server, mode: Mode, retries: u32) -> Client {
    Client::builder()
        .base_url(&server.base_url)
        .model("gpt-test")
        .mode(mode)
        .timeout(Duration::from_secs(10))
        .transport_retries(retries)
        .retry_backoff(Duration::from_millis(5), Duration::from_millis(20))
        .build()
        .unwrap()
}

/// The error a streamed extraction ends with.
async fn last_error(extractor: &Extractor<Client>, document: &str) -> extract::Error {
    let mut stream = extractor.stream::<Invoice>(document);
    let mut last = None;
    while let Some(event) = futures_util::StreamExt::next(&mut stream).await {
        last = Some(event);
    }
    last.expect("an event").expect_err("the stream ends in an error")
}

#[tokio::test]
async fn argument_deltas_split_at_random_bytes_give_the_snapshots_and_the_reply_of_the_whole() {
    let cases = corpus();
    for seed in 0..6 {
        let (document, good) = &cases[seed as usize];
        let server = Server::start(vec![streamed_output(Mode::Tool, good, seed)]).await;
        let extractor = Extractor::new(client(&server, Mode::Tool, 0));
        let (events, outcome) = streamed::<Invoice>(&extractor, document).await;
        let shown = snapshots(&events);
        assert!(shown.len() > 3, "seed {seed}: {} snapshots", shown.len());
        hold_snapshots(&shown, good);
        assert_eq!(shown.last().unwrap().json(), good);
        let valid = outcome.valid().unwrap_or_else(|| panic!("seed {seed}: {outcome:?}"));
        assert_eq!(
            (valid.usage().input_tokens, valid.usage().output_tokens),
            (900, 120),
            "the include_usage chunk's usage"
        );

        let body = &server.bodies()[0];
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["tool_choice"]["function"]["name"], "record_invoice");
    }
}

#[tokio::test]
async fn content_deltas_in_json_schema_mode_are_the_output() {
    let cases = corpus();
    for seed in 6..10 {
        let (document, good) = &cases[seed as usize];
        let server = Server::start(vec![streamed_output(Mode::JsonSchema, good, seed)]).await;
        let extractor = Extractor::new(client(&server, Mode::JsonSchema, 0));
        let (events, outcome) = streamed::<Invoice>(&extractor, document).await;
        let shown = snapshots(&events);
        assert!(shown.len() > 3, "seed {seed}: {} snapshots", shown.len());
        hold_snapshots(&shown, good);
        assert_eq!(shown.last().unwrap().json(), good);
        let valid = outcome.valid().unwrap_or_else(|| panic!("seed {seed}: {outcome:?}"));
        assert_eq!(valid.usage().output_tokens, 120);

        let body = &server.bodies()[0];
        assert_eq!((&body["stream"], &body["stream_options"]["include_usage"]), (&json!(true), &json!(true)));
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert!(body.get("tools").is_none());
    }
}

#[tokio::test]
async fn a_refused_tool_choice_is_streamed_again_with_a_weaker_one() {
    let (document, good) = corpus().remove(2);
    let refused = json!({"error": {"message": "Invalid value for 'tool_choice'", "type": "invalid_request_error",
                                   "param": "tool_choice", "code": null}});
    let server =
        Server::start(vec![reply(400, &[], refused.to_string()), streamed_output(Mode::Tool, &good, 9)])
            .await;
    let (events, outcome) =
        streamed::<Invoice>(&Extractor::new(client(&server, Mode::Tool, 0)), &document).await;
    assert!(outcome.is_valid(), "{outcome:?}");
    assert!(!events.iter().any(|e| matches!(e, Event::Restart)), "nothing was shown before the 400");
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!((&bodies[1]["tool_choice"], &bodies[1]["stream"]), (&json!("required"), &json!(true)));
}

#[tokio::test]
async fn a_stream_cut_mid_event_is_sent_again_after_a_restart() {
    let (document, good) = corpus().remove(0);
    let text = sse(&completion_chunks(Mode::Tool, &good.to_string(), "tool_calls", 7), true);
    // Cut inside an event, past some of the arguments.
    let cut_at = text.len() / 2 + 3;
    let first = Step::Events {
        pieces: random_pieces(&text[..cut_at], 1, 50),
        pause: Duration::ZERO,
        cut: true,
        hung_up: None,
    };
    let server = Server::start(vec![first, streamed_output(Mode::Tool, &good, 8)]).await;
    let (events, outcome) =
        streamed::<Invoice>(&Extractor::new(client(&server, Mode::Tool, 2)), &document).await;
    assert_eq!(events.iter().filter(|e| matches!(e, Event::Restart)).count(), 1);
    let restart = events.iter().position(|e| matches!(e, Event::Restart)).unwrap();
    assert!(restart > 0, "output was shown before the cut");
    hold_snapshots(&snapshots(&events[restart..]), &good);
    assert!(!events.iter().any(|e| matches!(e, Event::Retry { .. })), "the same attempt");
    assert_eq!(outcome.attempts(), 1);
    assert!(outcome.is_valid());
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_body_that_ends_without_done_is_cut_short_not_truncated() {
    let (document, good) = corpus().remove(0);
    // Every chunk, the usage's too, and a proper end of the body: but no `[DONE]`.
    let text = sse(&completion_chunks(Mode::Tool, &good.to_string(), "tool_calls", 3), false);
    let server = Server::start(vec![events(vec![text])]).await;
    let error = last_error(&Extractor::new(client(&server, Mode::Tool, 0)), &document).await;
    assert_eq!(error.kind(), ErrorKind::Transport, "{error}");
    assert!(error.to_string().contains("[DONE]"), "{error}");
}

#[tokio::test]
async fn an_error_mid_stream_is_retried_and_named_when_retries_run_out() {
    let (document, good) = corpus().remove(0);
    let mut chunks = completion_chunks(Mode::Tool, &good.to_string(), "tool_calls", 5);
    chunks.truncate(6);
    // As llama.cpp's server and vLLM write an error once the stream began.
    chunks.push(
        json!({"error": {"code": 503, "message": "the model is loading", "type": "unavailable_error"}}),
    );
    let failing = || events(vec![sse(&chunks, false)]);

    let server = Server::start(vec![failing(), streamed_output(Mode::Tool, &good, 6)]).await;
    let (seen, outcome) =
        streamed::<Invoice>(&Extractor::new(client(&server, Mode::Tool, 2)), &document).await;
    assert_eq!(seen.iter().filter(|e| matches!(e, Event::Restart)).count(), 1);
    assert!(outcome.is_valid());
    assert_eq!(server.requests().len(), 2);

    let server = Server::start(vec![failing()]).await;
    let error = last_error(&Extractor::new(client(&server, Mode::Tool, 0)), &document).await;
    assert_eq!(error.kind(), ErrorKind::Server, "{error}");
    for named in ["unavailable_error", "503", "the model is loading"] {
        assert!(error.to_string().contains(named), "{named}: {error}");
    }
}

#[tokio::test]
async fn a_stopped_attempt_hangs_up_on_the_server_and_the_correction_follows() {
    let (document, good) = corpus().remove(1);
    let bad = negative_first_amount(good.clone());
    let text = sse(&completion_chunks(Mode::Tool, &bad.to_string(), "tool_calls", 11), true);
    let hung_up = Arc::new(AtomicUsize::new(0));
    // Slow enough that the client stops long before the end.
    let slow = Step::Events {
        pieces: random_pieces(&text, 12, 24),
        pause: Duration::from_millis(4),
        cut: false,
        hung_up: Some(hung_up.clone()),
    };
    let server = Server::start(vec![slow, streamed_output(Mode::Tool, &good, 13)]).await;
    let extractor = Extractor::new(client(&server, Mode::Tool, 0)).retries(Retries::new(1).unwrap());
    let (events, outcome) = streamed::<Invoice>(&extractor, &document).await;
    assert!(matches!(
        events.iter().find(|e| matches!(e, Event::Retry { .. })),
        Some(Event::Retry { attempt: 2, .. })
    ));
    let valid = outcome.valid().expect("corrected");
    assert_eq!(valid.attempts(), 2);
    let stopped = &valid.failed_attempts()[0];
    assert_eq!(stopped.violations.iter().next().unwrap().path.to_string(), "line_items[0].amount");
    assert_ne!(stopped.usage.output_tokens, 120, "estimated: the stream never said");
    // The server learns of the hang-up at its next writes.
    for _ in 0..200 {
        if hung_up.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(hung_up.load(Ordering::SeqCst), 1, "the stopped stream's connection was dropped");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn finish_reason_length_is_a_truncated_reply_not_a_restart() {
    let (document, good) = corpus().remove(0);
    let whole = good.to_string();
    let text = sse(&completion_chunks(Mode::Tool, &whole[..whole.len() / 2], "length", 2), true);
    let server = Server::start(vec![events(vec![text]), streamed_output(Mode::Tool, &good, 4)]).await;
    let extractor = Extractor::new(client(&server, Mode::Tool, 0)).stop_early(false);
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
