//! A stream of what a future queues while it is polled: how a driver or a
//! backend whose work is one future (a drive, an HTTP exchange with its
//! retries) hands out what it learns on the way, then its result.
//!
//! The future pushes items into a [`Queue`] only while it is polled, and
//! the stream polls it only when the queue is empty: the queue holds one
//! poll's items at most (a future that yields after each item hands them
//! out one by one, at the consumer's pace), needs no waker, and dropping
//! the stream drops the future (cancelling whatever it was doing).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures_core::Stream;

use crate::Error;

/// Where a future puts the items it hands out before its result. Clones
/// share one queue.
pub struct Queue<I>(Arc<Mutex<VecDeque<I>>>);

impl<I> Queue<I> {
    /// Queues `item` behind those not yet handed out. Push only from the
    /// future [`queued_stream`] polls, while it is polled: the stream looks
    /// at the queue when it polls that future, so an item pushed from
    /// another task waits until the future's own next wake-up.
    pub fn push(&self, item: I) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push_back(item);
    }

    fn pop(&self) -> Option<I> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop_front()
    }
}

impl<I> Default for Queue<I> {
    fn default() -> Queue<I> {
        Queue(Arc::default())
    }
}

impl<I> Clone for Queue<I> {
    fn clone(&self) -> Queue<I> {
        Queue(self.0.clone())
    }
}

/// The stream of what `producer` pushes into `queue`, then its result
/// (an `Err` ends the stream too): `Send` and `Unpin`.
pub fn queued_stream<'a, I: Send + 'a>(
    producer: impl Future<Output = Result<I, Error>> + Send + 'a,
    queue: Queue<I>,
) -> Pin<Box<dyn Stream<Item = Result<I, Error>> + Send + 'a>> {
    Box::pin(Queued { producer: Some(Box::pin(producer)), queue, ended: None })
}

type Producer<'a, I> = Pin<Box<dyn Future<Output = Result<I, Error>> + Send + 'a>>;

struct Queued<'a, I> {
    /// The future, until it ends.
    producer: Option<Producer<'a, I>>,
    queue: Queue<I>,
    /// How it ended, given out once the items it queued are.
    ended: Option<Result<I, Error>>,
}

// The future is pinned in its own box, and nothing else is ever pinned.
impl<I> Unpin for Queued<'_, I> {}

impl<I> Stream for Queued<'_, I> {
    type Item = Result<I, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(item) = this.queue.pop() {
            return Poll::Ready(Some(Ok(item)));
        }
        if let Some(producer) = this.producer.as_mut() {
            if let Poll::Ready(ended) = producer.as_mut().poll(cx) {
                this.producer = None;
                this.ended = Some(ended);
            }
            // What the poll queued comes before the result.
            if let Some(item) = this.queue.pop() {
                return Poll::Ready(Some(Ok(item)));
            }
            if this.producer.is_some() {
                return Poll::Pending;
            }
        }
        Poll::Ready(this.ended.take())
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    #[tokio::test]
    async fn items_come_in_order_before_the_result_and_an_error_ends_the_stream() {
        let queue = Queue::default();
        let pushed = queue.clone();
        let producer = async move {
            pushed.push(1);
            tokio::task::yield_now().await;
            pushed.push(2);
            pushed.push(3);
            Ok(4)
        };
        let items: Vec<u32> = queued_stream(producer, queue).map(Result::unwrap).collect().await;
        assert_eq!(items, [1, 2, 3, 4]);

        let queue = Queue::default();
        let pushed = queue.clone();
        let failing = async move {
            pushed.push(1);
            Err(Error::transport("cut"))
        };
        let items: Vec<Result<u32, Error>> = queued_stream(failing, queue).collect().await;
        assert!(matches!(items[..], [Ok(1), Err(_)]), "{items:?}");
    }
}
