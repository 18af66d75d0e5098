//! Streamed extractions over Chat Completions: `chat.completion.chunk`
//! events from a stand-in on 127.0.0.1, written in pieces split at random
//! bytes, in tool mode (the arguments' deltas) and in JSON-schema mode (the
//! content's); a stream cut mid-event and an error mid-stream sent again
//! (an `Event::Restart`, never a truncated reply); an attempt stopped
//! early hangs up on the server; `finish_reason: length` is a truncated
//! reply.

#![cfg(feature = "openai")]

use std::time::Duration;

use extract::openai::{Client, Mode};
use extract::{ErrorKind, Event, Extractor};
use serde_json::{Value, json};

use super::streaming::{Invoice, corpus, streamed};
use super::streaming_scenarios::{self as scenarios, Protocol, events};
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

#[tokio::test]
async fn argument_deltas_split_at_random_bytes_give_the_snapshots_and_the_reply_of_the_whole() {
    for (body, usage) in scenarios::split_streams(&COMPLETIONS, 0..6).await {
        assert_eq!((usage.input_tokens, usage.output_tokens), (900, 120), "the include_usage chunk's usage");
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["tool_choice"]["function"]["name"], "record_invoice");
    }
}

#[tokio::test]
async fn content_deltas_in_json_schema_mode_are_the_output() {
    for (body, usage) in scenarios::split_streams(&COMPLETIONS_JSON, 6..10).await {
        assert_eq!(usage.output_tokens, 120);
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
async fn a_body_that_ends_without_done_is_cut_short_not_truncated() {
    let (document, good) = corpus().remove(0);
    // Every chunk, the usage's too, and a proper end of the body: but no `[DONE]`.
    let text = sse(&completion_chunks(Mode::Tool, &good.to_string(), "tool_calls", 3), false);
    let server = Server::start(vec![events(vec![text])]).await;
    let error = scenarios::last_error(&Extractor::new(client(&server, Mode::Tool, 0)), &document).await;
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
    let error = scenarios::last_error(&Extractor::new(client(&server, Mode::Tool, 0)), &document).await;
    assert_eq!(error.kind(), ErrorKind::Server, "{error}");
    for named in ["unavailable_error", "503", "the model is loading"] {
        assert!(error.to_string().contains(named), "{named}: {error}");
    }
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

/// Chat Completions' streams in tool mode, as the scenarios drive them.
const COMPLETIONS: Protocol<Client> = Protocol {
    stream_of: |output, seed| {
        sse(&completion_chunks(Mode::Tool, &output.to_string(), "tool_calls", seed), true)
    },
    client: |server, retries| client(server, Mode::Tool, retries),
};

/// Chat Completions' streams in json_schema mode: the content is the output.
const COMPLETIONS_JSON: Protocol<Client> = Protocol {
    stream_of: |output, seed| {
        sse(&completion_chunks(Mode::JsonSchema, &output.to_string(), "stop", seed), true)
    },
    client: |server, retries| client(server, Mode::JsonSchema, retries),
};

#[tokio::test]
async fn a_stream_cut_mid_event_is_sent_again_after_a_restart() {
    scenarios::a_cut_stream_restarts(&COMPLETIONS).await;
}

#[tokio::test]
async fn a_stopped_attempt_hangs_up_on_the_server_and_the_correction_follows() {
    scenarios::a_stopped_attempt_hangs_up(&COMPLETIONS).await;
}
