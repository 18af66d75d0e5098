//! [`Client`]: configuration, the HTTP exchange with its transport retries,
//! and the [`Model`] implementation.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use tracing::{debug, warn};

use super::request::{self, ToolChoice};
use super::response::{self, ApiError};
use super::retry;
use crate::{Error, Model, ModelFuture, Prompt, Reply};

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
pub const MODELS_REFUSING_FORCED_TOOL_USE: &[&str] =
    &["claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1", "claude-mythos-5-1"];

/// Whether `model` is documented to refuse a forced `tool_choice`: one of
/// [`MODELS_REFUSING_FORCED_TOOL_USE`], or a dated or suffixed id of one.
pub fn refuses_forced_tool_use(model: &str) -> bool {
    MODELS_REFUSING_FORCED_TOOL_USE
        .iter()
        .any(|id| model == *id || model.strip_prefix(id).is_some_and(|rest| rest.starts_with(['-', '@'])))
}

const API_KEY_VAR: &str = "ANTHROPIC_API_KEY";
const BASE_URL_VAR: &str = "ANTHROPIC_BASE_URL";
const MODEL_VAR: &str = "ANTHROPIC_MODEL";
const REDACTED: &str = "[redacted]";

/// A [`Model`] backed by Claude through the Messages API.
///
/// Each call sends one `POST {base}/v1/messages` with the prompt mapped to
/// content blocks (the document as a cached `document` block, the correction
/// as labelled text blocks), the tool cached, and the tool forced where the
/// model allows it. Transport failures (429, 5xx, 529, timeouts, dropped
/// connections) are retried here, as the official SDKs do; they never spend
/// a validation attempt. The API key is never shown: not by `Debug`, not in
/// errors, not in tracing output.
///
/// Clones share one HTTP connection pool and one memory of whether the model
/// refused a forced tool choice.
///
/// ```no_run
/// use extract_core::Model;
/// use extract_core::anthropic::Client;
///
/// # async fn run(prompt: extract_core::Prompt) -> Result<(), extract_core::Error> {
/// // Reads ANTHROPIC_API_KEY, and ANTHROPIC_BASE_URL / ANTHROPIC_MODEL if set.
/// let client = Client::from_env()?;
/// println!("{client:?}"); // the key shows as [redacted]
///
/// // Or configure everything in code.
/// let client = Client::builder()
///     .api_key("sk-ant-...")
///     .model("claude-haiku-5-5")
///     .max_tokens(4096)
///     .timeout(std::time::Duration::from_secs(120))
///     .transport_retries(3)
///     .build()?;
/// let reply = client.call(&prompt).await?;
/// println!("{:?} ({} tokens)", reply.content, reply.usage.total());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    endpoint: String,
    /// `endpoint` with any user and password in the URL masked, for messages and traces.
    shown_endpoint: String,
    base_url: String,
    api_key: HeaderValue,
    model: String,
    max_tokens: u32,
    timeout: Duration,
    transport_retries: u32,
    backoff_initial: Duration,
    backoff_max: Duration,
    forced_refused: Arc<AtomicBool>,
}

/// Configures a [`Client`]; see [`Client::builder`].
#[derive(Clone)]
pub struct ClientBuilder {
    api_key: Option<String>,
    base_url: String,
    model: String,
    max_tokens: u32,
    timeout: Duration,
    transport_retries: u32,
    backoff_initial: Duration,
    backoff_max: Duration,
}

impl Default for ClientBuilder {
    fn default() -> ClientBuilder {
        ClientBuilder {
            api_key: None,
            base_url: DEFAULT_BASE_URL.into(),
            model: DEFAULT_MODEL.into(),
            max_tokens: DEFAULT_MAX_TOKENS,
            timeout: DEFAULT_TIMEOUT,
            transport_retries: DEFAULT_TRANSPORT_RETRIES,
            backoff_initial: Duration::from_millis(500),
            backoff_max: Duration::from_secs(8),
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

    /// How long one HTTP request may take, from connecting to the end of the
    /// body. A request that takes longer is a transport failure (and retried).
    /// Default [`DEFAULT_TIMEOUT`].
    pub fn timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.timeout = timeout;
        self
    }

    /// How many times a failed HTTP request is retried (so a call makes at
    /// most `transport_retries + 1` requests). These never spend a validation
    /// attempt. Default [`DEFAULT_TRANSPORT_RETRIES`].
    pub fn transport_retries(mut self, retries: u32) -> ClientBuilder {
        self.transport_retries = retries;
        self
    }

    /// The backoff used when the server gives no usable `retry-after`:
    /// `initial` doubling per retry up to `max`, less up to 25 % jitter.
    /// Default 0.5 s and 8 s, as in the official SDKs; tests set it lower.
    pub fn retry_backoff(mut self, initial: Duration, max: Duration) -> ClientBuilder {
        self.backoff_initial = initial;
        self.backoff_max = max.max(initial);
        self
    }

    /// The client. `Err(Error::Config)` when the key is missing or not a
    /// valid header value, the base URL is not `http(s)://`, `max_tokens` is
    /// 0, or the HTTP stack cannot start.
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

        let base_url = self.base_url.trim().trim_end_matches('/').to_owned();
        let parsed = reqwest::Url::parse(&base_url)
            .map_err(|e| Error::config(format!("base URL `{base_url}` is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::config(format!("base URL `{base_url}` must start with http:// or https://")));
        }
        if self.max_tokens == 0 {
            return Err(Error::config("max_tokens must be at least 1"));
        }
        if self.model.trim().is_empty() {
            return Err(Error::config("the model id is empty"));
        }

        let http = reqwest::Client::builder()
            .timeout(self.timeout)
            .user_agent(concat!("extract/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::config(format!("cannot start the HTTP client: {e}")))?;

        let mut shown = parsed.clone();
        if !shown.username().is_empty() || shown.password().is_some() {
            // A proxy's credentials in the URL stay out of messages and traces.
            let _ = shown.set_username("***");
            let _ = shown.set_password(None);
        }
        let shown_endpoint = format!("{}/v1/messages", shown.as_str().trim_end_matches('/'));
        Ok(Client {
            http,
            endpoint: format!("{base_url}/v1/messages"),
            shown_endpoint,
            base_url,
            api_key,
            model: self.model,
            max_tokens: self.max_tokens,
            timeout: self.timeout,
            transport_retries: self.transport_retries,
            backoff_initial: self.backoff_initial,
            backoff_max: self.backoff_max,
            forced_refused: Arc::new(AtomicBool::new(false)),
        })
    }
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("api_key", &self.api_key.as_ref().map(|_| REDACTED))
            .field("base_url", &if self.base_url.contains('@') { REDACTED } else { self.base_url.as_str() })
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("timeout", &self.timeout)
            .field("transport_retries", &self.transport_retries)
            .field("retry_backoff", &(self.backoff_initial, self.backoff_max))
            .finish()
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("api_key", &REDACTED)
            .field("endpoint", &self.shown_endpoint)
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("timeout", &self.timeout)
            .field("transport_retries", &self.transport_retries)
            .field("forces_tool_choice", &self.forces_tool_choice())
            .finish()
    }
}

/// Why one exchange failed, before it becomes an [`Error`].
enum Failure {
    Api { status: u16, error: ApiError, request_id: Option<String> },
    Transport(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Api { status, error, .. } => {
                write!(f, "HTTP {status} {}: {}", error.error_type, error.message)
            }
            Failure::Transport(message) => f.write_str(message),
        }
    }
}

impl Client {
    /// A builder with the defaults: [`DEFAULT_MODEL`], [`DEFAULT_BASE_URL`],
    /// [`DEFAULT_MAX_TOKENS`], [`DEFAULT_TIMEOUT`], [`DEFAULT_TRANSPORT_RETRIES`].
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A client configured from the environment: `ANTHROPIC_API_KEY`
    /// (required), and `ANTHROPIC_BASE_URL` and `ANTHROPIC_MODEL` when set.
    /// `Err(Error::Config)` naming `ANTHROPIC_API_KEY` when it is absent or empty.
    pub fn from_env() -> Result<Client, Error> {
        let api_key = std::env::var(API_KEY_VAR).ok().filter(|k| !k.trim().is_empty()).ok_or_else(|| {
            Error::config(format!("{API_KEY_VAR} is not set: export your Anthropic API key to run live"))
        })?;
        let mut builder = Client::builder().api_key(api_key);
        if let Some(url) = std::env::var(BASE_URL_VAR).ok().filter(|v| !v.trim().is_empty()) {
            builder = builder.base_url(url);
        }
        if let Some(model) = std::env::var(MODEL_VAR).ok().filter(|v| !v.trim().is_empty()) {
            builder = builder.model(model);
        }
        builder.build()
    }

    /// The model id requests name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The base URL requests go to (without the trailing `/v1/messages`).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The `max_tokens` of every request.
    pub fn max_tokens(&self) -> u32 {
        self.max_tokens
    }

    /// How many times a failed HTTP request is retried.
    pub fn transport_retries(&self) -> u32 {
        self.transport_retries
    }

    /// Whether the next request forces the tool (`{"type": "tool"}`): false
    /// for the models documented to refuse it, and, for any model, once it has
    /// answered a forced choice with a 400 (remembered for this client and its clones).
    pub fn forces_tool_choice(&self) -> bool {
        !refuses_forced_tool_use(&self.model) && !self.forced_refused.load(Ordering::Relaxed)
    }

    /// One model call: the request, its transport retries, and the switch to
    /// `auto` + strict when a forced choice is refused.
    async fn send(&self, prompt: &Prompt) -> Result<Reply, Error> {
        let mut choice = if self.forces_tool_choice() { ToolChoice::Forced } else { ToolChoice::AutoStrict };
        loop {
            let body = request::body(prompt, &self.model, self.max_tokens, choice);
            let bytes = serde_json::to_vec(&body)
                .map_err(|e| Error::config(format!("cannot serialize the request: {e}")))?;
            match self.post(bytes).await {
                Ok(body) => return response::reply(&body, &prompt.tool.name),
                Err(Failure::Api { status, error, .. })
                    if choice == ToolChoice::Forced && error.rejects_forced_tool_choice(status) =>
                {
                    self.forced_refused.store(true, Ordering::Relaxed);
                    warn!(
                        model = %self.model,
                        api_message = %error.message,
                        "the model refused a forced tool_choice; this client now sends tool_choice auto with a strict tool"
                    );
                    choice = ToolChoice::AutoStrict;
                }
                Err(Failure::Api { status, error, request_id }) => {
                    return Err(Error::api(status, error.error_type, error.message, request_id));
                }
                Err(Failure::Transport(message)) => return Err(Error::transport(message)),
            }
        }
    }

    /// POSTs `body`, retrying per the transport policy; the success body, or the last failure.
    async fn post(&self, body: Vec<u8>) -> Result<Vec<u8>, Failure> {
        let mut retry = 0;
        loop {
            let (failure, server_delay, retryable) = match self.post_once(body.clone()).await {
                Ok((status, _, body)) if (200..300).contains(&status) => return Ok(body),
                Ok((status, headers, body)) => {
                    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
                    let error = response::api_error(status, &body);
                    let retryable = retry::should_retry_status(
                        status,
                        header("x-should-retry"),
                        error.error_code.as_deref(),
                    );
                    let server_delay = retry::server_delay(
                        header("retry-after-ms"),
                        header("retry-after"),
                        SystemTime::now(),
                    );
                    let request_id =
                        header("request-id").map(str::to_owned).or_else(|| error.request_id.clone());
                    debug!(
                        status,
                        request_id = request_id.as_deref().unwrap_or(""),
                        "Messages API error response"
                    );
                    (Failure::Api { status, error, request_id }, server_delay, retryable)
                }
                Err(message) => (Failure::Transport(message), None, true),
            };
            if !retryable || retry >= self.transport_retries {
                return Err(match failure {
                    Failure::Transport(message) if retry > 0 => {
                        Failure::Transport(format!("{message} (after {} attempts)", retry + 1))
                    }
                    failure => failure,
                });
            }
            let wait =
                retry::delay(retry, server_delay, self.backoff_initial, self.backoff_max, fastrand::f64());
            retry += 1;
            warn!(
                retry,
                of = self.transport_retries,
                wait_ms = wait.as_millis() as u64,
                reason = %failure,
                "retrying the Messages API request"
            );
            tokio::time::sleep(wait).await;
        }
    }

    /// One HTTP exchange: status, headers and the whole body, or why there was none.
    async fn post_once(&self, body: Vec<u8>) -> Result<(u16, HeaderMap, Vec<u8>), String> {
        let response = self
            .http
            .post(&self.endpoint)
            .header("x-api-key", self.api_key.clone())
            .header("anthropic-version", API_VERSION)
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| self.describe(&e, "sending the request"))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.bytes().await.map_err(|e| self.describe(&e, "reading the response body"))?;
        Ok((status, headers, body.to_vec()))
    }

    /// A transport failure in words, with its causes (never the request's headers).
    fn describe(&self, error: &reqwest::Error, during: &str) -> String {
        let what = if error.is_timeout() {
            format!("the Messages API did not answer within the {:?} timeout", self.timeout)
        } else if error.is_connect() {
            format!("could not connect to {}", self.shown_endpoint)
        } else if error.is_body() || error.is_decode() {
            format!("the response body from {} was cut short or unreadable", self.shown_endpoint)
        } else {
            format!("the request to {} failed", self.shown_endpoint)
        };
        let mut causes = Vec::new();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            causes.push(cause.to_string());
            source = cause.source();
        }
        if causes.is_empty() {
            format!("{what} while {during}")
        } else {
            format!("{what} while {during}: {}", causes.join(": "))
        }
    }
}

impl Model for Client {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(self.send(prompt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_models_refuse_forced_tool_use() {
        for model in
            ["claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1", "claude-sonnet-5-5-20261001"]
        {
            assert!(refuses_forced_tool_use(model), "{model}");
        }
        for model in ["claude-haiku-5-5", "claude-sonnet-5", "claude-opus-5-55", "claude-opus-4-8"] {
            assert!(!refuses_forced_tool_use(model), "{model}");
        }
    }

    #[test]
    fn build_rejects_bad_configuration_without_showing_the_key() {
        let secret = "sk-ant-secret\nvalue";
        let err = Client::builder().api_key(secret).build().unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{err:?}");
        assert!(!err.to_string().contains("sk-ant-secret"), "{err}");

        let err = Client::builder().build().unwrap_err();
        assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
        let err = Client::builder().api_key("k").base_url("ftp://x").build().unwrap_err();
        assert!(err.to_string().contains("http://"), "{err}");
        let err = Client::builder().api_key("k").max_tokens(0).build().unwrap_err();
        assert!(err.to_string().contains("max_tokens"), "{err}");
    }

    #[test]
    fn credentials_in_the_base_url_stay_out_of_debug_and_messages() {
        let client =
            Client::builder().api_key("k").base_url("http://user:proxy-secret@127.0.0.1:9").build().unwrap();
        assert!(!format!("{client:?}").contains("proxy-secret"));
        assert!(!client.shown_endpoint.contains("proxy-secret"));
        assert_eq!(client.shown_endpoint, "http://***@127.0.0.1:9/v1/messages");
        let builder = Client::builder().base_url("http://user:proxy-secret@127.0.0.1:9");
        assert!(!format!("{builder:?}").contains("proxy-secret"));
    }

    #[test]
    fn base_url_loses_its_trailing_slash() {
        let client = Client::builder().api_key("k").base_url("http://localhost:9/proxy/").build().unwrap();
        assert_eq!(client.base_url(), "http://localhost:9/proxy");
        assert_eq!(client.endpoint, "http://localhost:9/proxy/v1/messages");
    }
}
