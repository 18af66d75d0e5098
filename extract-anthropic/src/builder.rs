//! [`ClientBuilder`]: the settings of a [`Client`], checked once when it is built.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};

use super::Client;
use crate::Error;
use extract_drive::http::transport::{Settings, Transport, mask_credentials};

/// The `anthropic-version` header every request carries.
pub const API_VERSION: &str = "2026-10-21";

/// The model used when none is set: the one the model docs recommend for
/// high-volume extraction.
pub const DEFAULT_MODEL: &str = "claude-haiku-5-5";

/// The API's address, used unless a base URL is set.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// `max_tokens` unless set. Thinking tokens count toward it.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The request timeout unless set (the official SDKs' default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Transport retries unless set (the official SDKs' default).
pub const DEFAULT_TRANSPORT_RETRIES: u32 = 2;

/// Models whose documentation says they answer a forced `tool_choice`
/// (`{"type": "tool"}` or `{"type": "any"}`) with a 400. Requests to them use
/// `{"type": "auto"}` with a strict tool from the first call.
pub(crate) const MODELS_REFUSING_FORCED_TOOL_USE: &[&str] =
    &["claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1", "claude-mythos-5-1"];

/// Whether `model` is documented to refuse a forced `tool_choice`: one of
/// [`MODELS_REFUSING_FORCED_TOOL_USE`], or a dated or suffixed id of one.
pub(crate) fn refuses_forced_tool_use(model: &str) -> bool {
    MODELS_REFUSING_FORCED_TOOL_USE
        .iter()
        .any(|id| model == *id || model.strip_prefix(id).is_some_and(|rest| rest.starts_with(['-', '@'])))
}

/// Whether `base_url` is Anthropic's own API, which reads `document` blocks.
fn is_anthropic_api(base_url: &str) -> bool {
    reqwest::Url::parse(base_url.trim()).is_ok_and(|url| url.host_str() == Some("api.anthropic.com"))
}

pub(super) const API_KEY_VAR: &str = "ANTHROPIC_API_KEY";
pub(super) const BASE_URL_VAR: &str = "ANTHROPIC_BASE_URL";
pub(super) const MODEL_VAR: &str = "ANTHROPIC_MODEL";
pub(super) const DOCUMENT_BLOCKS_VAR: &str = "ANTHROPIC_DOCUMENT_BLOCKS";
pub(super) const MODE_VAR: &str = "ANTHROPIC_MODE";

/// How a request asks Claude for the tool's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// The tool, forced where the model allows it (else `auto` with the
    /// strict tool); the input is the `tool_use` block's. The default.
    #[default]
    Tool,
    /// Claude's JSON outputs: `output_config: {"format": {"type":
    /// "json_schema", "schema": ...}}` and no tool; the input is the
    /// reply's text, parsed by the syntax layer. The schema is the tool's
    /// strict copy ([`Tool::strict`](crate::Tool::strict)): JSON outputs
    /// take the same subset as strict tools (every object closed, no
    /// recursion, at most 24 optional and 16 union-typed properties), and a
    /// schema over those limits is an [`Error::Config`] naming the limit,
    /// before any request is sent. Structured outputs are documented for
    /// Claude Opus 4.5 and 4.6, Sonnet 4.5 and 4.6, Haiku 4.5 and later
    /// models; another model answers with a 400 ([`Error::Api`](crate::Error::Api)).
    /// A `refusal` or `max_tokens` stop is a refusal or a truncated reply, as
    /// in tool mode.
    JsonSchema,
}

impl Mode {
    /// `tool` or `json_schema`, as `ANTHROPIC_MODE` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Tool => "tool",
            Mode::JsonSchema => "json_schema",
        }
    }
}
pub(super) const REDACTED: &str = "[redacted]";

/// Configures a [`Client`]; see [`Client::builder`].
#[derive(Clone)]
pub struct ClientBuilder {
    api_key: Option<String>,
    base_url: String,
    model: String,
    max_tokens: u32,
    settings: Settings,
    document_blocks: Option<bool>,
    mode: Mode,
}

impl Default for ClientBuilder {
    fn default() -> ClientBuilder {
        ClientBuilder {
            api_key: None,
            base_url: DEFAULT_BASE_URL.into(),
            document_blocks: None,
            mode: Mode::Tool,
            model: DEFAULT_MODEL.into(),
            max_tokens: DEFAULT_MAX_TOKENS,
            settings: Settings {
                timeout: DEFAULT_TIMEOUT,
                retries: DEFAULT_TRANSPORT_RETRIES,
                ..Settings::default()
            },
        }
    }
}

impl ClientBuilder {
    /// The API key sent as `x-api-key`. Required.
    pub fn api_key(mut self, api_key: impl Into<String>) -> ClientBuilder {
        self.api_key = Some(api_key.into());
        self
    }

    /// The base URL, for proxies and tests; requests go to `{base_url}/v1/messages`.
    /// Default [`DEFAULT_BASE_URL`].
    pub fn base_url(mut self, base_url: impl Into<String>) -> ClientBuilder {
        self.base_url = base_url.into();
        self
    }

    /// Whether the document travels as a `document` block (`true`: a text
    /// source byte for byte, a PDF as base64) or as its own labelled, fenced
    /// text block (`false`: byte for byte; a PDF sends
    /// its text layer). Default: `true` for Anthropic's own API
    /// (`api.anthropic.com`), `false` for any other base URL, because some
    /// servers that speak the Messages API (llama.cpp's `/v1/messages`, say)
    /// drop `document` blocks without a word and the model never sees the
    /// document. `Client::from_env` reads `ANTHROPIC_DOCUMENT_BLOCKS`
    /// (`true` or `false`).
    pub fn document_blocks(mut self, on: bool) -> ClientBuilder {
        self.document_blocks = Some(on);
        self
    }

    /// How requests ask for the input: the tool ([`Mode::Tool`], the
    /// default) or Claude's JSON outputs ([`Mode::JsonSchema`]).
    /// `Client::from_env` reads `ANTHROPIC_MODE` (`tool` or `json_schema`).
    pub fn mode(mut self, mode: Mode) -> ClientBuilder {
        self.mode = mode;
        self
    }

    /// The model id. Default [`DEFAULT_MODEL`]; any id is accepted.
    pub fn model(mut self, model: impl Into<String>) -> ClientBuilder {
        self.model = model.into();
        self
    }

    /// The `max_tokens` of every request (thinking included). Default [`DEFAULT_MAX_TOKENS`].
    pub fn max_tokens(mut self, max_tokens: u32) -> ClientBuilder {
        self.max_tokens = max_tokens;
        self
    }

    /// The client. `Err(Error::Config)` when the key is missing or not a
    /// valid header value, the base URL is not `http(s)://`, `max_tokens` is
    /// 0, or the HTTP stack cannot start. Messages never show the key, nor
    /// credentials in the base URL.
    pub fn build(self) -> Result<Client, Error> {
        let key = self.api_key.as_deref().map(str::trim).unwrap_or_default();
        if key.is_empty() {
            return Err(Error::config(format!(
                "no Anthropic API key: set {API_KEY_VAR} or call ClientBuilder::api_key"
            )));
        }
        let mut api_key = HeaderValue::from_str(key).map_err(|_| {
            Error::config("the Anthropic API key contains characters that cannot be sent in a header")
        })?;
        api_key.set_sensitive(true);
        if self.max_tokens == 0 {
            return Err(Error::config("max_tokens must be at least 1"));
        }
        if self.model.trim().is_empty() {
            return Err(Error::config("the model id is empty"));
        }
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", api_key);
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        let transport =
            Transport::new("Messages API", &self.base_url, "/v1/messages", headers, self.settings)?;
        let document_blocks = self.document_blocks.unwrap_or_else(|| is_anthropic_api(&self.base_url));
        Ok(Client {
            document_blocks,
            mode: self.mode,
            transport,
            base_url: mask_credentials(self.base_url.trim().trim_end_matches('/')),
            model: self.model,
            max_tokens: self.max_tokens,
            settings: self.settings,
            forced_refused: Arc::new(AtomicBool::new(false)),
        })
    }
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("api_key", &self.api_key.as_ref().map(|_| REDACTED))
            .field("base_url", &mask_credentials(&self.base_url))
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("timeout", &self.settings.timeout)
            .field("transport_retries", &self.settings.retries)
            .field("retry_backoff", &(self.settings.backoff_initial, self.settings.backoff_max))
            .field("document_blocks", &self.document_blocks)
            .field("mode", &self.mode)
            .finish()
    }
}

extract_drive::transport_setters!(ClientBuilder);
