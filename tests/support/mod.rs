//! What the test binaries of both crates share. Every binary includes this
//! one module (`#[path = "../support/mod.rs"] mod support;` from the root's
//! `tests/<topic>/main.rs`, `#[path = "../../../tests/support/mod.rs"]` from
//! `extract-core/tests/<topic>/main.rs`) and uses the part it needs, so
//! unused items are expected.
#![allow(dead_code)]

/// The invoices of the prompt-cache test and benchmark, and the stand-in's answers.
pub mod cached_invoices;
/// The scripted run with escalations the review desk's example and tests serve.
#[cfg(feature = "desk")]
pub mod desk_run;
/// The long corpus's generator of numbers, which the stand-in draws its faults from.
#[path = "../../examples/common/dice.rs"]
pub mod dice;
/// The run the journals of `tests/fixtures/` hold.
#[cfg(feature = "sqlite")]
pub mod fixture_run;
/// The invoice the `Bulk` and `Batches` tests extract, their packets, journal paths.
pub mod invoices;
/// The long documents of `examples/long/` and the types their truths answer.
#[path = "../../examples/common/long_documents.rs"]
pub mod long_documents;
/// A model for long documents gathered window by window, with real models' mistakes.
#[path = "../../examples/common/long_stand_in.rs"]
pub mod long_stand_in;
/// A real PostgreSQL server in a temporary directory, for the shared journal.
#[cfg(feature = "postgres")]
pub mod postgres;
/// The prompt cache as the Messages API bills it.
pub mod prompt_cache;
/// A Messages API stand-in on 127.0.0.1 that meters requests and input tokens per minute.
pub mod rate_limited;
/// The README's invoice types, exactly as its tour shows them.
#[cfg(feature = "chrono")]
pub mod readme_invoice;
/// The HTTP stand-in on 127.0.0.1: a scripted server on a real socket.
pub mod server;
/// A tracing subscriber that captures what the clients log.
pub mod tracing_capture;
