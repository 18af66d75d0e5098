#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
//! The OpenAI-compatible backend: [`Client`] implements [`Model`]
//! over the Chat Completions API (`POST {base}/chat/completions`), which
//! OpenAI, Azure OpenAI, vLLM, Ollama and llama.cpp's server speak.
//!
//! Behind the `openai` cargo feature (off by default). How a [`Prompt`]
//! maps to a request, and a reply back to a [`Reply`]:
//!
//! - **Messages.** The system block is a `system` message. One `user`
//!   message follows, made of text parts: the document as its own part,
//!   under the heading `### DOCUMENT` and fenced by a
//!   delimiter that does not occur in it (byte for byte inside the fence; a
//!   PDF sends its text layer, and a PDF without one is a configuration
//!   error naming this backend); on a correction attempt, the previous
//!   output, its violations and the instruction, each fenced under its
//!   label, in one part ([`Prompt::text_after_document`](crate::Prompt::text_after_document)),
//!   exactly as the Anthropic client sends them.
//! - **The tool** ([`Mode::Tool`], the default) is a function tool
//!   `{"type": "function", "function": {"name", "description", "parameters"}}`,
//!   forced with `tool_choice: {"type": "function", "function": {"name"}}`.
//!   A server that answers a forced choice with a 400 about `tool_choice` is
//!   sent `"required"`, then `"auto"` (with a system instruction to answer
//!   only through the tool); the step is remembered for the client's life
//!   (clones share it), and the resend is part of the same call, so it spends
//!   no validation attempt.
//! - **The response format** ([`Mode::JsonSchema`]) sends `response_format:
//!   {"type": "json_schema", "json_schema": {"name", "description", "schema"}}`
//!   instead of a tool: local servers enforce it by constrained decoding. A
//!   system note says that "calling the tool" means answering with its
//!   input object as JSON.
//! - **Strict.** With strict on, the function (or the `json_schema`) carries
//!   `"strict": true` and the strict copy of the schema: [`Tool::strict`](crate::Tool::strict),
//!   then OpenAI's own rules on top (every property listed in `required`,
//!   no `default` keyword, no `$schema`; see [`ClientBuilder::strict`]). On
//!   by default for OpenAI's own API (`api.openai.com`), off for any other
//!   base URL; `ClientBuilder::strict` and `OPENAI_STRICT` override it. A
//!   tool that cannot be made strict is sent as it is, with a warning.
//! - **Replies.** From `choices[0]`, in this order: a `message.refusal` or
//!   `finish_reason: "content_filter"` is a refusal; `"length"` is a
//!   truncated reply (with whatever was cut off); otherwise a tool call
//!   (`finish_reason` `"tool_calls"` or `"stop"` alike) is the call of the
//!   requested tool (else the first call), its `function.arguments` kept as
//!   the raw JSON text the syntax layer parses (text that does not parse is
//!   `invalid_json`); with no call, the text is text (`no_tool_call`). In
//!   [`Mode::JsonSchema`] `message.content` is that JSON text instead.
//! - **Streaming** ([`Model::stream`]). `"stream": true`, with
//!   `stream_options: {"include_usage": true}` so the stream states its
//!   usage. The requested tool's `arguments` deltas (in
//!   [`Mode::JsonSchema`], the `content` deltas) are handed on as they
//!   arrive, and the chunks are assembled into the completion a whole body
//!   holds, read by the rules above. A stream that ends without `data:
//!   [DONE]`, or an `{"error": ...}` event mid-stream, is sent again under
//!   the transport's retries, after a [`Chunk::Restart`].
//! - **Usage.** `prompt_tokens` counts the cached tokens too; they are split
//!   out: `input_tokens = prompt_tokens - prompt_tokens_details.cached_tokens`,
//!   `cache_read_tokens = cached_tokens`, `output_tokens = completion_tokens`
//!   (reasoning tokens included), `cache_write_tokens = 0` (the API reports
//!   none). So `Usage::input_tokens` means uncached input for every backend,
//!   and `Usage::total` is `total_tokens`.
//! - **Transport.** The one every HTTP backend shares: 408, 409, 429, 5xx,
//!   timeouts and dropped connections retried [`DEFAULT_TRANSPORT_RETRIES`]
//!   times, waiting `retry-after-ms` or `retry-after` (up to 60 s), else a
//!   backoff; `x-should-retry` obeyed; a 429 for an exhausted quota
//!   (`insufficient_quota`) and other 4xx come back at once as
//!   [`Error::Api`] with the API's type, message and
//!   `x-request-id` (401, 403 and 404 with a hint saying what to check).
//!   A body past [`DEFAULT_BODY_LIMIT`] is an error naming the limit.
//! - **Secrecy.** The key travels only as `Authorization: Bearer ...`, a
//!   header marked sensitive, and no `Authorization` header is sent without
//!   a key (local servers need none). It appears in no `Debug`, error or
//!   trace; nor do a user name and password in the base URL.
//!
//! `max_tokens` is not sent unless set (the server's own limit applies);
//! when set it is `max_completion_tokens` for OpenAI's own API (which
//! deprecates `max_tokens` and refuses it for reasoning models) and
//! `max_tokens` elsewhere (what every compatible server reads).
//! `temperature`, `top_p`, `parallel_tool_calls` and other sampling fields
//! are never sent: some models refuse them.

// The layers below, in scope crate-wide as `crate::Name`.
#[allow(unused_imports)]
use extract_core::*;
#[allow(unused_imports)]
use extract_drive::*;

mod builder;
mod client;
mod request;
mod response;
mod stream;

pub use builder::{ClientBuilder, DEFAULT_BASE_URL, DEFAULT_TIMEOUT, DEFAULT_TRANSPORT_RETRIES, Mode};
pub use client::Client;
pub use extract_drive::http::DEFAULT_BODY_LIMIT;
pub use request::ToolChoice;
