//! Telemetry in OpenTelemetry's GenAI conventions.
//!
//! `extract` writes `tracing` spans named as the conventions name them
//! ([`CONVENTIONS`] says which version): an extraction is `extract {tool}`,
//! each model call a child `chat {model}` of kind client with the
//! `gen_ai.*` attributes, each reply a `validation` event with the
//! violations' codes and paths (never values), and a `Bulk` run an
//! `extract.run {tool}` span its documents' spans link to. Any
//! `tracing-opentelemetry` layer exports them. Document text and model
//! output are in no span unless [`Extractor::trace_content`](crate::Extractor::trace_content)
//! turns content capture on.
//!
//! With the feature `otel`, [`init_otlp`] sets all of it up in one call:
//! traces and metrics (`gen_ai.client.token.usage`,
//! `gen_ai.client.operation.duration`, `extract.outcomes`,
//! `extract.attempts`) over OTLP/HTTP to a collector, flushed when the
//! returned guard drops.
//!
//! ```no_run
//! # #[cfg(feature = "otel")] {
//! let _telemetry = extract::telemetry::init_otlp("http://127.0.0.1:4318")?;
//! // ... extractions; their spans and metrics reach the collector ...
//! # }
//! # Ok::<(), extract::Error>(())
//! ```

pub use extract_core::telemetry::*;

#[cfg(feature = "otel")]
mod otlp;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub use otlp::{Telemetry, init_otlp};
