#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
//! What drives a [`Run`] against a model. Use it through
//! the facade crate `extractable` (library `extract`).
//!
//! The [`Model`] trait a backend implements, the async and blocking
//! [`Extractor`], [`Bulk`] for many documents with its durable [`Journal`]
//! (SQLite behind `sqlite`, PostgreSQL behind `postgres`), the HTTP
//! transport the backends share (behind `http`), the scripted model of
//! [`testing`], and the transport, I/O and configuration [`Error`].

// The core's vocabulary, in scope crate-wide as `crate::Name`.
#[allow(unused_imports)]
use extract_core::*;

pub mod blocking;
pub mod bulk;
pub mod clock;
pub mod engine;
mod error;
pub mod events;
mod extractor;
#[cfg(feature = "http")]
pub mod http;
pub mod journal;
mod model;
pub mod pace;
pub mod queued;
#[cfg(feature = "postgres")]
pub mod run_pause;
pub mod testing;

pub use bulk::{Bulk, BulkReport, Progress};
pub use error::{Error, ErrorKind};
pub use events::{Event, EventStream};
pub use extractor::Extractor;
pub use journal::{Journal, JournalSummary, Review, ReviewDecision};
pub use model::{Chunk, ChunkStream, Model, ModelFuture, chunk_stream};
