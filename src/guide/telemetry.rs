//! Seeing it in a tracing backend: spans and metrics in OpenTelemetry's
//! GenAI conventions.
//!
//! `extract` writes [`tracing`](https://docs.rs/tracing) spans named as
//! OpenTelemetry's GenAI semantic conventions name them
//! ([`CONVENTIONS`](crate::telemetry::CONVENTIONS) says which version):
//!
//! - each extraction is a span `extract {tool}`, with the document's id and
//!   size, then its outcome, reason, attempts, usage and cost;
//! - each model call is a child span `chat {model}` (kind client) with the
//!   `gen_ai.*` attributes: `gen_ai.request.model`,
//!   `gen_ai.usage.input_tokens`, `gen_ai.response.finish_reasons`, ...;
//! - each reply is a `validation` event with the violations' codes and
//!   paths (never values);
//! - a [`Bulk`](crate::Bulk) or Message Batches run is a span
//!   `extract.run {tool}` that each document's extraction links to.
//!
//! The document's text and the model's outputs reach no span unless
//! [`Extractor::trace_content(true)`](crate::Extractor::trace_content)
//! turns content capture on: they are personal data.
//!
//! # To a collector, in one call
//!
//! With the feature `otel`, [`telemetry::init_otlp`](crate::telemetry::init_otlp)
//! sends traces and metrics (`gen_ai.client.token.usage`,
//! `gen_ai.client.operation.duration`, `extract.outcomes`,
//! `extract.attempts`) over OTLP/HTTP to a collector: Jaeger, Tempo,
//! Honeycomb, Logfire. It installs the process's global `tracing`
//! subscriber (`Err` when one is already set), names the service by
//! `OTEL_SERVICE_NAME` when set, and flushes when the guard it returns is
//! dropped:
//!
//! ```no_run
//! # #[cfg(feature = "otel")] {
//! let _telemetry = extract::telemetry::init_otlp("http://127.0.0.1:4318")?; // flushes when dropped
//! // ... extractions; their spans and metrics reach the collector ...
//! # }
//! # Ok::<(), extract::Error>(())
//! ```
//!
//! `cargo run --example telemetry --features otel` prints the span tree of
//! an extraction with a correction.
//!
//! # With a subscriber of your own
//!
//! Without the feature, any `tracing-opentelemetry` layer exports the same
//! spans. Here they go to OpenTelemetry's in-memory exporter:
//!
//! ```
//! use extract::{Extractable, Extractor, testing::Scripted};
//! use opentelemetry::trace::TracerProvider as _;
//! use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
//! use serde_json::json;
//! use tracing_subscriber::layer::SubscriberExt;
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! #[check(total > 0)]
//! struct Receipt { total: f64 }
//!
//! let exporter = InMemorySpanExporter::default();
//! let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
//! let subscriber = tracing_subscriber::registry()
//!     .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("guide")));
//! tracing::subscriber::with_default(subscriber, || {
//!     // The first answer breaks `total > 0`; the correction fixes it.
//!     let model = Scripted::new([json!({"total": -7.5}), json!({"total": 7.5})]);
//!     Extractor::new(model).extract_blocking::<Receipt>("Total 7.50")
//! })?;
//!
//! let mut names: Vec<String> =
//!     exporter.get_finished_spans()?.iter().map(|span| span.name.to_string()).collect();
//! names.sort();
//! assert_eq!(names, ["chat scripted", "chat scripted", "extract receipt"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
