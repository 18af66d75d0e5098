//! Replies of `POST /v1/messages`, mapped to a [`Reply`], and error bodies,
//! mapped to what the retry policy and [`Error::Api`] need.
//!
//! - `stop_reason: "refusal"` is a refusal, with `stop_details` kept as sent;
//! - `"max_tokens"` and `"model_context_window_exceeded"` are truncated replies;
//! - otherwise a `tool_use` block is a tool call, and no `tool_use` is the
//!   text of the reply (the runtime reads it as `no_tool_call`; with JSON
//!   outputs, as the input's JSON text).
//!
//! Blocks the client does not use (`thinking`, `redacted_thinking`, ...) are skipped.

use serde::Deserialize;
use serde_json::Value;

use super::builder::Mode;
use crate::vocabulary::usage::wire_count;
use crate::{Error, Reply, ReplyContent, Truncation, Usage};
use extract_drive::http::transport::{ApiError, body_prefix};

#[derive(Deserialize, Default, Clone)]
pub(crate) struct Message {
    #[serde(default)]
    pub(crate) id: Option<String>,
    #[serde(default)]
    pub(crate) model: Option<String>,
    pub(crate) content: Vec<Block>,
    #[serde(default)]
    pub(crate) stop_reason: Option<String>,
    #[serde(default)]
    pub(crate) stop_details: Option<Value>,
    #[serde(default)]
    pub(crate) usage: Option<WireUsage>,
}

#[derive(Deserialize, Clone)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Block {
    Text {
        text: String,
    },
    ToolUse {
        name: String,
        input: Value,
    },
    /// A streamed tool call whose input's text is not whole JSON (cut by
    /// the output limit, or malformed): never in a response body.
    #[serde(skip)]
    ToolUseText {
        name: String,
        json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default, Clone, Copy)]
pub(crate) struct WireUsage {
    #[serde(default, deserialize_with = "wire_count")]
    pub(crate) input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "wire_count")]
    pub(crate) output_tokens: Option<u64>,
    #[serde(default, deserialize_with = "wire_count")]
    pub(crate) cache_creation_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "wire_count")]
    pub(crate) cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    /// These counts, with those `later` states in their place (a stream's
    /// `message_delta` restates some of `message_start`'s).
    pub(crate) fn updated(self, later: WireUsage) -> WireUsage {
        WireUsage {
            input_tokens: later.input_tokens.or(self.input_tokens),
            output_tokens: later.output_tokens.or(self.output_tokens),
            cache_creation_input_tokens: later
                .cache_creation_input_tokens
                .or(self.cache_creation_input_tokens),
            cache_read_input_tokens: later.cache_read_input_tokens.or(self.cache_read_input_tokens),
        }
    }
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Usage {
        Usage::new(u.input_tokens.unwrap_or(0), u.output_tokens.unwrap_or(0))
            .with_cache(u.cache_read_input_tokens.unwrap_or(0), u.cache_creation_input_tokens.unwrap_or(0))
    }
}

/// The reply in a successful response body. With JSON outputs
/// ([`Mode::JsonSchema`]) the text is the input, as raw JSON text for the
/// syntax layer to parse.
pub(crate) fn reply(body: &[u8], tool: &str, mode: Mode) -> Result<Reply, Error> {
    let message: Message = serde_json::from_slice(body).map_err(|e| {
        Error::invalid_response(format!(
            "the Messages API returned a body that is not a message ({e}); it begins: {}",
            body_prefix(body)
        ))
    })?;
    Ok(message.reply(tool, mode))
}

/// A tool call's input: parsed, or (streamed) text that is not whole JSON.
enum Input {
    Parsed(Value),
    Text(String),
}

impl Message {
    /// The reply this message is, read for the requested `tool` in `mode`
    /// (a response body's, or a stream's once it ended).
    pub(crate) fn reply(self, tool: &str, mode: Mode) -> Reply {
        let usage = self.usage.map(Usage::from).unwrap_or_default();

        let mut texts = Vec::new();
        let mut calls = Vec::new();
        for block in self.content {
            match block {
                Block::Text { text } => texts.push(text),
                Block::ToolUse { name, input } => calls.push((name, Input::Parsed(input))),
                Block::ToolUseText { name, json } => calls.push((name, Input::Text(json))),
                Block::Other => {}
            }
        }
        let text = texts.join("\n");
        // The call of the requested tool, else the first call.
        let call = match calls.iter().position(|(name, _)| name == tool) {
            Some(i) => Some(calls.swap_remove(i)),
            None => calls.into_iter().next(),
        };

        let response = (self.id, self.model, self.stop_reason.clone());
        let content = match self.stop_reason.as_deref() {
            Some("refusal") => ReplyContent::Refusal { text, details: self.stop_details },
            Some(reason @ ("max_tokens" | "model_context_window_exceeded")) => {
                let limit =
                    if reason == "max_tokens" { Truncation::MaxTokens } else { Truncation::ContextWindow };
                let partial = match call {
                    Some((_, Input::Parsed(input))) => Some(input.to_string()),
                    Some((_, Input::Text(json))) => Some(json),
                    None => (!text.is_empty()).then_some(text),
                };
                ReplyContent::Truncated { limit, partial }
            }
            _ => match call {
                Some((name, Input::Parsed(input))) => ReplyContent::ToolCall { name: Some(name), input },
                Some((name, Input::Text(json))) => ReplyContent::ToolCallText { name: Some(name), json },
                None if mode == Mode::JsonSchema => ReplyContent::ToolCallText { name: None, json: text },
                None => ReplyContent::Text(text),
            },
        };
        Reply::new(content).with_usage(usage).with_response(response.0, response.1, response.2)
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorObject,
    #[serde(default)]
    request_id: Option<String>,
}

#[derive(Deserialize)]
struct ErrorObject {
    #[serde(rename = "type")]
    error_type: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    details: Option<Value>,
}

/// The error in an error response body. Never fails: a body that is not the
/// API's error shape (a proxy's HTML page, say) is described by its start.
pub(crate) fn api_error(status: u16, body: &[u8]) -> ApiError {
    match serde_json::from_slice::<ErrorBody>(body) {
        Ok(parsed) => ApiError {
            error_code: parsed
                .error
                .details
                .as_ref()
                .and_then(|d| d.get("error_code"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            error_type: parsed.error.error_type,
            message: parsed.error.message,
            request_id: parsed.request_id,
            param: None,
        },
        Err(_) => ApiError::unparsed(status, body),
    }
}

/// Whether this error is a 400 saying the forced `tool_choice` is not accepted.
pub(crate) fn rejects_forced_tool_choice(error: &ApiError, status: u16) -> bool {
    let message = error.message.to_ascii_lowercase();
    status == 400
        && (message.contains("tool_choice")
            || message.contains("tool choice")
            || message.contains("forced tool")
            || message.contains("forcing a tool"))
}

/// The HTTP status the Messages API gives an error type: for a batch's
/// errored result and an `error` event mid-stream, which state no status.
pub(crate) fn status_of(error_type: &str) -> u16 {
    match error_type {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        _ => 500,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(body: Value) -> Reply {
        reply(body.to_string().as_bytes(), "record", Mode::Tool).unwrap()
    }

    #[test]
    fn tool_use_becomes_a_named_tool_call_and_usage_maps() {
        let reply = parse(json!({
            "content": [
                {"type": "thinking", "thinking": "", "signature": "x"},
                {"type": "text", "text": "Here it is."},
                {"type": "tool_use", "id": "t1", "name": "record", "input": {"a": 1}}
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "output_tokens": 20,
                      "cache_creation_input_tokens": 30, "cache_read_input_tokens": 40}
        }));
        assert_eq!(
            reply.content,
            ReplyContent::ToolCall { name: Some("record".into()), input: json!({"a": 1}) }
        );
        assert_eq!(reply.usage, Usage::new(10, 20).with_cache(40, 30));
    }

    #[test]
    fn the_requested_tool_wins_over_another_call() {
        let reply = parse(json!({
            "content": [
                {"type": "tool_use", "id": "t1", "name": "other", "input": {}},
                {"type": "tool_use", "id": "t2", "name": "record", "input": {"b": 2}}
            ],
            "stop_reason": "tool_use"
        }));
        assert_eq!(
            reply.content,
            ReplyContent::ToolCall { name: Some("record".into()), input: json!({"b": 2}) }
        );
        assert_eq!(reply.usage, Usage::default());
    }

    #[test]
    fn text_only_is_text_and_null_cache_counts_are_zero() {
        let reply = parse(json!({
            "content": [{"type": "text", "text": "I cannot"}, {"type": "text", "text": "find it."}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 2,
                      "cache_creation_input_tokens": null, "cache_read_input_tokens": null}
        }));
        assert_eq!(reply.content, ReplyContent::Text("I cannot\nfind it.".into()));
        assert_eq!(reply.usage, Usage::new(1, 2));
    }

    #[test]
    fn stop_reasons_map_to_refusal_and_truncation() {
        let refusal = parse(json!({
            "content": [{"type": "text", "text": "No."}],
            "stop_reason": "refusal",
            "stop_details": {"type": "refusal", "category": "cyber"}
        }));
        assert_eq!(
            refusal.content,
            ReplyContent::Refusal {
                text: "No.".into(),
                details: Some(json!({"type": "refusal", "category": "cyber"}))
            }
        );
        let cut = parse(json!({
            "content": [{"type": "tool_use", "id": "t", "name": "record", "input": {"a": "par"}}],
            "stop_reason": "max_tokens"
        }));
        assert_eq!(
            cut.content,
            ReplyContent::Truncated { limit: Truncation::MaxTokens, partial: Some("{\"a\":\"par\"}".into()) }
        );
        let window = parse(json!({"content": [], "stop_reason": "model_context_window_exceeded"}));
        assert_eq!(
            window.content,
            ReplyContent::Truncated { limit: Truncation::ContextWindow, partial: None }
        );
    }

    #[test]
    fn a_body_that_is_not_a_message_is_an_invalid_response() {
        let err = reply(b"<html>502 Bad Gateway</html>", "record", Mode::Tool).unwrap_err();
        assert!(matches!(err, Error::InvalidResponse(_)), "{err:?}");
        assert!(err.to_string().contains("<html>502 Bad Gateway</html>"), "{err}");
        let err = reply(br#"{"type":"message"}"#, "record", Mode::Tool).unwrap_err();
        assert!(matches!(err, Error::InvalidResponse(_)), "{err:?}");
    }

    #[test]
    fn error_bodies_give_type_message_code_and_request_id() {
        let body = json!({
            "type": "error",
            "error": {"type": "rate_limit_error", "message": "spend cap",
                      "details": {"error_code": "enforced_spend_limit_reached"}},
            "request_id": "req_1"
        });
        let error = api_error(429, body.to_string().as_bytes());
        assert_eq!(error.error_type, "rate_limit_error");
        assert_eq!(error.message, "spend cap");
        assert_eq!(error.error_code.as_deref(), Some("enforced_spend_limit_reached"));
        assert_eq!(error.request_id.as_deref(), Some("req_1"));

        let html = api_error(502, b"<h1>Bad gateway</h1>");
        assert_eq!(html.error_type, "http_error");
        assert_eq!(html.message, "HTTP 502: <h1>Bad gateway</h1>");
        assert_eq!(api_error(503, b"").message, "HTTP 503 with an empty body");
    }

    #[test]
    fn long_bodies_are_quoted_by_a_short_prefix() {
        let long = "x".repeat(10_000);
        let error = api_error(500, long.as_bytes());
        assert!(error.message.chars().count() < 220, "{}", error.message.len());
        assert!(error.message.ends_with('…'));
    }

    #[test]
    fn only_a_400_about_tool_choice_is_a_forced_choice_rejection() {
        let about = |message: &str| ApiError {
            error_type: "invalid_request_error".into(),
            message: message.into(),
            error_code: None,
            request_id: None,
            param: None,
        };
        let rejection = about("tool_choice.type: \"tool\" is not supported for this model");
        assert!(rejects_forced_tool_choice(&rejection, 400));
        assert!(!rejects_forced_tool_choice(&rejection, 500));
        assert!(rejects_forced_tool_choice(&about("Forced tool use is not supported with this model"), 400));
        assert!(!rejects_forced_tool_choice(&about("max_tokens: must be positive"), 400));
    }
}
