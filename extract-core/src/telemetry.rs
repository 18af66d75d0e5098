//! The names `extract`'s traces use: OpenTelemetry's GenAI semantic
//! conventions where they have a name for what is recorded, `extract.*`
//! where they do not. Written once here, with the version they follow, so
//! a change of the conventions (still marked Development) is one edit.
//!
//! Spans are `tracing` spans whose `otel.name` and `otel.kind` fields
//! carry OpenTelemetry's span name and kind, so `tracing-opentelemetry`
//! exports them as the conventions describe:
//!
//! - `extract {tool}` (internal): one extraction, with the document's id and
//!   size, then its outcome, reason, attempts, summed usage and cost;
//! - `chat {model}` (client): one model call, a child of its extraction,
//!   with the request's model and provider and the response's id, model,
//!   finish reason and usage;
//! - `validation` events: each reply judged, with the violations' codes
//!   and paths (never values);
//! - `extract.run {tool}`: a `Bulk` or `Batches` run, to which each
//!   document's extraction (a root span of its own) is linked.

/// The version of the GenAI semantic conventions these names follow.
pub const CONVENTIONS: &str = "semantic-conventions-genai 1.38 (Development)";

/// OpenTelemetry's span name, as a `tracing` field.
pub const OTEL_NAME: &str = "otel.name";
/// OpenTelemetry's span kind, as a `tracing` field (`client`, `internal`).
pub const OTEL_KIND: &str = "otel.kind";

/// The operation: `chat` for a model call.
pub const OPERATION_NAME: &str = "gen_ai.operation.name";
/// Who serves the model: `anthropic`, `openai`, ...
pub const PROVIDER_NAME: &str = "gen_ai.provider.name";
/// The model the request named.
pub const REQUEST_MODEL: &str = "gen_ai.request.model";
/// The model that answered, as the API named it.
pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
/// The API's id of the response.
pub const RESPONSE_ID: &str = "gen_ai.response.id";
/// Why the model stopped (`tool_use`, `end_turn`, `max_tokens`, ...).
pub const RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
/// All input tokens: uncached, cache reads and cache writes.
pub const USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// Output tokens.
pub const USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// Input tokens read from the prompt cache.
pub const USAGE_CACHE_READ_INPUT_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";
/// Input tokens written to the prompt cache.
pub const USAGE_CACHE_CREATION_INPUT_TOKENS: &str = "gen_ai.usage.cache_creation.input_tokens";
/// The class of a failure (`transport`, `rate_limited`, ...).
pub const ERROR_TYPE: &str = "error.type";

/// The extracted type's tool.
pub const TOOL: &str = "extract.tool";
/// The document's id.
pub const DOCUMENT_ID: &str = "extract.document.id";
/// The document's size in bytes.
pub const DOCUMENT_BYTES: &str = "extract.document.bytes";
/// `valid` or `escalated`.
pub const OUTCOME: &str = "extract.outcome";
/// An escalation's reason (`not_recoverable`, `systematic`, `budget_exhausted`).
pub const REASON: &str = "extract.reason";
/// Model calls an extraction made.
pub const ATTEMPTS: &str = "extract.attempts";
/// The rung of the ladder of models that settled an extraction (0: the first model).
pub const RUNG: &str = "extract.rung";
/// What an extraction cost, in US dollars.
pub const COST_USD: &str = "extract.cost_usd";
/// The attempt a model call was (1-based).
pub const ATTEMPT: &str = "extract.attempt";
/// Whether a reply passed every layer.
pub const VALID: &str = "extract.valid";
/// The layer whose violations a reply broke.
pub const LAYER: &str = "extract.violation.layer";
/// The violations' codes, comma-separated, each once.
pub const CODES: &str = "extract.violation.codes";
/// The violations' paths, comma-separated, each once (JSON names, no values).
pub const PATHS: &str = "extract.violation.paths";
/// The target of the events that carry metrics (`tracing-opentelemetry`'s
/// metrics layer reads them; a trace layer leaves them out).
pub const METRICS_TARGET: &str = "extract::metrics";
/// A histogram of tokens per call, by `gen_ai.token.type` (`input`, `output`).
pub const TOKEN_USAGE_METRIC: &str = "histogram.gen_ai.client.token.usage";
/// A histogram of a call's duration, in seconds.
pub const OPERATION_DURATION_METRIC: &str = "histogram.gen_ai.client.operation.duration";
/// The type of the tokens a `gen_ai.client.token.usage` value counts.
pub const TOKEN_TYPE: &str = "gen_ai.token.type";
/// A counter of outcomes, by `extract.outcome` and `extract.reason`.
pub const OUTCOMES_METRIC: &str = "monotonic_counter.extract.outcomes";
/// A histogram of the attempts an outcome took.
pub const ATTEMPTS_METRIC: &str = "histogram.extract.attempts";

/// The model's output (only with content capture on: it is personal data).
pub const OUTPUT: &str = "extract.output";
/// The document's text (only with content capture on).
pub const DOCUMENT_TEXT: &str = "extract.document.text";
/// A run's documents, and how many ended valid and escalated.
pub const RUN_DOCUMENTS: &str = "extract.run.documents";
/// A run's valid outcomes.
pub const RUN_VALID: &str = "extract.run.valid";
/// A run's escalated outcomes.
pub const RUN_ESCALATED: &str = "extract.run.escalated";
/// A run's documents that failed (transport, configuration).
pub const RUN_FAILED: &str = "extract.run.failed";
