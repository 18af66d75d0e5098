//! [`Client`]: the [`Model`] implementation over the Chat Completions API:
//! the request, the steps away from a refused forced tool choice, the reply.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use tracing::warn;

use super::builder::{API_KEY_VAR, BASE_URL_VAR, ClientBuilder, MODEL_VAR, Mode, REDACTED};
use super::request::{self, Request, ToolChoice};
use super::response;
use super::stream::Assembly;
use crate::{Chunk, ChunkStream, Error, Model, ModelFuture, Prompt, Reply, chunk_stream};
use extract_drive::http::pace::Demand;
use extract_drive::http::sse::StreamedReply;
use extract_drive::http::transport::{Failure, Settings, Transport};
use extract_drive::queued::Queue;

/// A [`Model`] over the Chat Completions API: OpenAI, Azure OpenAI, vLLM,
/// Ollama, llama.cpp's server, and anything else that speaks it.
///
/// Each call sends one `POST {base_url}/chat/completions`: the system block
/// as a `system` message, then one `user` message whose parts are the
/// document (labelled and fenced, byte for byte) and, on a correction, the
/// previous output, its violations and the instruction. The tool is a forced
/// function tool ([`Mode::Tool`]) or a `json_schema` response format
/// ([`Mode::JsonSchema`]). Transport failures (429, 5xx, timeouts, dropped
/// connections) are retried here and never spend a validation attempt; nor
/// does the resend after a server refuses the forced tool choice. The API
/// key is never shown: not by `Debug`, not in errors, not in tracing output.
///
/// Clones share one HTTP connection pool and one memory of which tool
/// choice the server accepts.
///
/// ```no_run
/// use extract::openai::{Client, Mode};
/// use extract::{Extractable, Extractor, Outcome};
/// # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
/// # struct Invoice { total: f64 }
///
/// # async fn run() -> Result<(), extract::Error> {
/// // Reads OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL and OPENAI_STRICT.
/// let client = Client::from_env()?;
/// println!("{client:?}"); // the key shows as [redacted]
///
/// // A local Ollama server: no key, the response format instead of a tool.
/// let local = Client::builder()
///     .base_url("http://localhost:11434/v1")
///     .model("qwen3:8b")
///     .mode(Mode::JsonSchema)
///     .timeout(std::time::Duration::from_secs(120))
///     .build()?;
/// match Extractor::new(local).extract::<Invoice>("Total: 12.50").await? {
///     Outcome::Valid(invoice) => println!("{:?}", invoice.value()),
///     Outcome::Escalated(escalation) => println!("{escalation}"),
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(super) transport: Transport,
    /// The base URL, credentials masked.
    pub(super) base_url: String,
    pub(super) model: String,
    pub(super) max_tokens: Option<u32>,
    /// Whether the base URL is OpenAI's own API.
    pub(super) openai_api: bool,
    pub(super) strict: bool,
    pub(super) mode: Mode,
    pub(super) has_key: bool,
    pub(super) settings: Settings,
    /// The weakest tool choice a server has asked for, as a [`ToolChoice`].
    pub(super) choice: Arc<AtomicU8>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("api_key", &self.has_key.then_some(REDACTED))
            .field("endpoint", &self.transport.shown_endpoint())
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("strict", &self.strict)
            .field("mode", &self.mode)
            .field("tool_choice", &self.tool_choice())
            .field("timeout", &self.settings.timeout)
            .field("transport_retries", &self.settings.retries)
            .finish()
    }
}

impl Client {
    /// A builder with the defaults: [`DEFAULT_BASE_URL`](super::DEFAULT_BASE_URL),
    /// [`DEFAULT_TIMEOUT`](super::DEFAULT_TIMEOUT),
    /// [`DEFAULT_TRANSPORT_RETRIES`](super::DEFAULT_TRANSPORT_RETRIES),
    /// [`Mode::Tool`], no key, no model.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A client configured from the environment ([`ClientBuilder::from_env`]):
    /// `OPENAI_API_KEY` (optional: local servers need none), `OPENAI_BASE_URL`
    /// (default [`DEFAULT_BASE_URL`](super::DEFAULT_BASE_URL)), `OPENAI_MODEL`
    /// (required) and `OPENAI_STRICT`. `Err(Error::Config)` naming the
    /// variable to set when the model is missing, or the key is missing for
    /// OpenAI's own API.
    pub fn from_env() -> Result<Client, Error> {
        ClientBuilder::from_env()?.build()
    }

    /// The model id requests name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The base URL requests go to (without the trailing `/chat/completions`),
    /// with any user name and password in it masked as `***`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The most tokens a reply may have, when set.
    pub fn max_tokens(&self) -> Option<u32> {
        self.max_tokens
    }

    /// How many times a failed HTTP request is retried.
    pub fn transport_retries(&self) -> u32 {
        self.settings.retries
    }

    /// Whether requests use strict mode (see [`ClientBuilder::strict`]).
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// How requests ask for the tool's input.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The tool choice the next request in [`Mode::Tool`] sends:
    /// [`ToolChoice::Forced`] until the server refuses it, then
    /// [`ToolChoice::Required`], then [`ToolChoice::Auto`] (remembered for
    /// this client and its clones).
    pub fn tool_choice(&self) -> ToolChoice {
        ToolChoice::from_u8(self.choice.load(Ordering::Relaxed))
    }

    /// One model call: the request, its transport retries, and the steps
    /// down from a refused tool choice; whole, or streamed when `chunks`
    /// takes the output as it arrives (then its last chunk, [`Chunk::Done`],
    /// is what the call answers).
    async fn send(&self, prompt: &Prompt, chunks: Option<&Queue<Chunk>>) -> Result<Reply, Error> {
        loop {
            let choice = self.tool_choice();
            let mut body = request::body(
                prompt,
                &Request {
                    model: &self.model,
                    max_tokens: self.max_tokens,
                    openai_api: self.openai_api,
                    strict: self.strict,
                    mode: self.mode,
                    choice,
                },
            )?;
            if chunks.is_some() {
                request::streamed(&mut body);
            }
            let bytes = serde_json::to_vec(&body)
                .map_err(|e| Error::config(format!("cannot serialize the request: {e}")))?;
            let demand =
                Demand { model: &self.model, max_output_tokens: self.max_tokens.map_or(0, u64::from) };
            let answered = match chunks {
                None => match self.transport.post(bytes, response::api_error, demand).await {
                    Ok(answer) => Ok((response::reply(&answer.body, &prompt.tool.name, self.mode)?, answer)),
                    Err(failure) => Err(failure),
                },
                Some(chunks) => {
                    let assembly = Assembly::new(&prompt.tool.name, self.mode);
                    match StreamedReply::post(
                        &self.transport,
                        bytes,
                        response::api_error,
                        demand,
                        assembly,
                        chunks,
                    )
                    .await
                    {
                        Ok((assembly, answer)) => {
                            let reply = assembly
                                .completion()
                                .reply(&prompt.tool.name, self.mode)
                                .ok_or_else(|| {
                                    Error::invalid_response("the Chat Completions API streamed no choices")
                                })?;
                            Ok((reply, answer))
                        }
                        Err(failure) => Err(failure),
                    }
                }
            };
            match answered {
                Ok((reply, answer)) => {
                    answer.settle(&reply.usage);
                    return Ok(reply);
                }
                Err(Failure::Api { status, error, .. })
                    if self.mode == Mode::Tool
                        && choice != ToolChoice::Auto
                        && response::rejects_tool_choice(&error, status) =>
                {
                    let weaker = choice.weaker().unwrap_or(ToolChoice::Auto);
                    self.choice.fetch_max(weaker as u8, Ordering::Relaxed);
                    warn!(
                        model = %self.model,
                        refused = ?choice,
                        now = ?self.tool_choice(),
                        api_message = %error.message,
                        "the server refused the tool_choice; this client now sends a weaker one"
                    );
                }
                Err(failure) => return Err(self.explain(failure)),
            }
        }
    }

    /// The error for `failure`; a 401, 403 or 404 with a hint saying what to check.
    fn explain(&self, failure: Failure) -> Error {
        let Failure::Api { status, mut error, request_id } = failure else { return failure.into() };
        let hint = match status {
            401 if !self.has_key => {
                Some(format!("no API key was sent: set {API_KEY_VAR} or call ClientBuilder::api_key"))
            }
            401 => Some(format!("the server refused the API key: check {API_KEY_VAR}")),
            403 => Some(format!(
                "the API key may not have access to the model `{}` or to this endpoint",
                self.model
            )),
            404 => Some(format!(
                "POST {} for the model `{}`: check that {BASE_URL_VAR} ends with the API's version path \
                 (such as /v1) and that {MODEL_VAR} names a model this server has",
                self.transport.shown_endpoint(),
                self.model
            )),
            _ => None,
        };
        if let Some(hint) = hint {
            error.message =
                if error.message.is_empty() { hint } else { format!("{} ({hint})", error.message) };
        }
        Failure::Api { status, error, request_id }.into()
    }
}

impl Model for Client {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(self.send(prompt, None))
    }

    /// Streams the reply (`"stream": true`, with the usage asked for): the
    /// requested tool's arguments as they are written (in
    /// [`Mode::JsonSchema`], the content), then the reply read by the same
    /// rules as [`call`](Model::call)'s. A stream cut short (no `data:
    /// [DONE]`), or an error event mid-stream, is sent again under the
    /// transport's retries, after a [`Chunk::Restart`].
    fn stream<'a>(&'a self, prompt: &'a Prompt) -> ChunkStream<'a> {
        chunk_stream(|chunks| async move { self.send(prompt, Some(&chunks)).await })
    }

    fn name(&self) -> &str {
        &self.model
    }

    fn provider(&self) -> &str {
        "openai"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> ClientBuilder {
        Client::builder().base_url("http://127.0.0.1:9/v1").model("m")
    }

    #[test]
    fn strict_is_on_for_openai_and_off_elsewhere_unless_set() {
        assert!(!client().build().unwrap().strict());
        assert!(client().strict(true).build().unwrap().strict());
        let openai = Client::builder().api_key("k").model("m").build().unwrap();
        assert!(openai.strict() && openai.openai_api);
        assert!(!Client::builder().api_key("k").model("m").strict(false).build().unwrap().strict());
    }

    #[test]
    fn build_rejects_bad_configuration_without_showing_the_key() {
        let err = client().api_key("sk-secret\nvalue").build().unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{err:?}");
        assert!(!err.to_string().contains("sk-secret"), "{err}");
        let err = Client::builder().base_url("http://127.0.0.1:9/v1").build().unwrap_err();
        assert!(err.to_string().contains("OPENAI_MODEL"), "{err}");
        let err = Client::builder().model("m").build().unwrap_err();
        assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
        let err = client().base_url("ftp://x").build().unwrap_err();
        assert!(err.to_string().contains("http://"), "{err}");
        let err = client().max_tokens(0).build().unwrap_err();
        assert!(err.to_string().contains("max_tokens"), "{err}");
        // A blank key is no key: fine for a local server.
        assert!(!client().api_key("  ").build().unwrap().has_key);
    }

    #[test]
    fn the_endpoint_appends_chat_completions_to_the_base() {
        let client = client().base_url("http://localhost:11434/v1/").build().unwrap();
        assert_eq!(client.base_url(), "http://localhost:11434/v1");
        assert_eq!(client.transport.endpoint(), "http://localhost:11434/v1/chat/completions");
        let masked =
            Client::builder().base_url("http://user:proxy-secret@127.0.0.1:9/v1").model("m").build().unwrap();
        assert_eq!(masked.base_url(), "http://***@127.0.0.1:9/v1");
        assert!(!format!("{masked:?}").contains("proxy-secret"));
    }
}
