//! The two clients, and testing with [`Scripted`](crate::testing::Scripted).
//!
//! # From the environment
//!
//! [`Extractor::from_env()`](crate::model::FromEnv::from_env) (with
//! `use extract::model::FromEnv`) picks the backend the environment names:
//! `ANTHROPIC_API_KEY` first (Claude; it wins when both are set), else
//! `OPENAI_BASE_URL` or `OPENAI_API_KEY` (an OpenAI-compatible server,
//! feature `openai`). With neither, the error names the variables; a
//! backend whose feature is off is named in the error with the feature to
//! turn on. [`from_vars`](crate::model::FromEnv::from_vars) reads the same from a
//! source of your own (a configuration file, a secrets store, a test's
//! map):
//!
//! ```
//! # #[cfg(feature = "anthropic")] {
//! use extract::model::Model;
//! use extract::{Extractor, model::FromEnv};
//! use std::collections::HashMap;
//!
//! let vars = HashMap::from([("ANTHROPIC_API_KEY", "sk-ant-secret"), ("ANTHROPIC_MODEL", "claude-haiku-5-5")]);
//! let extractor = Extractor::from_vars(|name| vars.get(name).map(|value| value.to_string()))?;
//! assert_eq!(extractor.model().name(), "claude-haiku-5-5");
//! assert!(!format!("{extractor:?}").contains("sk-ant-secret"), "a key never shows");
//!
//! let neither = Extractor::from_vars(|_| None).unwrap_err();
//! assert!(neither.to_string().contains("ANTHROPIC_API_KEY"), "{neither}");
//! # }
//! # Ok::<(), extract::Error>(())
//! ```
//!
//! # Claude: `extract::anthropic::Client`
//!
//! The Messages API (feature `anthropic`, on by default).
//! [`Client::from_env()`](crate::anthropic::Client::from_env) reads
//! `ANTHROPIC_API_KEY` (required), `ANTHROPIC_MODEL` (default
//! `claude-haiku-5-5`), `ANTHROPIC_BASE_URL`, `ANTHROPIC_DOCUMENT_BLOCKS`
//! (`true` or `false`) and `ANTHROPIC_MODE` (`tool` or `json_schema`);
//! `from_vars(lookup)` the same from a source of your own;
//! [`builder()`](crate::anthropic::Client::builder) sets them in code, and
//! `max_tokens`, the timeout and the transport retries.
//!
//! The tool and the document are marked for the prompt cache when long
//! enough to be cached (a PDF always is), so a correction, which sends them
//! again, is cheap. The tool is forced where the model allows it.
//! [`Mode::JsonSchema`](crate::anthropic::Mode::JsonSchema) uses Claude's
//! JSON outputs (`output_config.format`) instead of a tool.
//!
//! ```
//! # #[cfg(feature = "anthropic")] {
//! use extract::anthropic::{Client, Mode};
//!
//! let client = Client::builder()
//!     .api_key("sk-ant-secret")
//!     .model("claude-haiku-5-5")
//!     .max_tokens(4096)
//!     .timeout(std::time::Duration::from_secs(120))
//!     .mode(Mode::JsonSchema)
//!     .build()?;
//! assert!(format!("{client:?}").contains("[redacted]"));
//! # }
//! # Ok::<(), extract::Error>(())
//! ```
//!
//! # OpenAI-compatible servers: `extract::openai::Client`
//!
//! Chat Completions (feature `openai`): OpenAI, Azure OpenAI, vLLM, Ollama,
//! llama.cpp's server, and anything else that speaks it.
//! `Client::from_env()` reads `OPENAI_MODEL` (required: every server names
//! its models its own way), `OPENAI_API_KEY` (local servers need none),
//! `OPENAI_BASE_URL` and `OPENAI_STRICT`. The tool is a forced function
//! tool; `Mode::JsonSchema` sends a `response_format` instead, which local
//! servers enforce while decoding. Documents go as text, so a PDF needs its
//! text layer. `cargo run --example invoice --features openai -- --backend openai`
//! runs the main example against one.
//!
//! ```no_run
//! # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
//! # struct Invoice { total: f64 }
//! # #[cfg(feature = "openai")]
//! # async fn run() -> Result<(), extract::Error> {
//! use extract::openai::{Client, Mode};
//! use extract::Extractor;
//!
//! // A local Ollama server: no key, the response format instead of a tool.
//! let local = Client::builder()
//!     .base_url("http://localhost:11434/v1")
//!     .model("qwen3:8b")
//!     .mode(Mode::JsonSchema)
//!     .build()?;
//! let outcome = Extractor::new(local).extract::<Invoice>("Total: 12.50").await?;
//! # Ok(()) }
//! ```
//!
//! # Failures of the transport
//!
//! Both clients retry transport failures (429, 5xx, 529, timeouts, dropped
//! connections) on their own, as the official SDKs do: these never spend a
//! validation attempt. A failure that outlasts them is an
//! [`Error`](crate::Error); after attempts that failed validation it is
//! [`Error::Interrupted`](crate::Error::Interrupted), with those attempts
//! and the tokens they spent. Keys never appear in `Debug`, errors or
//! traces.
//!
//! # Testing your own extractions
//!
//! [`Scripted::new(replies)`](crate::testing::Scripted::new) answers in
//! order and records every prompt it is sent; clones share both, so a test
//! keeps a clone to read after the run. A reply is:
//!
//! - a `serde_json::Value`: a call of the tool with that input;
//! - [`Reply::text(..)`](crate::model::Reply::text): an answer in words;
//! - [`Reply::refusal(..)`](crate::model::Reply::refusal): a refusal;
//! - [`Reply::truncated()`](crate::model::Reply::truncated): an answer cut
//!   off;
//! - any of them `.with_usage(Usage::new(input, output))`: what it cost.
//!
//! [`prompts()`](crate::testing::Scripted::prompts) shows what the runtime
//! sent, corrections included. Once the script runs dry, a call is an
//! error ([`ScriptExhausted`](crate::testing::ScriptExhausted)).
//!
//! ```
//! use extract::model::Reply;
//! use extract::{Extractable, Extractor, Usage, testing::Scripted};
//! use serde_json::json;
//!
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! struct Receipt { total: f64 }
//!
//! let model = Scripted::new([
//!     Reply::text("The total is 7.50."), // words, not a call of the tool: a retry
//!     Reply::from(json!({"total": 7.5})).with_usage(Usage::new(900, 40)),
//! ]);
//! let outcome = Extractor::new(model.clone()).extract_blocking::<Receipt>("Total 7.50")?;
//! assert_eq!(outcome.attempts(), 2);
//! assert_eq!(outcome.usage().input_tokens, 900);
//! let correction = model.prompts()[1].correction.clone().unwrap();
//! assert_eq!(correction.previous_output, "The total is 7.50.");
//! assert!(correction.violations.contains("calling the tool `receipt`"), "{}", correction.violations);
//! # Ok::<(), extract::Error>(())
//! ```
//!
//! # A backend of your own
//!
//! A backend implements [`Model`](crate::model::Model): one async call from
//! a [`Prompt`](crate::model::Prompt) (its blocks: system, tool, document
//! and, on a correction, the previous output, the violations and the
//! instruction) to a [`Reply`](crate::model::Reply). `Err` is only for
//! transport and configuration failures; a bad answer is still a `Reply`.
//!
//! ```
//! use extract::model::{Model, ModelFuture, Prompt, Reply};
//!
//! /// Always answers with an empty object.
//! struct Empty;
//!
//! impl Model for Empty {
//!     fn call<'a>(&'a self, _prompt: &'a Prompt) -> ModelFuture<'a> {
//!         Box::pin(async { Ok(Reply::tool_call(serde_json::json!({}))) })
//!     }
//!
//!     fn name(&self) -> &str {
//!         "empty-1" // for outcomes, prices and traces
//!     }
//! }
//!
//! let extractor = extract::Extractor::new(Empty);
//! # let _ = extractor;
//! ```
