//! [`ClientBuilder`]: the settings of a [`Client`], checked once when it is built.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::AtomicU8;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};

use super::Client;
use crate::Error;
use extract_drive::http::transport::{Settings, Transport, mask_credentials};

/// OpenAI's own API, used unless a base URL is set. The base includes the
/// version path; requests go to `{base_url}/chat/completions`.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The request timeout unless set (the official SDKs' default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Transport retries unless set (the official SDKs' default).
pub const DEFAULT_TRANSPORT_RETRIES: u32 = 2;

pub(super) const API_KEY_VAR: &str = "OPENAI_API_KEY";
pub(super) const BASE_URL_VAR: &str = "OPENAI_BASE_URL";
pub(super) const MODEL_VAR: &str = "OPENAI_MODEL";
pub(super) const STRICT_VAR: &str = "OPENAI_STRICT";
pub(super) const REDACTED: &str = "[redacted]";

/// How a request asks for the tool's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// A function tool, forced with `tool_choice` (falling back to
    /// `"required"`, then `"auto"`, where a server refuses forcing); the
    /// input is the call's `function.arguments`. The default.
    #[default]
    Tool,
    /// `response_format: {"type": "json_schema", "json_schema": {...}}` and
    /// no tool: the input is the reply's `message.content`. Local servers
    /// (llama.cpp, vLLM, Ollama) enforce the schema by constrained decoding,
    /// which suits models whose tool calling is weak.
    JsonSchema,
}

/// Whether `base_url` is OpenAI's own API.
pub(super) fn is_openai_api(base_url: &str) -> bool {
    reqwest::Url::parse(base_url.trim()).is_ok_and(|url| url.host_str() == Some("api.openai.com"))
}

/// Configures a [`Client`]; see [`Client::builder`] and [`ClientBuilder::from_env`].
#[derive(Clone)]
pub struct ClientBuilder {
    api_key: Option<String>,
    base_url: String,
    model: Option<String>,
    max_tokens: Option<u32>,
    strict: Option<bool>,
    mode: Mode,
    settings: Settings,
}

impl Default for ClientBuilder {
    fn default() -> ClientBuilder {
        ClientBuilder {
            api_key: None,
            base_url: DEFAULT_BASE_URL.into(),
            model: None,
            max_tokens: None,
            strict: None,
            mode: Mode::Tool,
            settings: Settings {
                timeout: DEFAULT_TIMEOUT,
                retries: DEFAULT_TRANSPORT_RETRIES,
                ..Settings::default()
            },
        }
    }
}

impl ClientBuilder {
    /// A builder holding what the environment sets: `OPENAI_API_KEY`,
    /// `OPENAI_BASE_URL`, `OPENAI_MODEL` and `OPENAI_STRICT` (`true` or
    /// `false`), each when set and not empty. Change anything before
    /// [`build`](ClientBuilder::build), such as the [`Mode`].
    /// `Err(Error::Config)` naming `OPENAI_STRICT` when it holds anything else.
    pub fn from_env() -> Result<ClientBuilder, Error> {
        ClientBuilder::from_vars(|name| std::env::var(name).ok())
    }

    /// The same as [`from_env`](ClientBuilder::from_env), reading each
    /// variable through `lookup` (a configuration file, a secrets store, a
    /// test's map) instead of the process environment.
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<ClientBuilder, Error> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let mut builder = ClientBuilder::default();
        if let Some(key) = var(API_KEY_VAR) {
            builder = builder.api_key(key);
        }
        if let Some(url) = var(BASE_URL_VAR) {
            builder = builder.base_url(url);
        }
        if let Some(model) = var(MODEL_VAR) {
            builder = builder.model(model);
        }
        if let Some(value) = var(STRICT_VAR) {
            builder = builder.strict(match value.trim() {
                "true" => true,
                "false" => false,
                other => {
                    return Err(Error::config(format!(
                        "{STRICT_VAR} is {}: it takes `true` or `false`",
                        crate::quote_prefix(other)
                    )));
                }
            });
        }
        Ok(builder)
    }

    /// The API key, sent as `Authorization: Bearer {key}`. Needed for
    /// OpenAI's own API; local servers (Ollama, llama.cpp, vLLM) need none,
    /// and without a key no `Authorization` header is sent. An empty key is
    /// no key.
    pub fn api_key(mut self, api_key: impl Into<String>) -> ClientBuilder {
        self.api_key = Some(api_key.into());
        self
    }

    /// The base URL, including the API's version path: requests go to
    /// `{base_url}/chat/completions`. Default [`DEFAULT_BASE_URL`]; for a
    /// local server, say `http://localhost:11434/v1` (Ollama) or
    /// `http://localhost:8080/v1` (llama.cpp).
    pub fn base_url(mut self, base_url: impl Into<String>) -> ClientBuilder {
        self.base_url = base_url.into();
        self
    }

    /// The model id (`OPENAI_MODEL`). Required: there is no default, because
    /// every server names its models its own way.
    pub fn model(mut self, model: impl Into<String>) -> ClientBuilder {
        self.model = Some(model.into());
        self
    }

    /// The most tokens a reply may have (reasoning included). Sent as
    /// `max_completion_tokens` to OpenAI's own API and as `max_tokens` to
    /// any other server. Default: not sent, so the server's own limit
    /// applies (a fixed default would exceed the context of small local
    /// models, which some servers answer with a 400).
    pub fn max_tokens(mut self, max_tokens: u32) -> ClientBuilder {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Whether requests use strict mode: the function (or the `json_schema`)
    /// carries `"strict": true` and the strict copy of the schema
    /// ([`Tool::strict`](crate::Tool::strict), then OpenAI's rules: every
    /// property listed in `required`, the `default` keyword restated in the
    /// description, `$schema` dropped). A property that was optional stays
    /// nullable if it was (`Option`: null means absent); one that was not
    /// (`#[serde(default)]`) must then be given, and its description names
    /// the default to give when the document does not state it.
    ///
    /// Default: on for OpenAI's own API (`api.openai.com`), which supports
    /// it; off for any other base URL, where support varies (and local
    /// servers constrain decoding to the schema as sent anyway).
    /// `ClientBuilder::from_env` reads `OPENAI_STRICT` (`true` or `false`).
    pub fn strict(mut self, on: bool) -> ClientBuilder {
        self.strict = Some(on);
        self
    }

    /// How requests ask for the tool's input: a forced function tool
    /// ([`Mode::Tool`], the default) or a `json_schema` response format
    /// ([`Mode::JsonSchema`]).
    pub fn mode(mut self, mode: Mode) -> ClientBuilder {
        self.mode = mode;
        self
    }

    /// The client. `Err(Error::Config)` when no model is set, OpenAI's own
    /// API is used without a key, the key is not a valid header value, the
    /// base URL is not `http(s)://`, `max_tokens` is 0, or the HTTP stack
    /// cannot start. Messages never show the key, nor credentials in the
    /// base URL.
    pub fn build(self) -> Result<Client, Error> {
        let openai_api = is_openai_api(&self.base_url);
        let key = self.api_key.as_deref().map(str::trim).filter(|k| !k.is_empty());
        let model = self.model.as_deref().map(str::trim).filter(|m| !m.is_empty()).ok_or_else(|| {
            Error::config(format!("no model: set {MODEL_VAR} or call ClientBuilder::model"))
        })?;
        if key.is_none() && openai_api {
            return Err(Error::config(format!(
                "no OpenAI API key: set {API_KEY_VAR} or call ClientBuilder::api_key \
                 (OpenAI's own API needs one; a local server set with {BASE_URL_VAR} does not)"
            )));
        }
        if self.max_tokens == Some(0) {
            return Err(Error::config("max_tokens must be at least 1"));
        }
        let mut headers = HeaderMap::new();
        if let Some(key) = key {
            let mut bearer = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                Error::config("the OpenAI API key contains characters that cannot be sent in a header")
            })?;
            bearer.set_sensitive(true);
            headers.insert(AUTHORIZATION, bearer);
        }
        let transport = Transport::new(
            "Chat Completions API",
            &self.base_url,
            "/chat/completions",
            headers,
            self.settings,
        )?;
        Ok(Client {
            transport,
            base_url: mask_credentials(self.base_url.trim().trim_end_matches('/')),
            model: model.to_string(),
            max_tokens: self.max_tokens,
            openai_api,
            strict: self.strict.unwrap_or(openai_api),
            mode: self.mode,
            has_key: key.is_some(),
            settings: self.settings,
            choice: Arc::new(AtomicU8::new(0)),
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
            .field("strict", &self.strict)
            .field("mode", &self.mode)
            .field("timeout", &self.settings.timeout)
            .field("transport_retries", &self.settings.retries)
            .field("retry_backoff", &(self.settings.backoff_initial, self.settings.backoff_max))
            .field("body_limit", &self.settings.body_limit)
            .finish()
    }
}

extract_drive::transport_setters!(ClientBuilder);
