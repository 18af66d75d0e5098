//! [`Client`]: the [`Model`] implementation over the Messages API: the
//! request, the switch away from a refused forced tool choice, the reply.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tracing::warn;

use super::builder::{
    API_KEY_VAR, BASE_URL_VAR, ClientBuilder, DOCUMENT_BLOCKS_VAR, MODE_VAR, MODEL_VAR, Mode, REDACTED,
    refuses_forced_tool_use,
};
use super::request::{self, Ask, DocumentAs, ToolChoice};
use super::response;
use super::stream::Assembly;
use crate::{Chunk, ChunkStream, Error, Model, ModelFuture, Prompt, Reply, chunk_stream};
use extract_drive::http::pace::Demand;
use extract_drive::http::sse::StreamedReply;
use extract_drive::http::transport::{Failure, Settings, Transport};
use extract_drive::queued::Queue;

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
/// use extract::model::Model;
/// use extract::anthropic::Client;
///
/// # async fn run(prompt: extract::model::Prompt) -> Result<(), extract::Error> {
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
    pub(super) transport: Transport,
    /// The base URL, credentials masked.
    pub(super) base_url: String,
    pub(super) model: String,
    pub(super) max_tokens: u32,
    pub(super) settings: Settings,
    pub(super) forced_refused: Arc<AtomicBool>,
    pub(super) document_blocks: bool,
    pub(super) mode: Mode,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("api_key", &REDACTED)
            .field("endpoint", &self.transport.shown_endpoint())
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("timeout", &self.settings.timeout)
            .field("transport_retries", &self.settings.retries)
            .field("forces_tool_choice", &self.forces_tool_choice())
            .field("document_blocks", &self.document_blocks)
            .field("mode", &self.mode)
            .finish()
    }
}

impl Client {
    /// A builder with the defaults: [`DEFAULT_MODEL`](super::DEFAULT_MODEL), [`DEFAULT_BASE_URL`](super::DEFAULT_BASE_URL),
    /// [`DEFAULT_MAX_TOKENS`](super::DEFAULT_MAX_TOKENS), [`DEFAULT_TIMEOUT`](super::DEFAULT_TIMEOUT), [`DEFAULT_TRANSPORT_RETRIES`](super::DEFAULT_TRANSPORT_RETRIES).
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A client configured from the environment: `ANTHROPIC_API_KEY`
    /// (required), and `ANTHROPIC_BASE_URL`, `ANTHROPIC_MODEL`,
    /// `ANTHROPIC_DOCUMENT_BLOCKS` (`true` or `false`) and `ANTHROPIC_MODE`
    /// (`tool` or `json_schema`) when set.
    /// `Err(Error::Config)` naming `ANTHROPIC_API_KEY` when it is absent or empty.
    pub fn from_env() -> Result<Client, Error> {
        Client::from_vars(|name| std::env::var(name).ok())
    }

    /// The same as [`from_env`](Client::from_env), reading each variable
    /// through `lookup` (a configuration file, a secrets store, a test's map)
    /// instead of the process environment.
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Client, Error> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let api_key = var(API_KEY_VAR).ok_or_else(|| {
            Error::config(format!("{API_KEY_VAR} is not set: export your Anthropic API key to run live"))
        })?;
        let mut builder = Client::builder().api_key(api_key);
        if let Some(url) = var(BASE_URL_VAR) {
            builder = builder.base_url(url);
        }
        if let Some(model) = var(MODEL_VAR) {
            builder = builder.model(model);
        }
        if let Some(value) = var(DOCUMENT_BLOCKS_VAR) {
            builder = builder.document_blocks(match value.trim() {
                "true" => true,
                "false" => false,
                other => {
                    return Err(Error::config(format!(
                        "{DOCUMENT_BLOCKS_VAR} is {}: it takes `true` or `false`",
                        crate::quote_prefix(other)
                    )));
                }
            });
        }
        if let Some(value) = var(MODE_VAR) {
            builder = builder.mode(match value.trim() {
                "tool" => Mode::Tool,
                "json_schema" => Mode::JsonSchema,
                other => {
                    return Err(Error::config(format!(
                        "{MODE_VAR} is {}: it takes `tool` or `json_schema`",
                        crate::quote_prefix(other)
                    )));
                }
            });
        }
        builder.build()
    }

    /// How requests ask for the input ([`ClientBuilder::mode`]).
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether the document travels as a `document` block (see
    /// [`ClientBuilder::document_blocks`]).
    pub fn document_blocks(&self) -> bool {
        self.document_blocks
    }

    /// The model id requests name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The base URL requests go to (without the trailing `/v1/messages`),
    /// with any user name and password in it masked as `***`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The `max_tokens` of every request.
    pub fn max_tokens(&self) -> u32 {
        self.max_tokens
    }

    /// How many times a failed HTTP request is retried.
    pub fn transport_retries(&self) -> u32 {
        self.settings.retries
    }

    /// Whether the next request forces the tool (`{"type": "any"}`): false
    /// for the models documented to refuse it, and, for any model, once it has
    /// answered a forced choice with a 400 (remembered for this client and its clones).
    pub fn forces_tool_choice(&self) -> bool {
        !refuses_forced_tool_use(&self.model) && !self.forced_refused.load(Ordering::Relaxed)
    }

    /// One model call: the request, its transport retries, and the switch to
    /// `auto` + strict when a forced choice is refused.
    /// One call of `prompt`, whole, or streamed when `chunks` takes the
    /// output as it arrives (then its last chunk, [`Chunk::Done`], is what
    /// the call answers).
    async fn send(&self, prompt: &Prompt, chunks: Option<&Queue<Chunk>>) -> Result<Reply, Error> {
        let mut choice = if self.forces_tool_choice() { ToolChoice::Forced } else { ToolChoice::AutoStrict };
        loop {
            let document_as = if self.document_blocks { DocumentAs::Block } else { DocumentAs::Text };
            let mut body =
                request::body(prompt, &self.model, self.max_tokens, self.ask(choice), document_as)?;
            if chunks.is_some() {
                request::streamed(&mut body, document_as);
            }
            let bytes = serde_json::to_vec(&body)
                .map_err(|e| Error::config(format!("cannot serialize the request: {e}")))?;
            let demand = Demand { model: &self.model, max_output_tokens: u64::from(self.max_tokens) };
            let answered = match chunks {
                None => match self.transport.post(bytes, response::api_error, demand).await {
                    Ok(answer) => Ok((response::reply(&answer.body, &prompt.tool.name, self.mode)?, answer)),
                    Err(failure) => Err(failure),
                },
                Some(chunks) => {
                    let assembly = Assembly::new(&prompt.tool.name, self.mode);
                    StreamedReply::post(&self.transport, bytes, response::api_error, demand, assembly, chunks)
                        .await
                        .map(|(assembly, answer)| {
                            (assembly.message().reply(&prompt.tool.name, self.mode), answer)
                        })
                }
            };
            match answered {
                Ok((reply, answer)) => {
                    answer.settle(&reply.usage);
                    return Ok(reply);
                }
                Err(Failure::Api { status, error, .. })
                    if choice == ToolChoice::Forced
                        && self.mode == Mode::Tool
                        && response::rejects_forced_tool_choice(&error, status) =>
                {
                    self.forced_refused.store(true, Ordering::Relaxed);
                    warn!(
                        model = %self.model,
                        api_message = %error.message,
                        "the model refused a forced tool_choice; this client now sends tool_choice auto with a strict tool"
                    );
                    choice = ToolChoice::AutoStrict;
                }
                Err(failure) => return Err(failure.into()),
            }
        }
    }
}

impl Client {
    /// How a request asks for the input: in tool mode, with `choice`.
    pub(super) fn ask(&self, choice: ToolChoice) -> Ask {
        match self.mode {
            Mode::Tool => Ask::Tool(choice),
            Mode::JsonSchema => Ask::Json,
        }
    }
}

impl Model for Client {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(self.send(prompt, None))
    }

    /// Streams the Messages API's reply (`"stream": true`): the requested
    /// tool's input as it is written (with JSON outputs, the text), then
    /// the reply read by the same rules as [`call`](Model::call)'s. A
    /// stream cut short, or an `error` event mid-stream
    /// (`overloaded_error`), is sent again under the transport's retries,
    /// after a [`Chunk::Restart`].
    fn stream<'a>(&'a self, prompt: &'a Prompt) -> ChunkStream<'a> {
        chunk_stream(|chunks| async move { self.send(prompt, Some(&chunks)).await })
    }

    fn name(&self) -> &str {
        &self.model
    }

    fn provider(&self) -> &str {
        "anthropic"
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
        assert!(!client.transport.shown_endpoint().contains("proxy-secret"));
        assert_eq!(client.transport.shown_endpoint(), "http://***@127.0.0.1:9/v1/messages");
        assert_eq!(client.base_url(), "http://***@127.0.0.1:9");
        let builder = Client::builder().base_url("http://user:proxy-secret@127.0.0.1:9");
        assert!(!format!("{builder:?}").contains("proxy-secret"));
    }

    #[test]
    fn base_url_loses_its_trailing_slash() {
        let client = Client::builder().api_key("k").base_url("http://localhost:9/proxy/").build().unwrap();
        assert_eq!(client.base_url(), "http://localhost:9/proxy");
        assert_eq!(client.transport.endpoint(), "http://localhost:9/proxy/v1/messages");
    }
}
