//! What drives a [`Run`](crate::Run) against a model: the [`Model`] trait a
//! backend implements, the async and blocking [`Extractor`], [`Bulk`] for
//! many documents with its durable journal, the scripted model of
//! [`testing`], and the transport, I/O and configuration [`Error`].

pub(crate) mod bulk;
mod error;
mod extractor;
#[cfg(feature = "http")]
pub(crate) mod http;
pub(crate) mod journal;
mod model;
#[cfg(feature = "postgres")]
pub(crate) mod run_pause;
pub mod testing;

pub use bulk::{Bulk, BulkReport, Progress};
pub use error::Error;
pub use extractor::Extractor;
pub use journal::{Journal, JournalSummary, Review, ReviewDecision};
pub use model::{Model, ModelFuture};
