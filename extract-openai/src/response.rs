//! Replies of `POST {base}/chat/completions`, mapped to a [`Reply`], and
//! error bodies, mapped to what the retry policy and [`Error::Api`] need.
//!
//! From `choices[0]`, in this order:
//!
//! - a non-empty `message.refusal` is a refusal; so is `finish_reason:
//!   "content_filter"` (with `{"finish_reason": "content_filter"}` as its details);
//! - `"length"` is a reply cut off by the token limit, keeping the partial
//!   arguments (or text);
//! - otherwise a function call, whatever the `finish_reason` (`"tool_calls"`,
//!   or `"stop"` as some servers send), is a call of that tool: the call of
//!   the requested tool if there is one, else the first call, its
//!   `arguments` kept as raw JSON text for the syntax layer to parse;
//! - with no call, the text (`content`) is the reply's text, or, in
//!   [`Mode::JsonSchema`], the raw JSON text of the requested tool's input.

use serde::Deserialize;
use serde_json::{Value, json};

use super::builder::Mode;
use crate::vocabulary::usage::wire_count;
use crate::{Error, Reply, ReplyContent, Truncation, Usage};
use extract_drive::http::transport::{ApiError, body_prefix};

#[derive(Deserialize, Default)]
pub(crate) struct Completion {
    #[serde(default)]
    pub(crate) id: Option<String>,
    #[serde(default)]
    pub(crate) model: Option<String>,
    #[serde(default)]
    pub(crate) choices: Option<Vec<Choice>>,
    #[serde(default)]
    pub(crate) usage: Option<WireUsage>,
}

#[derive(Deserialize, Default)]
pub(crate) struct Choice {
    #[serde(default)]
    pub(crate) message: Option<Message>,
    #[serde(default)]
    pub(crate) finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
pub(crate) struct Message {
    /// A string, or (from some servers) a list of text parts.
    #[serde(default)]
    pub(crate) content: Option<Value>,
    #[serde(default)]
    pub(crate) refusal: Option<String>,
    #[serde(default)]
    pub(crate) tool_calls: Option<Vec<ToolCall>>,
}

#[derive(Deserialize)]
pub(crate) struct ToolCall {
    /// Absent for calls that are not function calls (`"type": "custom"`).
    #[serde(default)]
    pub(crate) function: Option<FunctionCall>,
}

#[derive(Deserialize)]
pub(crate) struct FunctionCall {
    #[serde(default)]
    pub(crate) name: Option<String>,
    /// A JSON string per the API; some servers send the object itself.
    #[serde(default)]
    pub(crate) arguments: Option<Value>,
}

#[derive(Deserialize, Clone)]
pub(crate) struct WireUsage {
    #[serde(default, deserialize_with = "wire_count")]
    prompt_tokens: Option<u64>,
    #[serde(default, deserialize_with = "wire_count")]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize, Clone)]
struct PromptDetails {
    #[serde(default, deserialize_with = "wire_count")]
    cached_tokens: Option<u64>,
}

impl From<WireUsage> for Usage {
    /// `prompt_tokens` includes the cached tokens: they are split out, so
    /// `input_tokens` is the uncached input, as for every backend.
    fn from(u: WireUsage) -> Usage {
        let cached = u.prompt_tokens_details.and_then(|d| d.cached_tokens).unwrap_or(0);
        let prompt = u.prompt_tokens.unwrap_or(0);
        Usage::new(prompt.saturating_sub(cached), u.completion_tokens.unwrap_or(0)).with_cache(cached, 0)
    }
}

/// A function call as the reply carries it: the tool's name and its input,
/// raw text or (from servers that send it so) a JSON value.
enum Input {
    Text(String),
    Value(Value),
}

impl Input {
    fn of(arguments: Option<Value>) -> Input {
        match arguments {
            Some(Value::String(text)) => Input::Text(text),
            // No arguments at all: an empty input, which the layers judge.
            None | Some(Value::Null) => Input::Value(json!({})),
            Some(value) => Input::Value(value),
        }
    }

    fn into_text(self) -> String {
        match self {
            Input::Text(text) => text,
            Input::Value(value) => value.to_string(),
        }
    }
}

/// The text of `content`: a string, or the text parts of a list joined.
fn content_text(content: Option<Value>) -> String {
    match content {
        Some(Value::String(text)) => text,
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str).or_else(|| part.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The reply in a successful response body.
pub(crate) fn reply(body: &[u8], tool: &str, mode: Mode) -> Result<Reply, Error> {
    let completion: Completion = serde_json::from_slice(body).map_err(|e| {
        Error::invalid_response(format!(
            "the Chat Completions API returned a body that is not a chat completion ({e}); it begins: {}",
            body_prefix(body)
        ))
    })?;
    completion.reply(tool, mode).ok_or_else(|| {
        Error::invalid_response(format!(
            "the Chat Completions API returned no choices; the body begins: {}",
            body_prefix(body)
        ))
    })
}

impl Completion {
    /// The reply this completion is, read for the requested `tool` in
    /// `mode` (a response body's, or a stream's once it ended); `None`
    /// without a choice.
    pub(crate) fn reply(self, tool: &str, mode: Mode) -> Option<Reply> {
        let usage = self.usage.map(Usage::from).unwrap_or_default();
        let choice = self.choices.unwrap_or_default().into_iter().next()?;
        let response = (self.id, self.model, choice.finish_reason.clone());
        let message = choice.message.unwrap_or_default();
        let text = content_text(message.content);
        let mut calls: Vec<(String, Input)> = message
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .filter_map(|call| call.function)
            .map(|f| (f.name.unwrap_or_default(), Input::of(f.arguments)))
            .collect();
        // The call of the requested tool, else the first call.
        let call = match calls.iter().position(|(name, _)| name == tool) {
            Some(i) => Some(calls.swap_remove(i)),
            None => calls.into_iter().next(),
        };

        let refusal = message.refusal.filter(|r| !r.trim().is_empty());
        let content = match (refusal, choice.finish_reason.as_deref()) {
            (Some(refusal), _) => ReplyContent::Refusal { text: refusal, details: None },
            (None, Some("content_filter")) => {
                ReplyContent::Refusal { text, details: Some(json!({ "finish_reason": "content_filter" })) }
            }
            (None, Some("length")) => {
                let partial = match call {
                    Some((_, input)) => Some(input.into_text()),
                    None => (!text.is_empty()).then_some(text),
                };
                ReplyContent::Truncated { limit: Truncation::MaxTokens, partial }
            }
            (None, _) => match (call, mode) {
                (Some((name, Input::Text(json))), _) => ReplyContent::ToolCallText { name: Some(name), json },
                (Some((name, Input::Value(input))), _) => ReplyContent::ToolCall { name: Some(name), input },
                (None, Mode::JsonSchema) => ReplyContent::ToolCallText { name: None, json: text },
                (None, Mode::Tool) => ReplyContent::Text(text),
            },
        };
        Some(Reply::new(content).with_usage(usage).with_response(response.0, response.1, response.2))
    }
}

/// The error in an error response body. Never fails: a body that is not an
/// error shape this API or a compatible server uses (a proxy's HTML page,
/// say) is described by its start.
///
/// Shapes read: `{"error": {"message", "type", "code", "param"}}` (OpenAI,
/// Ollama, llama.cpp, current vLLM; `code` may be a string or a number),
/// `{"error": "message"}`, and the bare `{"message", "type", "code"}` of
/// older vLLM.
pub(crate) fn api_error(status: u16, body: &[u8]) -> ApiError {
    let Ok(Value::Object(root)) = serde_json::from_slice::<Value>(body) else {
        return ApiError::unparsed(status, body);
    };
    let error = match root.get("error") {
        Some(Value::Object(error)) => error,
        Some(Value::String(message)) => {
            return ApiError {
                error_type: "error".into(),
                message: message.clone(),
                error_code: None,
                request_id: None,
                param: None,
            };
        }
        _ if root.contains_key("message") => &root,
        _ => return ApiError::unparsed(status, body),
    };
    let string =
        |key: &str| error.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
    let code = string("code");
    ApiError {
        error_type: string("type").or_else(|| code.clone()).unwrap_or_else(|| "error".into()),
        message: string("message").unwrap_or_default(),
        error_code: code,
        request_id: None,
        param: string("param"),
    }
}

/// Whether this error is a server refusing the request's `tool_choice`: a
/// 400 (or the 422 of servers that validate with pydantic) whose `param` is
/// `tool_choice` or whose message names it.
pub(crate) fn rejects_tool_choice(error: &ApiError, status: u16) -> bool {
    let message = error.message.to_ascii_lowercase();
    matches!(status, 400 | 422)
        && (error.param.as_deref().is_some_and(|p| p.starts_with("tool_choice"))
            || message.contains("tool_choice")
            || message.contains("tool choice"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: Value, mode: Mode) -> Reply {
        reply(body.to_string().as_bytes(), "record", mode).unwrap()
    }

    fn completion(message: Value, finish_reason: &str) -> Value {
        json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                      "prompt_tokens_details": {"cached_tokens": 64}}
        })
    }

    fn call(name: &str, arguments: Value) -> Value {
        json!({"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}})
    }

    #[test]
    fn token_counts_past_u64_max_saturate_instead_of_breaking_the_reply() {
        let mut body = completion(json!({"role": "assistant", "content": "{}"}), "stop");
        let huge = r#"{"prompt_tokens": 1e30, "completion_tokens": 18446744073709551616,
                       "prompt_tokens_details": {"cached_tokens": 18446744073709551615}}"#;
        body["usage"] = serde_json::from_str(huge).unwrap();
        let reply = parse(body, Mode::JsonSchema);
        // The cache is split out of the prompt tokens: MAX - MAX uncached.
        assert_eq!(reply.usage, Usage::new(0, u64::MAX).with_cache(u64::MAX, 0));
        assert_eq!(reply.usage.total(), u64::MAX);
    }

    #[test]
    fn a_tool_call_keeps_its_arguments_as_text_and_usage_splits_the_cache() {
        let reply = parse(
            completion(
                json!({"role": "assistant", "content": null, "tool_calls": [call("record", json!("{\"a\":1}"))]}),
                "tool_calls",
            ),
            Mode::Tool,
        );
        assert_eq!(
            reply.content,
            ReplyContent::ToolCallText { name: Some("record".into()), json: "{\"a\":1}".into() }
        );
        assert_eq!(reply.usage, Usage::new(36, 20).with_cache(64, 0));
        assert_eq!(reply.usage.total(), 120);
    }

    #[test]
    fn stop_with_tool_calls_is_a_call_and_the_requested_tool_wins() {
        let reply = parse(
            completion(
                json!({"role": "assistant", "content": "Here.", "tool_calls": [
                    call("other", json!("{}")), call("record", json!({"b": 2}))
                ]}),
                "stop",
            ),
            Mode::Tool,
        );
        assert_eq!(
            reply.content,
            ReplyContent::ToolCall { name: Some("record".into()), input: json!({"b": 2}) }
        );
        let other =
            parse(completion(json!({"tool_calls": [call("other", json!("{}"))]}), "tool_calls"), Mode::Tool);
        assert_eq!(
            other.content,
            ReplyContent::ToolCallText { name: Some("other".into()), json: "{}".into() }
        );
    }

    #[test]
    fn text_refusals_filters_and_length() {
        let text = parse(completion(json!({"content": "The total is 5."}), "stop"), Mode::Tool);
        assert_eq!(text.content, ReplyContent::Text("The total is 5.".into()));
        let refusal = parse(completion(json!({"content": null, "refusal": "I can't."}), "stop"), Mode::Tool);
        assert_eq!(refusal.content, ReplyContent::Refusal { text: "I can't.".into(), details: None });
        let filtered = parse(completion(json!({"content": ""}), "content_filter"), Mode::JsonSchema);
        assert_eq!(
            filtered.content,
            ReplyContent::Refusal {
                text: String::new(),
                details: Some(json!({"finish_reason": "content_filter"}))
            }
        );
        let cut = parse(
            completion(json!({"tool_calls": [call("record", json!("{\"a\": \"par"))]}), "length"),
            Mode::Tool,
        );
        assert_eq!(
            cut.content,
            ReplyContent::Truncated { limit: Truncation::MaxTokens, partial: Some("{\"a\": \"par".into()) }
        );
        let empty = parse(completion(json!({"content": ""}), "length"), Mode::Tool);
        assert_eq!(empty.content, ReplyContent::Truncated { limit: Truncation::MaxTokens, partial: None });
    }

    #[test]
    fn json_schema_mode_reads_the_content_as_the_input() {
        let reply = parse(completion(json!({"content": "{\"a\": 1}"}), "stop"), Mode::JsonSchema);
        assert_eq!(reply.content, ReplyContent::ToolCallText { name: None, json: "{\"a\": 1}".into() });
        let parts =
            parse(completion(json!({"content": [{"type": "text", "text": "{}"}]}), "stop"), Mode::JsonSchema);
        assert_eq!(parts.content, ReplyContent::ToolCallText { name: None, json: "{}".into() });
    }

    #[test]
    fn missing_usage_is_zero_and_bad_bodies_are_invalid_responses() {
        let reply =
            parse(json!({"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}]}), Mode::Tool);
        assert_eq!(reply.usage, Usage::default());
        for body in [&b"<html>502</html>"[..], br#"{"choices": []}"#, br#"{"object": "chat.completion"}"#] {
            let err = reply_err(body);
            assert!(matches!(err, Error::InvalidResponse(_)), "{err:?}");
        }
    }

    fn reply_err(body: &[u8]) -> Error {
        reply(body, "record", Mode::Tool).unwrap_err()
    }

    #[test]
    fn error_bodies_of_every_compatible_server() {
        let openai = api_error(
            429,
            json!({"error": {"message": "You exceeded your current quota.", "type": "insufficient_quota",
                             "param": null, "code": "insufficient_quota"}})
            .to_string()
            .as_bytes(),
        );
        assert_eq!(openai.error_type, "insufficient_quota");
        assert_eq!(openai.error_code.as_deref(), Some("insufficient_quota"));
        assert_eq!(openai.message, "You exceeded your current quota.");
        let llama =
            api_error(400, br#"{"error": {"code": 400, "message": "bad", "type": "invalid_request_error"}}"#);
        assert_eq!((llama.error_type.as_str(), llama.error_code.as_deref()), ("invalid_request_error", None));
        let vllm = api_error(
            400,
            br#"{"object": "error", "message": "old vllm", "type": "BadRequestError", "code": 400}"#,
        );
        assert_eq!((vllm.error_type.as_str(), vllm.message.as_str()), ("BadRequestError", "old vllm"));
        let plain = api_error(404, br#"{"error": "model 'x' not found"}"#);
        assert_eq!(plain.message, "model 'x' not found");
        let html = api_error(502, b"<h1>Bad gateway</h1>");
        assert_eq!(
            (html.error_type.as_str(), html.message.as_str()),
            ("http_error", "HTTP 502: <h1>Bad gateway</h1>")
        );
    }

    #[test]
    fn only_a_400_about_tool_choice_refuses_it() {
        let about = |message: &str, param: Option<&str>| ApiError {
            error_type: "invalid_request_error".into(),
            message: message.into(),
            error_code: None,
            request_id: None,
            param: param.map(str::to_owned),
        };
        assert!(rejects_tool_choice(&about("Invalid value for 'tool_choice'", None), 400));
        assert!(rejects_tool_choice(&about("Invalid value: 'function'.", Some("tool_choice")), 400));
        assert!(rejects_tool_choice(&about("named tool choice is not supported", None), 422));
        assert!(!rejects_tool_choice(&about("tool_choice is broken", None), 500));
        assert!(!rejects_tool_choice(&about("max_tokens is too large", Some("max_tokens")), 400));
    }
}
