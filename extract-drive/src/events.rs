//! A streamed extraction as a stream of [`Event`]s:
//! [`Extractor::stream`](crate::Extractor::stream) and its iterator twin.
//!
//! The extraction is the engine's drive with a streaming call step
//! ([`engine::Streaming`](crate::engine::Streaming)); [`Events`] polls that
//! drive and hands out what it queued, then the outcome. Dropping the
//! stream drops the drive, and with it the model's stream: the request in
//! flight is cancelled.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;

use crate::engine::EventQueue;
use crate::stream::Snapshot;
use crate::{Error, Outcome, Violations};

/// What a streamed extraction ([`Extractor::stream`](crate::Extractor::stream))
/// reports, in order: snapshots of each attempt's output as it arrives, a
/// `Retry` between attempts, a `Restart` where the transport sent a
/// request again, and the outcome last.
#[derive(Debug)]
#[non_exhaustive]
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

/// The extraction `drive` as a stream of the events it queues in `queue`,
/// then its outcome.
pub(crate) fn events<'a, T: Send + 'a>(
    drive: impl Future<Output = Result<Outcome<T>, Error>> + Send + 'a,
    queue: EventQueue<T>,
) -> EventStream<'a, T> {
    Box::pin(Events { drive: Some(Box::pin(drive)), queue, ended: None })
}

/// An extraction's drive and the events it queued (see [`EventQueue`]).
struct Events<'a, T> {
    /// The drive, until it ends.
    drive: Option<Pin<Box<dyn Future<Output = Result<Outcome<T>, Error>> + Send + 'a>>>,
    queue: EventQueue<T>,
    /// How the drive ended, given out once its queued events are.
    ended: Option<Result<Outcome<T>, Error>>,
}

impl<T> Events<'_, T> {
    fn queued(&self) -> Option<Event<T>> {
        self.queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop_front()
    }
}

// The drive is pinned in its own box, and nothing else is ever pinned.
impl<T> Unpin for Events<'_, T> {}

impl<T> Stream for Events<'_, T> {
    type Item = Result<Event<T>, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(event) = this.queued() {
            return Poll::Ready(Some(Ok(event)));
        }
        if let Some(drive) = this.drive.as_mut() {
            if let Poll::Ready(ended) = drive.as_mut().poll(cx) {
                this.drive = None;
                this.ended = Some(ended);
            }
            // What the poll queued comes before the outcome.
            if let Some(event) = this.queued() {
                return Poll::Ready(Some(Ok(event)));
            }
            if this.drive.is_some() {
                return Poll::Pending;
            }
        }
        Poll::Ready(this.ended.take().map(|ended| ended.map(Event::Done)))
    }
}

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
        let runtime = self.runtime.as_ref()?;
        let stream = &mut self.stream;
        runtime.block_on(std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)))
    }
}
