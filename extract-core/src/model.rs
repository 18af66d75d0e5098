//! The one trait a model backend implements: [`Model`], and what it returns: [`Reply`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::{Error, Prompt, Usage};

/// The future a [`Model`] call returns. It is `Send`, so extractions can be spawned.
pub type ModelFuture<'a> = Pin<Box<dyn Future<Output = Result<Reply, Error>> + Send + 'a>>;

/// A model backend: one async call from a [`Prompt`] to a [`Reply`].
///
/// Usable as `Box<dyn Model>` or `Arc<dyn Model>`, so a program can pick an
/// offline or live model at run time.
///
/// ```
/// use extract::{Model, ModelFuture, Prompt, Reply};
///
/// /// Always answers with an empty object.
/// struct Empty;
///
/// impl Model for Empty {
///     fn call<'a>(&'a self, _prompt: &'a Prompt) -> ModelFuture<'a> {
///         Box::pin(async { Ok(Reply::tool_call(serde_json::json!({}))) })
///     }
/// }
///
/// let model: Box<dyn Model> = Box::new(Empty);
/// # let _ = model;
/// ```
pub trait Model: Send + Sync {
    /// Sends one prompt and returns the model's reply. `Err` only for
    /// transport and configuration failures; a bad answer is still a `Reply`.
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a>;
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        (**self).call(prompt)
    }
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        (**self).call(prompt)
    }
}

impl<M: Model + ?Sized> Model for &M {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        (**self).call(prompt)
    }
}

/// What a model answered, with the tokens it spent.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The answer.
    pub content: ReplyContent,
    /// Tokens spent by this call.
    pub usage: Usage,
}

/// The kinds of answer real models give.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyContent {
    /// A call of a tool with parsed input. `name: None` means "the tool that was asked for".
    ToolCall {
        /// The tool called, when known.
        name: Option<String>,
        /// The tool input.
        input: serde_json::Value,
    },
    /// A call of a tool whose input is raw JSON text, parsed by the syntax layer
    /// (a parse failure is an `invalid_json` violation).
    ToolCallText {
        /// The tool called, when known.
        name: Option<String>,
        /// The raw input text.
        json: String,
    },
    /// Text and no tool call.
    Text(String),
    /// The model declined to answer.
    Refusal {
        /// Any text the model gave.
        text: String,
        /// The API's `stop_details`, kept as sent.
        details: Option<serde_json::Value>,
    },
    /// The output was cut off before it was complete.
    Truncated {
        /// Which limit cut it off.
        limit: Truncation,
        /// Whatever partial output there was.
        partial: Option<String>,
    },
}

/// Which limit cut an output off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Truncation {
    /// The `max_tokens` of the request.
    MaxTokens,
    /// The model's context window: the document is too large.
    ContextWindow,
}

impl Reply {
    /// A reply with `content` and zero usage.
    pub fn new(content: ReplyContent) -> Reply {
        Reply { content, usage: Usage::default() }
    }

    /// A call of the requested tool with `input`.
    pub fn tool_call(input: serde_json::Value) -> Reply {
        Reply::new(ReplyContent::ToolCall { name: None, input })
    }

    /// A call of the tool `name` with `input`.
    pub fn named_tool_call(name: impl Into<String>, input: serde_json::Value) -> Reply {
        Reply::new(ReplyContent::ToolCall { name: Some(name.into()), input })
    }

    /// A call of the requested tool whose input is raw JSON text.
    pub fn tool_call_text(json: impl Into<String>) -> Reply {
        Reply::new(ReplyContent::ToolCallText { name: None, json: json.into() })
    }

    /// Text with no tool call.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::new(ReplyContent::Text(text.into()))
    }

    /// A refusal.
    pub fn refusal(text: impl Into<String>) -> Reply {
        Reply::new(ReplyContent::Refusal { text: text.into(), details: None })
    }

    /// Output cut off by `max_tokens`.
    pub fn truncated() -> Reply {
        Reply::new(ReplyContent::Truncated { limit: Truncation::MaxTokens, partial: None })
    }

    /// A document too large for the model's context window.
    pub fn context_exceeded() -> Reply {
        Reply::new(ReplyContent::Truncated { limit: Truncation::ContextWindow, partial: None })
    }

    /// The same reply with `usage`.
    pub fn with_usage(mut self, usage: Usage) -> Reply {
        self.usage = usage;
        self
    }
}

impl From<serde_json::Value> for Reply {
    /// A call of the requested tool with this input.
    fn from(input: serde_json::Value) -> Reply {
        Reply::tool_call(input)
    }
}
