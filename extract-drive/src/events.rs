//! A streamed extraction as a stream of [`Event`]s:
//! [`Extractor::stream`](crate::Extractor::stream) and its iterator twin.
//!
//! The extraction is the engine's drive with a streaming call step
//! ([`engine::Streaming`](crate::engine::Streaming)), as a
//! [`queued_stream`](crate::queued::queued_stream): the events the drive
//! queued, then the outcome. Dropping the stream drops the drive, and with
//! it the model's stream: the request in flight is cancelled.

use std::pin::Pin;

use futures_core::Stream;

use crate::stream::Snapshot;
use crate::{Error, Outcome, Violations};

/// What a streamed extraction ([`Extractor::stream`](crate::Extractor::stream))
/// reports, in order: snapshots of each attempt's output as it arrives, a
/// `Retry` between attempts, a `Restart` where the transport sent a
/// request again, and the outcome last.
#[derive(Debug)]
#[non_exhaustive]
// The outcome comes once, at the end, and the DESIGN's `Done(outcome)` hands
// it over as `extract` returns it: not boxed.
#[allow(clippy::large_enum_variant)]
pub enum Event<T> {
    /// The output of the attempt in flight, so far.
    Partial(Snapshot),
    /// Attempt `attempt` (the new one) starts after the `violations` of the
    /// one before: snapshots start again.
    Retry {
        /// The attempt that starts, 1-based.
        attempt: u32,
        /// What the attempt before it failed on: what the correction says.
        violations: Violations,
    },
    /// The transport lost the stream and sent the same request again: the
    /// same attempt, and snapshots start again.
    Restart,
    /// The outcome, as [`extract`](crate::Extractor::extract) gives it; the
    /// last event.
    Done(Outcome<T>),
}

/// The stream [`Extractor::stream`](crate::Extractor::stream) returns:
/// `Send` and `Unpin`, so `events.next().await` works on it as it is.
pub type EventStream<'a, T> = Pin<Box<dyn Stream<Item = Result<Event<T>, Error>> + Send + 'a>>;

/// [`Extractor::stream_blocking`](crate::Extractor::stream_blocking)'s
/// iterator: the stream, driven on a runtime of its own.
pub(crate) struct Blocking<'a, T> {
    runtime: Option<tokio::runtime::Runtime>,
    stream: EventStream<'a, T>,
    /// The error that refused the iteration, given once.
    refused: Option<Error>,
}

impl<'a, T> Blocking<'a, T> {
    pub(crate) fn new(stream: EventStream<'a, T>) -> Blocking<'a, T> {
        match crate::blocking::runtime("a blocking stream", ".stream(..)") {
            Ok(runtime) => Blocking { runtime: Some(runtime), stream, refused: None },
            Err(error) => Blocking { runtime: None, stream, refused: Some(error) },
        }
    }
}

impl<T> Iterator for Blocking<'_, T> {
    type Item = Result<Event<T>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(error) = self.refused.take() {
            return Some(Err(error));
        }
        // Made outside a runtime and moved into one since: refused there
        // too, once, rather than a panic.
        if self.runtime.is_some() && tokio::runtime::Handle::try_current().is_ok() {
            if let Some(runtime) = self.runtime.take() {
                runtime.shutdown_background();
            }
            return Some(Err(Error::config(
                "a blocking stream was read inside a tokio runtime, where it would block the runtime's \
                 thread; use `.stream(..)` there",
            )));
        }
        let runtime = self.runtime.as_ref()?;
        let stream = &mut self.stream;
        runtime.block_on(std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)))
    }
}

impl<T> Drop for Blocking<'_, T> {
    /// Dropped inside a runtime, a runtime of its own must not block it.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
