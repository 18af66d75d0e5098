//! What a model answered: [`Reply`], the same for every backend.

use serde::{Deserialize, Serialize};

use crate::Usage;

/// What a model answered, with the tokens it spent and, where the backend
/// gives them, the response's id, the model that answered and why it
/// stopped. Built with [`Reply::new`] and its shorthands (it is
/// `#[non_exhaustive]`: fields are added as backends report more).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reply {
    /// The answer.
    pub content: ReplyContent,
    /// Tokens spent by this call.
    pub usage: Usage,
    /// The response's id (`msg_...`, `chatcmpl-...`), when the API sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The model that answered, as the API named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Why the model stopped, as the API said it (`tool_use`, `end_turn`,
    /// `max_tokens`, `stop`, `tool_calls`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

/// The kinds of answer real models give.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
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
    #[serde(serialize_with = "text::serialize", deserialize_with = "text::deserialize")]
    Text(String),
    /// The model declined to answer.
    Refusal {
        /// Any text the model gave.
        text: String,
        /// The API's `stop_details`, kept as sent.
        details: Option<serde_json::Value>,
    },
    /// A streamed output stopped early: a finished value already failed a
    /// check no later output could change, and the request was cancelled
    /// (see `Extractor::stop_early`). Its usage is estimated: an API reports
    /// none for a stream it did not finish. A run of a derived type judges it
    /// again from `partial`, so a replayed run decides as the first did.
    Stopped {
        /// The tool called, when known.
        name: Option<String>,
        /// The output's JSON text as far as it had arrived.
        partial: String,
        /// The violation that stopped it, as a person reads it.
        stopped_by: String,
    },
    /// The output was cut off before it was complete.
    Truncated {
        /// Which limit cut it off.
        limit: Truncation,
        /// Whatever partial output there was.
        partial: Option<String>,
    },
}

/// [`ReplyContent::Text`] as `{"kind": "text", "text": ...}`: a variant
/// tagged inside its content must serialize as a map, which a bare string is not.
mod text {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Text<S> {
        text: S,
    }

    pub fn serialize<S: Serializer>(text: &str, serializer: S) -> Result<S::Ok, S::Error> {
        Text { text }.serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
        Text::<String>::deserialize(deserializer).map(|t| t.text)
    }
}

/// Which limit cut an output off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Truncation {
    /// The `max_tokens` of the request.
    MaxTokens,
    /// The model's context window: the document is too large.
    ContextWindow,
}

impl Reply {
    /// A reply with `content` and zero usage.
    pub fn new(content: ReplyContent) -> Reply {
        Reply { content, usage: Usage::default(), id: None, model: None, stop_reason: None }
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

    /// A streamed output stopped early after `partial`, by the violation `stopped_by`.
    pub fn stopped(partial: impl Into<String>, stopped_by: impl Into<String>) -> Reply {
        Reply::new(ReplyContent::Stopped {
            name: None,
            partial: partial.into(),
            stopped_by: stopped_by.into(),
        })
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

    /// The same reply with what the response said of itself: its id, the
    /// model that answered, and why it stopped (each where the API sent it).
    pub fn with_response(
        mut self,
        id: Option<String>,
        model: Option<String>,
        stop_reason: Option<String>,
    ) -> Reply {
        self.id = id;
        self.model = model;
        self.stop_reason = stop_reason;
        self
    }
}

impl From<serde_json::Value> for Reply {
    /// A call of the requested tool with this input.
    fn from(input: serde_json::Value) -> Reply {
        Reply::tool_call(input)
    }
}
