//! What every streaming backend is held to over HTTP, written once: each
//! protocol's test module gives the text of its stream for an output and a
//! client of its stand-in, and these scenarios drive a 127.0.0.1 server
//! that writes that text in pieces (cut, slowed) and check the events.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use extract::model::Model;
use extract::{Event, Extractor, Retries};
use serde_json::Value;

use super::streaming::{Invoice, corpus, hold_snapshots, negative_first_amount, snapshots, streamed};
use crate::support::server::{Server, Step, random_pieces};

/// One backend's streaming protocol, as its stand-in writes it.
pub(crate) struct Protocol<M> {
    /// The whole stream of a reply whose output is `output` (its deltas cut by `seed`).
    pub(crate) stream_of: fn(output: &Value, seed: u64) -> String,
    /// A client of `server` with `retries` transport retries.
    pub(crate) client: fn(server: &Server, retries: u32) -> M,
}

/// `pieces`, written at once.
pub(crate) fn events(pieces: Vec<String>) -> Step {
    Step::Events { pieces, pause: Duration::ZERO, cut: false, hung_up: None }
}

/// The whole stream of `output`, written in pieces split at random bytes.
pub(crate) fn streamed_output<M>(protocol: &Protocol<M>, output: &Value, seed: u64) -> Step {
    events(random_pieces(&(protocol.stream_of)(output, seed), seed ^ 0x5eed, 37))
}

/// The error a streamed extraction ends with.
pub(crate) async fn last_error<M: Model>(extractor: &Extractor<M>, document: &str) -> extract::Error {
    let mut stream = extractor.stream::<Invoice>(document);
    let mut last = None;
    while let Some(event) = futures_util::StreamExt::next(&mut stream).await {
        last = Some(event);
    }
    last.expect("an event").expect_err("the stream ends in an error")
}

/// For each of `seeds`, a corpus invoice streamed whole in pieces split at
/// random bytes: more than three snapshots, each held to the whole, the
/// last one the whole, the outcome valid. Each stream's request body and
/// usage, for the protocol's own checks.
pub(crate) async fn split_streams<M: Model>(
    protocol: &Protocol<M>,
    seeds: std::ops::Range<u64>,
) -> Vec<(Value, extract::Usage)> {
    let cases = corpus();
    let mut seen = Vec::new();
    for seed in seeds {
        let (document, good) = &cases[seed as usize];
        let server = Server::start(vec![streamed_output(protocol, good, seed)]).await;
        let extractor = Extractor::new((protocol.client)(&server, 0));
        let (events, outcome) = streamed::<Invoice>(&extractor, document).await;
        let shown = snapshots(&events);
        assert!(shown.len() > 3, "seed {seed}: {} snapshots", shown.len());
        hold_snapshots(&shown, good);
        assert_eq!(shown.last().unwrap().json(), good);
        let valid = outcome.valid().unwrap_or_else(|| panic!("seed {seed}: {outcome:?}"));
        seen.push((server.bodies().remove(0), valid.usage()));
    }
    seen
}

/// A stream cut inside an event, past some of the output, is sent again:
/// one `Restart`, snapshots that start over, the same attempt, valid.
pub(crate) async fn a_cut_stream_restarts<M: Model>(protocol: &Protocol<M>) {
    let (document, good) = corpus().remove(0);
    let text = (protocol.stream_of)(&good, 7);
    let cut_at = text.len() / 2 + 3;
    let first = Step::Events {
        pieces: random_pieces(&text[..cut_at], 1, 50),
        pause: Duration::ZERO,
        cut: true,
        hung_up: None,
    };
    let server = Server::start(vec![first, streamed_output(protocol, &good, 8)]).await;
    let (events, outcome) =
        streamed::<Invoice>(&Extractor::new((protocol.client)(&server, 2)), &document).await;
    assert_eq!(events.iter().filter(|e| matches!(e, Event::Restart)).count(), 1);
    let restart = events.iter().position(|e| matches!(e, Event::Restart)).unwrap();
    assert!(restart > 0, "output was shown before the cut");
    hold_snapshots(&snapshots(&events[restart..]), &good);
    assert!(!events.iter().any(|e| matches!(e, Event::Retry { .. })), "the same attempt");
    assert_eq!(outcome.attempts(), 1);
    assert!(outcome.is_valid());
    assert_eq!(server.requests().len(), 2);
}

/// An attempt whose first line's amount is negative is stopped as soon as
/// that amount is finished: the client hangs up on the slow server, and
/// the correction's answer is valid.
pub(crate) async fn a_stopped_attempt_hangs_up<M: Model>(protocol: &Protocol<M>) {
    let (document, good) = corpus().remove(1);
    let text = (protocol.stream_of)(&negative_first_amount(good.clone()), 11);
    let hung_up = Arc::new(AtomicUsize::new(0));
    let slow = Step::Events {
        pieces: random_pieces(&text, 12, 24),
        pause: Duration::from_millis(4),
        cut: false,
        hung_up: Some(hung_up.clone()),
    };
    let server = Server::start(vec![slow, streamed_output(protocol, &good, 13)]).await;
    let extractor = Extractor::new((protocol.client)(&server, 0)).retries(Retries::new(1).unwrap());
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
