#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
//! The Claude backend: [`Client`] implements [`Model`] over the
//! Anthropic Messages API (`POST /v1/messages`, `anthropic-version: 2026-10-21`).
//!
//! Behind the `anthropic` cargo feature (on by default in the `extract`
//! facade). What the client does, in the order a call meets it:
//!
//! - **Request.** The prompt's blocks map to content blocks of one user
//!   message: the document as a `document` block with a plain-text source,
//!   byte for byte, alone on a first attempt; on a correction attempt, the
//!   previous output, its violations and the instruction, labelled and
//!   fenced, in one text block after it. `temperature`,
//!   `top_p` and `top_k` are never sent (API version 2026-10-21 rejects them).
//! - **Prompt caching.** `cache_control: {"type": "ephemeral"}` on the tool
//!   and on the document block, so a correction attempt reads the tool,
//!   system and document from the cache; only where the tool, system and
//!   document together are long enough for the API to cache them (a
//!   shorter prompt would pay the markers' bytes for nothing).
//! - **Tool choice.** The tool is forced where the model allows it. Models
//!   documented to refuse forced tool use (a list inside the client, kept
//!   with the provider's catalogue, not public API)
//!   get `{"type": "auto"}` with the strict tool ([`Tool::strict`](crate::Tool::strict))
//!   and a system instruction to answer only through it; any other model that
//!   answers a forced choice with a 400 about it is switched to the same
//!   fallback, for the rest of the client's life, and the call is resent
//!   without spending a validation attempt.
//! - **Transport retries.** `x-should-retry` is obeyed; otherwise 408, 409,
//!   429, 5xx (529 included), timeouts and dropped connections are retried
//!   [`DEFAULT_TRANSPORT_RETRIES`] times, waiting `retry-after-ms` or
//!   `retry-after` (up to 60 s), else 0.5 s doubling to 8 s with jitter. A 429
//!   for an exhausted spend limit, and 400/401/403/404/413, come back at once
//!   as [`Error::Api`] with the API's type, message and request id.
//! - **JSON outputs.** With [`Mode::JsonSchema`] the request carries
//!   `output_config.format` (the tool's strict schema) instead of a tool,
//!   and the reply's text is the input.
//! - **Replies.** A `tool_use` block is a tool call; text alone is text;
//!   `stop_reason` `refusal`, `max_tokens` and `model_context_window_exceeded`
//!   are a refusal (with `stop_details`) and truncated replies. Usage maps
//!   input, output, cache-write and cache-read tokens.
//! - **Secrecy.** The API key appears in no `Debug` output, error or log
//!   line; nor do a user name and password in the base URL.
//! - **Body limit.** A response body past [`DEFAULT_BODY_LIMIT`] (or the
//!   builder's `body_limit`) is an error naming the limit, never read whole.
//!
//! The transport (retries, body limit, masking) is the one every HTTP
//! backend shares; this module holds only what is the Messages API's own:
//! the request (`request.rs`), the reply and error shapes (`response.rs`),
//! and the tool-choice fallback ([`Client`]).

// The layers below, in scope crate-wide as `crate::Name`.
#[allow(unused_imports)]
use extract_core::*;
#[allow(unused_imports)]
use extract_drive::*;

mod batches;
mod builder;
mod client;
mod request;
mod response;
mod stream;

pub use batches::{Batches, DEFAULT_POLL_INTERVAL, MAX_BATCH_BYTES, MAX_BATCH_REQUESTS, MAX_RESENDS};
pub use builder::{
    API_VERSION, ClientBuilder, DEFAULT_BASE_URL, DEFAULT_MAX_TOKENS, DEFAULT_MODEL, DEFAULT_TIMEOUT,
    DEFAULT_TRANSPORT_RETRIES, Mode,
};
pub use client::Client;
pub use extract_drive::http::DEFAULT_BODY_LIMIT;
